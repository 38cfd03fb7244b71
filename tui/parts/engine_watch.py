"""The engine's life as the app shows it: starting, ready, the models it holds, its deaths and restarts."""

from __future__ import annotations

from breadth.core.engine import protocol as p
from breadth.tui import messages as m
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears
from breadth.tui.parts.catalogue import engine_gone

STARTING = "starting the model (a few seconds)..."  # until the engine is ready: importing torch takes seconds


class EngineWatch(Part):
    """Keeps `app.engine_status` and the supervisor's notes (ready, loaded) in step with what the engine says."""

    def starting(self) -> None:
        """Before the first frame: say the model is starting, in the playground's border and under the sum box (where
        the cursor is; a demo's note goes over it; Ready clears it), and start the engine after that frame."""
        self.app.engine_status = STARTING
        self.app.playground.say(STARTING)
        self.app.call_after_refresh(self.app.supervisor.ensure)  # torch loads after the first frame

    def started(self) -> None:
        """A new engine is up: say so and load the current model into it."""
        app = self.app
        app.engine_status = STARTING
        entry = app.catalogue.entries.get(app.current) if app.current else None
        if entry is not None and entry.path:
            app.supervisor.engine.send(p.Load(app.current, entry.path))

    @hears(p.Ready)
    @guarded
    def ready(self, ev: p.Ready) -> None:
        self.app.supervisor.ready = True
        self.app.engine_status = "engine ready"
        self.app.playground.clear_note()

    @hears(p.Loaded)
    @guarded
    def note_loaded(self, ev: p.Loaded) -> None:
        self.app.supervisor.loaded.add(ev.key)

    @hears(p.Unloaded)
    @guarded
    def note_unloaded(self, ev: p.Unloaded) -> None:
        self.app.supervisor.loaded.discard(ev.key)  # loaded again if chosen

    @hears(p.Failed)
    @guarded
    def say_failed(self, ev: p.Failed) -> None:
        """A command none of the parts answers for (train, play, save and scoring failures are heard by what failed)."""
        self.app.notify(f"{ev.what} failed: {ev.message}", severity="error")

    @hears(m.EngineDied)
    @guarded
    def restart(self, message: m.EngineDied) -> None:
        """Heard last: the other parts have failed what was in flight; restart the engine (a few times at most)."""
        app = self.app
        if app.supervisor.closed:
            return
        why = f": {message.last_words}" if message.last_words else ""
        if app.supervisor.restart():
            app.notify(f"The engine stopped (exit code {message.exitcode}){why}; restarting it.", severity="error")
        else:
            app.engine_status = "engine keeps failing: restart breadth-tui"
            app.notify(f"The engine failed repeatedly{why}; {engine_gone()}.", severity="error", timeout=15)
