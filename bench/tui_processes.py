"""The benchmark's real-terminal side: the app in tmux, its first frame, and every process it starts, killed after."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.tui_common import FIRST_FRAME_TIMEOUT, POLL, ROOT, SHOWN, BenchError


def _ppid(pid: int) -> int | None:
    """The parent of `pid`, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _all_pids() -> list[int]:
    """Every process id visible in /proc."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _tree(root: int) -> list[int]:
    """`root` and all its descendants that are alive."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        parent = _ppid(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if _alive(pid):
            out.append(pid)
        todo += children.get(pid, [])
    return out


def _kill_tree(root: int) -> list[int]:
    """Freeze `root` and its descendants (so none can fork away), then SIGKILL them all; returns their pids.

    The engine runs in its own session (start_new_session=True), so the terminal's hang-up never
    reaches it: it has to be found through the process tree while its parent, the app, still exists.
    """
    frozen: set[int] = set()
    for _ in range(5):  # rescan: a fork in flight when we stopped the parent shows up on the next pass
        new = [pid for pid in _tree(root) if pid not in frozen]
        if not new and frozen:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
                frozen.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    for pid in frozen:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return sorted(frozen)


def _wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    """Wait until none of `pids` is alive; returns those still alive at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in pids if _alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def ours(marker: str) -> list[int]:
    """Processes whose environment holds our unique BREADTH_RUNS (started by this benchmark, nobody else)."""
    needle = f"BREADTH_RUNS={marker}".encode()
    found = []
    for pid in _all_pids():
        if pid == os.getpid():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and _alive(pid):
            found.append(pid)
    return found


def cmdline(pid: int) -> str:
    """The command line of `pid` (empty if gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


# 1. time to first frame


class Tmux:
    """A private tmux server (its own socket) for the benchmark, so no user session is ever touched."""

    def __init__(self, env: dict[str, str]) -> None:
        self.exe = shutil.which("tmux")
        if self.exe is None:
            raise BenchError("tmux is not installed; it is needed to time the first frame in a real terminal")
        self.socket = f"breadth-bench-{os.getpid()}"
        self.env = env

    def __call__(self, *args: str, timeout: float = 5.0) -> str:
        """Run one tmux command on our server; its stdout."""
        try:
            done = subprocess.run(
                [self.exe, "-L", self.socket, "-f", "/dev/null", *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=self.env,
            )
        except subprocess.TimeoutExpired:
            raise BenchError(f"tmux {args[0]} did not answer within {timeout:g}s") from None
        if done.returncode != 0:
            raise BenchError(f"tmux {args[0]} failed: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def start(self) -> None:
        """Start the server with an idle session, so that each timed run does not pay for the server start."""
        self("new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "sleep 3600")

    def stop(self) -> None:
        """Kill our server and everything still running in it."""
        try:
            pid, path = self("display-message", "-p", "-t", "keep", "#{pid} #{socket_path}").strip().split(" ", 1)
        except (BenchError, ValueError):
            pid, path = None, None
        try:
            self("kill-server")
        except BenchError:
            pass
        if pid is not None:
            _wait_gone([int(pid)], 2.0)
        if path and Path(path).name == self.socket:
            Path(path).unlink(missing_ok=True)


def first_frame(tmux: Tmux, run: int) -> tuple[float, list[str]]:
    """Seconds from just before `tmux new-session` running breadth-tui (80x24) until a capture shows the app.

    Returns the time and the command lines of the processes killed afterwards (the app and its engine).
    """
    app_cmd = shlex.quote(str(Path(sys.prefix) / "bin" / "breadth-tui"))
    name = f"ff{run}"
    t0 = time.perf_counter()
    tmux(
        "new-session",
        "-d",
        "-x",
        "80",
        "-y",
        "24",
        "-s",
        name,
        "-c",
        str(ROOT),
        "-e",
        f"BREADTH_RUNS={tmux.env['BREADTH_RUNS']}",
        app_cmd,
    )
    pane = int(tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
    elapsed = None
    deadline = t0 + FIRST_FRAME_TIMEOUT
    while time.perf_counter() < deadline:
        screen = tmux("capture-pane", "-p", "-t", name)
        if all(text in screen for text in SHOWN):
            elapsed = time.perf_counter() - t0
            break
        time.sleep(POLL)
    killed_cmds = [cmdline(pid) for pid in _tree(pane)]
    killed = _kill_tree(pane)
    try:
        tmux("kill-session", "-t", name)
    except BenchError:
        pass  # the session usually ends by itself once its app is gone
    left = _wait_gone(killed)
    if left:
        raise BenchError(f"processes {left} from the first-frame run did not die")
    if elapsed is None:
        tail = " | ".join(line.strip() for line in screen.splitlines() if line.strip())[-160:]
        raise BenchError(f"breadth-tui showed no first frame within {FIRST_FRAME_TIMEOUT:g}s (screen: {tail!r})")
    return elapsed, [c for c in killed_cmds if c]


def bare_import(code: str, env: dict[str, str]) -> float:
    """Wall seconds of one `python -c CODE` in the app's interpreter."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        raise BenchError(f"python -c {code!r} took over 120s") from None
    if done.returncode != 0:
        raise BenchError(f"python -c {code!r} failed: {done.stderr.decode(errors='replace').strip()[-200:]}")
    return time.perf_counter() - t0


# 2 and 3: in the app, with the real engine
