"""The engine process's main loop: `python -m breadth.core.engine.loop` reads JSON commands from stdin in a thread,
hands each to a `Session` and writes its JSON events to stdout, until Quit or until stdin closes.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time

from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session, first_line
from breadth.core.learning.models import Models


def _lines(stdin, limit: int):
    """Lines of `stdin`; a line longer than `limit` is read to its end and given back cut (decode refuses it)."""
    while line := stdin.readline(limit + 1):
        if len(line) > limit and not line.endswith("\n"):
            while (rest := stdin.readline(limit + 1)) and not rest.endswith("\n"):
                pass  # skip the rest of an over-long line without holding it
        yield line


def serve(stdin=None, stdout=None, models: Models | None = None) -> None:
    """The engine process's main loop: JSON commands on stdin, JSON events on stdout, until Quit or EOF.

    `models` defaults to the torch side, imported here (after the reader thread has started) so that
    the time to Ready is the time torch takes.
    """
    start = time.perf_counter()
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    lock = threading.Lock()

    def emit(event) -> None:
        with lock:
            stdout.write(p.encode(event) + "\n")
            stdout.flush()

    commands: queue.Queue = queue.Queue()

    def read_stdin() -> None:  # a thread, so that training can poll for Stop without blocking
        try:
            for line in _lines(stdin, p.MAX_COMMAND):
                try:
                    if line.strip():
                        commands.put(p.decode(line, p.MAX_COMMAND))
                except p.ProtocolError as e:
                    emit(p.Failed("protocol", str(e)))
                except Exception as e:  # noqa: BLE001 -- the reader must never die: later commands would be lost
                    emit(p.Failed("protocol", first_line(e)))
        finally:
            commands.put(p.Quit())  # the UI closed our stdin (or reading failed): it is gone, so is the engine

    threading.Thread(target=read_stdin, daemon=True, name="stdin").start()
    if models is None:
        from breadth.core.learning.experiment import TorchModels  # imports torch

        models = TorchModels()
    session = Session(emit, models, commands)
    emit(p.Ready(time.perf_counter() - start))
    try:
        while True:
            if session.deferred:
                cmd = session.deferred.pop(0)
            else:
                try:  # commands first; background work (scoring snapshots) only when none is waiting
                    cmd = commands.get(block=not session.background)
                except queue.Empty:
                    session.work()
                    continue
            if isinstance(cmd, p.Quit):
                return
            session.handle(cmd)
    except SystemExit:  # Quit arrived during training (`Session.poll`)
        return


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    serve()
