"""Every environment's score of the playing model: asked of the engine once per model, kept, shown by Shift+F4.

Scoring 183 environments on 30 test sums each takes the engine seconds, a few environments at a time between
other commands (`protocol.ScoreEnvironments`), so the app asks when the environments view first needs a model's
scores and keeps what comes back: reopening the view, or coming back to a model, is instant. The engine scores one
model at a time (a newer request replaces one under way), so asking for another model forgets the first one's
partial work. The view reads `Board.playing()` on its own timer; it never reaches into the app.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from breadth.core.engine import protocol as p
from breadth.core.world.episodes.scores import HeldOutScore, MetadataError
from breadth.tui import messages as m
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears
from breadth.tui.screens.environments_view import EnvironmentsView
from breadth.tui.widgets.score_lines import own_environments

HELD_OUT = p.ScoreEnvironments.__dataclass_fields__["held_out"].default  # test sums per environment (30)


@dataclass
class Scoring:
    """One model's score on every environment, as far as it has gone (what the environments view draws)."""

    key: str  # the model's key in the runs table and the engine
    title: str  # its title in the runs table (safe to show: `catalog.ModelEntry.title`)
    trained: frozenset[str]  # the environments of its mix
    job: int = 0  # the engine's scoring job (0: not asked)
    started: float = field(default_factory=time.monotonic)
    done: int = 0  # environments scored so far
    total: int = 0  # environments to score (0: not known yet)
    scores: dict[str, HeldOutScore] | None = None  # environment name -> score, once all are in
    seed: int = 0  # the test splits' seed
    held_out: int = HELD_OUT
    seconds: float = 0.0  # from asking to the last score, as the engine measured it
    busy: float = 0.0  # of which the engine spent scoring
    error: str = ""  # why it was not scored (one line)
    summary: object = None  # the view's heat map of the scores, made once (tui.screens.environments_view.Heat)


@dataclass(frozen=True)
class Playing:
    """What the view needs at one moment: the playing model's scoring, and what the engine is busy with."""

    scoring: Scoring | None  # None: no model plays
    training: bool  # the engine is training (scoring waits for it)
    ready: bool  # the engine has imported torch


class Board(Part):
    """The scores of every environment by model, the scoring under way, and opening the environments view."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.kept: dict[str, Scoring] = {}  # model key -> its scoring (scored, failed or under way)
        self.jobs: dict[int, str] = {}  # scoring job -> model key, while under way
        self.last_job = 0

    def open(self) -> None:
        """Shift+F4: the environments view; scoring starts if the playing model has none (or it failed)."""
        self.app.open_screen(EnvironmentsView, lambda: EnvironmentsView(self))
        scoring = self.kept.get(self.app.current)
        if scoring is not None and scoring.error:
            del self.kept[scoring.key]  # Shift+F4 again after a failure: try again
        self.playing()

    def playing(self) -> Playing:
        """The playing model's scoring, asked of the engine now if it never was."""
        key, supervisor = self.app.current, self.app.supervisor
        state = dict(training=self.app.training is not None, ready=supervisor.ready)
        if key is None or key not in self.app.entries:
            return Playing(None, **state)
        entry = self.app.entries[key]
        scoring = self.kept.get(key)
        if scoring is None:
            scoring = self.kept[key] = Scoring(key, entry.title, frozenset(own_environments(entry.run)))
            if entry.scores_only or (not entry.path and key not in supervisor.loaded):
                scoring.error = "this run kept no model to score (scores only)"
            elif supervisor.gave_up:
                scoring.error = "the engine keeps failing: restart breadth-tui"
            else:
                self.ask(scoring, entry.path)
        scoring.title = entry.title  # titles change as rows join the table
        return Playing(scoring, **state)

    def ask(self, scoring: Scoring, path: str) -> None:
        """Send the engine the scoring of `scoring.key` (loading the model first if the engine let it go)."""
        for job, key in list(self.jobs.items()):  # the engine scores one model at a time: this replaces it
            del self.jobs[job]
            self.kept.pop(key, None)
        self.last_job += 1
        scoring.job, scoring.started = self.last_job, time.monotonic()
        if path:
            self.app.supervisor.load(scoring.key, path)
        if self.app.supervisor.send(p.ScoreEnvironments(scoring.job, scoring.key)):
            self.jobs[scoring.job] = scoring.key
        else:
            scoring.error = "the engine is not running"

    def _under_way(self, job: int) -> Scoring | None:
        key = self.jobs.get(job)
        return self.kept.get(key) if key is not None else None

    @hears(p.EnvironmentsProgress)
    @guarded
    def progressed(self, ev: p.EnvironmentsProgress) -> None:
        scoring = self._under_way(ev.id)
        if scoring is not None:
            scoring.done, scoring.total = ev.done, ev.total

    @hears(p.EnvironmentsScored)
    @guarded
    def scored(self, ev: p.EnvironmentsScored) -> None:
        """Every environment's score: kept for this model (a malformed one is one line, never a traceback)."""
        scoring = self._under_way(ev.id)
        if scoring is None:
            return
        del self.jobs[ev.id]
        try:
            scores = {str(name): HeldOutScore.from_dict(str(name), data) for name, data in ev.scores.items()}
        except MetadataError as e:
            scoring.error = f"the engine's scores could not be read: {e}"
            return
        scoring.scores, scoring.done, scoring.total = scores, len(scores), len(scores)
        scoring.seed, scoring.held_out, scoring.seconds, scoring.busy = ev.seed, ev.held_out, ev.seconds, ev.busy

    @hears(m.failed("scoreenvironments"))
    @guarded
    def failed(self, ev: p.Failed) -> None:
        scoring = self._under_way(ev.id)
        if scoring is not None:
            del self.jobs[ev.id]
            scoring.error = ev.message

    @hears(m.EngineDied)
    @guarded
    def lost(self, message: m.EngineDied) -> None:
        """A scoring under way died with the engine: say so (Shift+F4 asks the next engine)."""
        for job, key in list(self.jobs.items()):
            del self.jobs[job]
            if key in self.kept:
                self.kept[key].error = "the engine stopped while scoring: press Shift+F4 to score again"
