"""The engine process as seen from the UI: start it, send commands, read events, notice its death.

The engine (`python -m breadth.core.engine.loop`) runs in a child process so that importing torch and training
never hold the UI's GIL, and a crash there cannot take the UI down. Messages are JSON lines on its
stdin and stdout; its stderr goes to a log file, since the UI owns the terminal. End of file on its
stdout means it died, so a dead engine never hangs the app. The log is shared by the engines of a
session; an engine's last words are read only from what it wrote itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from breadth.core.engine import protocol as p
from breadth.core.storage.paths import LOG_LIMIT, data_dir

LAST_WORDS_WINDOW = 64_000  # bytes at the end of the log searched for an engine's last line


def engine_log() -> Path:
    """Where the engine process writes its stderr (the app's engines append to it)."""
    return data_dir() / "engine.log"


class EngineGone(Exception):
    """The engine process is not running."""

    def __init__(self, exitcode: int | None, last_words: str = ""):
        super().__init__(f"engine process ended (exit code {exitcode})")
        self.exitcode = exitcode
        self.last_words = last_words  # the last line it wrote to its log, if any


class EngineProcess:
    """One engine process and its pipes."""

    def __init__(self, log_path: str | os.PathLike | None = None) -> None:
        self.log_path = Path(log_path) if log_path else None
        self._proc: subprocess.Popen | None = None
        self._log_start = 0  # the log's size when this engine started: its own words come after

    def start(self) -> None:
        """Launch the process; it answers Ready once torch is imported."""
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE", "PYTHONUNBUFFERED": "1"}
        log = subprocess.DEVNULL
        if self.log_path is not None:
            try:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                big = self.log_path.exists() and self.log_path.stat().st_size > LOG_LIMIT
                log = self.log_path.open("wb" if big else "ab")  # keep earlier engines' words, within a bound
                self._log_start = log.tell()
            except OSError:
                self.log_path = None  # an unwritable home must not stop the engine: run without a log
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "breadth.core.engine.loop"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                text=True,
                bufsize=1,
                start_new_session=True,
            )  # Ctrl-C in the terminal reaches only the UI
        finally:
            if log is not subprocess.DEVNULL:
                log.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def send(self, command) -> bool:
        """Write a command; False if the engine is gone (its death is reported by `read`)."""
        if not self.alive():
            return False
        try:
            self._proc.stdin.write(p.encode(command) + "\n")
            self._proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def read(self):
        """Block for the next event; raises EngineGone when the engine's output ends."""
        while True:
            line = self._proc.stdout.readline() if self._proc is not None else ""
            if not line:
                code = self._proc.wait() if self._proc is not None else None
                raise EngineGone(code, self._last_log_line())
            try:
                return p.decode(line)
            except p.ProtocolError:
                continue  # stray output (a library printing to stdout): not ours, skip it

    def close(self, timeout: float = 1.0) -> None:
        """Ask the engine to quit, and kill it if it does not."""
        if self._proc is None:
            return
        if self.alive():
            self.send(p.Quit())
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout)
            except (subprocess.TimeoutExpired, OSError, BrokenPipeError):
                self._proc.kill()
                self._proc.wait(timeout)

    def kill(self) -> None:
        """End the engine at once (to recover from a wedged engine; tests use it too)."""
        if self.alive():
            self._proc.kill()

    def _last_log_line(self) -> str:
        """The last line this engine (not an earlier one) wrote to the log, or ''."""
        if self.log_path is None:
            return ""
        try:
            with self.log_path.open("rb") as log:
                end = log.seek(0, os.SEEK_END)
                log.seek(max(self._log_start, end - LAST_WORDS_WINDOW))
                text = log.read().decode(errors="replace") if end > self._log_start else ""
        except OSError:
            return ""
        lines = text.strip().splitlines()
        return lines[-1][:120] if lines else ""
