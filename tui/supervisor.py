"""The engine seen from the app: start it, read its events as messages, restart it a few times, enforce a Stop.

A thread worker blocks on `engine.read()` and posts each event as its own message (`tui.messages`),
then EngineDied when the engine ends unasked. Nothing here draws: the app decides what the screen
says, and notes on the UI thread what the engine said about itself (`ready`, `loaded`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from textual.app import App
from textual.worker import get_current_worker

from breadth.core.engine import protocol as p
from breadth.tui.engine import EngineGone, EngineProcess
from breadth.tui.guard import guarded
from breadth.tui.messages import EngineDied, FromEngine

STOP_GRACE = 2.0  # seconds to wait for the engine to confirm a Stop before killing it
MAX_RESTARTS = 3  # engine restarts allowed within RESTART_WINDOW before giving up
RESTART_WINDOW = 60.0  # seconds


class Supervisor:
    """One engine process at a time for `app`: started on demand, read by a worker, replaced when it dies."""

    def __init__(self, app: App, factory: Callable[[], EngineProcess], on_start: Callable[[], None]) -> None:
        self.app = app
        self.factory = factory
        self.on_start = on_start  # called as each engine starts, before anything else is sent to it
        self.engine: EngineProcess | None = None
        self.ready = False  # the current engine has answered Ready
        self.loaded: set[str] = set()  # model keys the current engine holds
        self.restarts: list[float] = []  # when the engine was restarted (monotonic seconds)
        self.closed = False  # the app is quitting: read nothing more, restart nothing
        self.gave_up = False  # the restart budget is spent: no engine until the app is restarted

    def start(self) -> None:
        """Start a fresh engine process and the worker that reads it."""
        self.ready = False
        self.loaded.clear()
        self.engine = self.factory()
        self.engine.start()
        self.on_start()
        engine = self.engine
        self.app.run_worker(
            partial(self._read, engine), name="engine reader", group="engine", thread=True, exclusive=True
        )

    def restart(self) -> bool:
        """Start a new engine, unless this would be the (MAX_RESTARTS+1)-th within RESTART_WINDOW: then False."""
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW] + [now]
        if len(self.restarts) > MAX_RESTARTS:
            self.gave_up = True
            return False
        self.start()
        return True

    def ensure(self) -> EngineProcess:
        """The engine, started now if it has not been yet (a key pressed before the first frame starts it)."""
        if self.engine is None:
            self.start()
        return self.engine

    def send(self, command) -> bool:
        """Send `command`, starting the engine first if need be; False if the engine is gone."""
        return self.ensure().send(command)

    def load(self, key: str, path: str, fresh: bool = False) -> None:
        """Have a running engine load `path` as `key`, unless it holds it already and `fresh` is False.

        A new engine loads the current model through `on_start`.
        """
        if fresh:
            self.loaded.discard(key)
        if key not in self.loaded and self.engine is not None:
            self.engine.send(p.Load(key, path))

    def stop(self, job: int, still_running: Callable[[], bool], give_up: Callable[[str], None]) -> None:
        """Ask the engine to stop `job`; if `still_running()` after STOP_GRACE, `give_up(why)` and kill the engine.

        The pump sees the killed engine die, so the app restarts it as after any other death.
        """
        self.send(p.Stop(job))
        self.app.set_timer(STOP_GRACE, partial(self._enforce_stop, still_running, give_up))

    @guarded
    def _enforce_stop(self, still_running: Callable[[], bool], give_up: Callable[[str], None]) -> None:
        if not still_running() or self.engine is None:
            return  # the engine confirmed in time
        if not self.ready:  # still importing torch: the Stop waits in its queue, give it time
            self.app.set_timer(STOP_GRACE, partial(self._enforce_stop, still_running, give_up))
            return
        give_up(f"stopped: the engine did not answer within {STOP_GRACE:.0f}s and was restarted")
        self.engine.kill()

    def _read(self, engine: EngineProcess) -> None:
        """Post each of `engine`'s events to the app (`FromEngine`) until the engine is gone (a thread worker)."""
        worker = get_current_worker()
        while not worker.is_cancelled and not self.closed:
            try:
                event = engine.read()
            except EngineGone as e:
                if engine is self.engine and not worker.is_cancelled and not self.closed:
                    self.app.post_message(EngineDied(e.exitcode, e.last_words))
                return
            if not self.closed:
                self.app.post_message(FromEngine(event))

    def close(self) -> None:
        """End the engine for good (the app is quitting)."""
        self.closed = True
        if self.engine is not None:
            self.engine.close()
