"""The play router: a sum played on the current model or raced on several, a snapshot replayed for the procedure
view, and every character and verdict the engine streams back sent to the view that asked for it."""

from __future__ import annotations

from breadth.core.engine import protocol as p
from breadth.tui import messages as m
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears
from breadth.tui.parts.catalogue import engine_gone
from breadth.tui.screens.procedure_view import ProcedureView
from breadth.tui.widgets.playground import Playground
from breadth.tui.widgets.race import MIN_LANES, Roster
from breadth.tui.widgets.score_panel import ScorePanel


class PlayRouter(Part):
    """Probe ids, the race's roster, and the procedure views waiting for their replays."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.probe = 0  # the last probe's id
        self.roster = Roster()  # the models that race (F4)
        self.listeners: dict[int, ProcedureView] = {}  # probe id -> the view that sent it (not the playground)

    @property
    def catalogue(self):
        return self.app.catalogue

    @hears(Playground.PlayRequested)
    @guarded
    def play(self, message: Playground.PlayRequested) -> None:
        """Play a sum with the current model, or race it (unless there is none, or no engine will ever play it)."""
        playground, current, supervisor = self.app.playground, self.app.current, self.app.supervisor
        if playground.racing:
            self.race(message)
            return
        if current is None:
            playground.say("no model loaded: load a checkpoint (Ctrl+O) or train one (F2)", error=True)
            return
        if supervisor.gave_up:
            playground.say(engine_gone(), error=True)
            return
        if self.catalogue.entries[current].scores_only:
            playground.say(
                "this stored run kept no model (a sweep's, or its file is gone): pick a row with a "
                "model (Shift+F9) to play",
                error=True,
            )
            return
        if not supervisor.ready:
            playground.say("the model is starting (a few seconds); this sum plays as soon as it is ready")
        self.probe += 1
        playground.begin(self.probe, message.problem, self.catalogue.title(current))
        self._send(self.probe, current, message.text)

    def race(self, message: Playground.PlayRequested) -> None:
        """Play the sum on every model of the race at once, each in its lane, each its own Probe."""
        playground, supervisor = self.app.playground, self.app.supervisor
        keys = self.roster.playable(self.catalogue.entries)
        if supervisor.gave_up:
            playground.say(engine_gone(), error=True)
            return
        if len(keys) < MIN_LANES:
            playground.say(f"a race needs {MIN_LANES} models that can play: Enter on a runs-table row adds one")
            return
        if not supervisor.ready:
            playground.say("the model is starting (a few seconds); the race runs as soon as it is ready")
        lanes = []
        for key in keys:
            self.probe += 1
            lanes.append((self.probe, key, self.catalogue.title(key)))
        playground.begin_race(message.problem, lanes)
        held_first = sorted(lanes, key=lambda lane: lane[1] not in supervisor.loaded)  # stable sort
        for probe, key, _ in held_first:  # once played they are the last used: loading the others cannot drop them
            self._send(probe, key, message.text)

    def _send(self, probe: int, key: str, text: str) -> None:
        """Play `text` on `key`, loading it first if the engine let it go (it holds four models at most)."""
        supervisor = self.app.supervisor
        supervisor.ensure()
        if self.catalogue.entries[key].path:
            supervisor.load(key, self.catalogue.entries[key].path)
        supervisor.send(p.Probe(probe, key, text, lie=self.app.playground.lie_spec()))

    # the race's lanes

    @hears(Playground.RacingChanged)
    @guarded
    def show_race(self, message: Playground.RacingChanged | None = None) -> None:
        """Give the race view one lane per model of the race."""
        lanes = [(key, self.catalogue.title(key)) for key in self.roster.playable(self.catalogue.entries)]
        self.app.playground.race.set_lanes(lanes)

    @hears(ScorePanel.ModelChosen)
    @guarded
    def join_or_leave(self, message: ScorePanel.ModelChosen) -> None:
        """While racing, a chosen model joins the race, or leaves it if it runs."""
        if self.app.playground.racing and message.key in self.catalogue.entries:
            try:
                self.app.playground.say(self.roster.toggle(message.key, self.catalogue.entries))
            except ValueError as e:
                self.app.playground.say(str(e), error=True)
            self.show_race()

    @hears(p.Trained)
    @guarded
    def join_trained(self, ev: p.Trained) -> None:
        self.roster.join(ev.key, self.catalogue.entries)
        self.show_race()

    # replays for the procedure view

    @hears(ProcedureView.ReplayRequested)
    @guarded
    def replay(self, message: ProcedureView.ReplayRequested) -> None:
        """Play an environment's probe on a kept snapshot for the view that asked: its events go to that view."""
        self.probe += 1
        supervisor = self.app.supervisor
        if supervisor.gave_up or not supervisor.send(p.Probe(self.probe, message.key, message.text, step=message.step)):
            message.view.sent(message.line, self.probe, engine_gone())
            return
        self.listeners[self.probe] = message.view
        message.view.sent(message.line, self.probe)

    # what the engine streams back

    @hears(p.Char)
    @guarded
    def stream_char(self, ev: p.Char) -> None:
        view = self.listeners.get(ev.id)
        if view is None:
            self.app.playground.char(ev)
        elif view in self.app.screen_stack:  # a closed procedure view's probes end unseen
            view.char(ev)

    @hears(p.ProbeFinished)
    @guarded
    def show_verdict(self, ev: p.ProbeFinished) -> None:
        if ev.id in self.listeners:
            view = self.listeners.pop(ev.id)
            if view in self.app.screen_stack:
                view.finish(ev)
            return
        self.app.playground.finish(ev.id, ev.solved, ev.failure, ev.answer, ev.copied)

    @hears(m.failed("probe"))
    @guarded
    def show_failure(self, ev: p.Failed) -> None:
        if ev.id in self.listeners:
            view = self.listeners.pop(ev.id)
            if view in self.app.screen_stack:
                view.fail(ev.id, ev.message)
        else:
            self.app.playground.fail(ev.id, ev.message)

    @hears(m.EngineDied)
    @guarded
    def fail_in_flight(self, message: m.EngineDied) -> None:
        """Every probe still waiting ends with an error: the engine and its snapshots are gone."""
        if self.app.supervisor.closed:
            return
        self.app.playground.fail_unfinished("the engine stopped")
        for probe, view in list(self.listeners.items()):
            if view in self.app.screen_stack:
                view.fail(probe, "the engine stopped; its snapshots went with it")
        self.listeners.clear()
