"""BreadthApp: the training panel, the score panel and the playground, wired to the engine process.

The app never imports torch: checkpoints' metadata fills the screen at once, the engine process
starts after the first frame (`tui.supervisor`), and everything it does arrives as one message per
event (`tui.messages`), each handled here on the UI thread. What the app knows (the model being
trained, the current model, the engine's state) is reactive: setting it updates the panels.
Every handler and action is `guarded`: an error in one is logged to `app.log` and shown in one line,
and the app runs on; anything that still escapes is logged there before Textual ends the app.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import ModalScreen, Screen

from breadth.core.engine import protocol as p
from breadth.core.storage.paths import BASE, runs_dir
from breadth.core.storage.presets import DEFAULT_PRESET
from breadth.core.storage.store import StoreError
from breadth.core.world.probe import parse_sum
from breadth.core.world.records import HeldOutScore
from breadth.core.world.text import shown
from breadth.tui import messages as m
from breadth.tui.catalog import ModelEntry, shipped_entries, stored_entries
from breadth.tui.engine import EngineProcess, engine_log
from breadth.tui.figures import FiguresFailed, FiguresSaved, figures_dir, save_figures, saved_line
from breadth.tui.guard import guarded, log_error, one_line
from breadth.tui.screens.checkpoint_prompts import LoadPrompt, SavePrompt, SaveTarget
from breadth.tui.screens.demos_view import DemosView
from breadth.tui.screens.help import HelpScreen
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.procedure_view import ProcedureView, RunProgress
from breadth.tui.supervisor import Supervisor
from breadth.tui.widgets.bounded_input import BoundedInput
from breadth.tui.widgets.footer import KeysFooter
from breadth.tui.widgets.playground import AUDIENCE, Playground, SumBox
from breadth.tui.widgets.race import MIN_LANES, Roster
from breadth.tui.widgets.score_panel import ScorePanel
from breadth.tui.widgets.train_panel import TrainPanel

DEFAULT_MODEL = f"shipped:{DEFAULT_PRESET}"  # current at start, and after another model killed the engine


def engine_gone() -> str:
    """What to say once the engine will not be restarted."""
    return f"the engine keeps failing: restart breadth-tui (engine log: {engine_log()})"


class BreadthApp(App):
    """Choose a mix, watch it train, probe it token by token."""

    TITLE = "breadth"
    ENABLE_COMMAND_PALETTE = False
    SUB_TITLE = "breadth of training environments is what transfers"
    CSS_PATH = "breadth.tcss"
    BINDINGS = [
        Binding("ctrl+t", "train", "Train", priority=True),
        Binding("ctrl+x", "stop", "Stop", priority=True),
        Binding("ctrl+o", "pace", "Pace", priority=True, show=False),
        Binding("ctrl+s", "save", "Save", priority=True, show=False),
        Binding("ctrl+l", "load", "Load", priority=True, show=False),
        Binding("ctrl+n", "next_model", "Next", priority=True, show=False),
        Binding("ctrl+g", "matrix", "Matrix", priority=True),
        Binding("ctrl+w", "procedure", "Watch", priority=True),
        Binding("ctrl+f", "figures", "Figures", priority=True),
        Binding("ctrl+r", "race", "Race", priority=True),
        Binding("ctrl+d", "demos", "Demos", priority=True),
        Binding("ctrl+y", "lie", "Lie", priority=True, show=False),
        Binding("ctrl+k", "shade", "Shade", priority=True, show=False),
        Binding("alt+left", "pick(-1)", "Earlier character", show=False),
        Binding("alt+right", "pick(1)", "Later character", show=False),
        Binding("alt+up", "pick_lane(-1)", "Lane above", show=False),
        Binding("alt+down", "pick_lane(1)", "Lane below", show=False),
        Binding("pagedown", "demo_step(1)", "Next probe", show=False),  # demo mode; a presenter's clicker sends it
        Binding("pageup", "demo_step(-1)", "Previous probe", show=False),
        Binding("f1", "help", "Help", priority=True),
    ]

    training: var[int | None] = var(None, init=False)  # the job being trained, if any
    current: var[str | None] = var(None, init=False, always_update=True)  # the model that plays and shows scores
    engine_status = var("", init=False)  # what the engine is doing, in the playground's bottom border

    def __init__(
        self, engine_factory=None, start_engine: bool = True, demo: tuple[list[str], list[str]] | None = None
    ) -> None:
        super().__init__()
        self.demo = demo  # demo mode: (probes to step through, probe-file lines skipped), else None
        self.demo_at = -1  # the demo probe played last
        factory = engine_factory or (lambda: EngineProcess(engine_log()))
        self.supervisor = Supervisor(self, factory, on_start=self._engine_started)
        self.auto_start = start_engine
        self.entries: dict[str, ModelEntry] = {}
        self.job = 0  # the last training job's id
        self.probe = 0  # the last probe's id
        self.save_id = 0  # the last Save sent to the engine
        self.saving: dict[int, str] = {}  # Save id -> key of the model the engine is writing
        self.progress: dict[str, RunProgress] = {}  # run key -> its snapshots and their scores (Ctrl+W)
        self.listeners: dict[int, ProcedureView] = {}  # probe id -> the view that sent it (not the playground)
        self.saving_figures = False  # a Ctrl+F is writing its files
        self.roster = Roster()  # the models that race (Ctrl+R)

    def compose(self) -> ComposeResult:
        # kept as attributes: a modal screen on top would hide them from query_one
        self.train_panel = TrainPanel(id="train-panel")
        self.score_panel = ScorePanel(id="score-panel")
        self.playground = Playground(id="playground")
        with Horizontal(id="top"):
            yield self.train_panel
            yield self.score_panel
        yield self.playground
        yield KeysFooter(compact=True, show_command_palette=False)

    @guarded
    def on_mount(self) -> None:
        self.entries = {entry.key: entry for entry in shipped_entries()}
        self.switch_to(DEFAULT_MODEL if DEFAULT_MODEL in self.entries else next(iter(self.entries), None))
        self.playground.focus_sum()
        if self.demo is not None:
            self._start_demo()
        if self.auto_start:
            self.call_after_refresh(self.supervisor.ensure)  # torch loads after the first frame
        self.call_after_refresh(lambda: self.run_worker(self._read_store, thread=True, group="store"))

    def _read_store(self) -> None:
        """In a worker: the results store's runs of the shipped base, for the runs table."""
        try:
            self.post_message(m.StoreRead(stored_entries()))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read must not stop the app
            log_error(e, "reading the results store")
            why = one_line(e) if isinstance(e, (StoreError, OSError)) else f"{type(e).__name__}: {one_line(e)}"
            self.post_message(m.StoreRead([], why))

    @on(m.StoreRead)
    @guarded
    def add_stored_runs(self, message: m.StoreRead) -> None:
        """Stored runs (earlier sessions, sweeps) join the table after the shipped models, oldest first."""
        if message.error:
            self.notify(f"results store not read: {message.error}", severity="warning", timeout=8)
        shipped = {k: e for k, e in self.entries.items() if e.origin == "shipped"}
        known = {e.path for e in self.entries.values() if e.path}
        stored = {
            e.key: e for e in message.entries if e.key not in self.entries and (not e.path or e.path not in known)
        }
        rest = {k: e for k, e in self.entries.items() if k not in shipped}
        self.entries = {**shipped, **stored, **rest}
        self.current = self.current  # redraw the table with the stored rows

    # state -> screen

    def watch_training(self, job: int | None) -> None:
        self.train_panel.training = job is not None

    def watch_current(self, key: str | None) -> None:
        self.score_panel.show_model(self.entries.get(key))
        self.score_panel.set_runs(list(self.entries.values()), key)

    def watch_engine_status(self, text: str) -> None:
        self.playground.border_subtitle = text

    # the engine

    def _engine_started(self) -> None:
        """A new engine is up: say so and load the current model into it."""
        self.engine_status = "engine starting (loading torch)..."
        if self.current and self.entries[self.current].path:
            self.supervisor.engine.send(p.Load(self.current, self.entries[self.current].path))

    @on(m.EngineReady)
    @guarded
    def engine_is_ready(self) -> None:
        self.supervisor.ready = True
        self.engine_status = "engine ready"
        self.playground.clear_note()
        if self.demo is not None and self.demo_at < 0:
            self._say_demo()  # the demo's keys stay in view until the first probe

    @on(m.ModelLoaded)
    @guarded
    def note_loaded(self, message: m.ModelLoaded) -> None:
        self.supervisor.loaded.add(message.event.key)

    @on(m.ModelUnloaded)
    @guarded
    def note_unloaded(self, message: m.ModelUnloaded) -> None:
        self.supervisor.loaded.discard(message.event.key)  # loaded again if chosen

    @on(m.EngineDied)
    @guarded
    def recover_engine(self, message: m.EngineDied) -> None:
        """Say what happened, fail what was in flight, forget what died with it, restart it (a few times at most).

        A model the engine died loading is not fed to the next engine: the default model replaces it.
        """
        if self.supervisor.closed:
            return
        loading = self.supervisor.ready and self.current not in (None, DEFAULT_MODEL, *self.supervisor.loaded)
        suspect = self.current if loading else None  # never the default: that is what would replace it
        self._abort_training(f"engine stopped (exit code {message.exitcode}); training lost, model kept")
        self.playground.fail_unfinished("the engine stopped")
        for probe, view in list(self.listeners.items()):
            if view in self.screen_stack:
                view.fail(probe, "the engine stopped; its snapshots went with it")
        self.listeners.clear()
        self.progress.clear()
        self.saving.clear()
        self._forget_unsaved_models()
        if suspect in self.entries:
            fallback = DEFAULT_MODEL if DEFAULT_MODEL in self.entries else None
            self.notify(
                f"The engine stopped while loading {self._title(suspect)}: not reloaded; now {self._title(fallback)}.",
                severity="error",
                timeout=10,
            )
            self.switch_to(fallback)
        why = f": {message.last_words}" if message.last_words else ""
        if self.supervisor.restart():
            self.notify(f"The engine stopped (exit code {message.exitcode}){why}; restarting it.", severity="error")
        else:
            self.engine_status = "engine keeps failing: restart breadth-tui"
            self.notify(f"The engine failed repeatedly{why}; {engine_gone()}.", severity="error", timeout=15)

    def _forget_unsaved_models(self) -> None:
        """Drop the models that lived only in the dead engine's memory, and say so."""
        lost = [key for key, entry in self.entries.items() if entry.origin == "trained" and not entry.path]
        if not lost:
            return
        self.notify("Lost with the engine (never saved): " + ", ".join(map(self._title, lost)), severity="error")
        for key in lost:
            del self.entries[key]
        current = self.current if self.current in self.entries else DEFAULT_MODEL
        self.switch_to(current if current in self.entries else None)

    @on(m.CommandFailed)
    @guarded
    def report_failure(self, message: m.CommandFailed) -> None:
        ev = message.event
        if ev.what == "train":
            if ev.id == self.training:
                self._abort_training(f"training failed: {ev.message}")
        elif ev.what == "play" and ev.id in self.listeners:
            view = self.listeners.pop(ev.id)
            if view in self.screen_stack:
                view.fail(ev.id, ev.message)
        elif ev.what == "play":
            self.playground.fail(ev.id, ev.message)
        elif ev.what == "save":
            key = self.saving.pop(ev.id, None)
            self.notify(f"not saved: {ev.message} ({self._title(key)} is still in memory)", severity="error")
        else:
            self.notify(f"{ev.what} failed: {ev.message}", severity="error")

    # training

    @guarded
    def action_train(self) -> None:
        self.train_panel.ask_train()

    @on(TrainPanel.TrainRequested)
    @guarded
    def train(self, message: TrainPanel.TrainRequested) -> None:
        """Start a fine-tuning job in the engine (if the engine is gone for good, say so at once)."""
        if self.training is not None:
            return
        if self.supervisor.gave_up:
            self.train_panel.show_error(engine_gone())
            return
        self.job += 1
        self.training = self.job
        self.train_panel.started(message.mix, message.settings)
        s = message.settings
        trained = tuple(name for name, _ in message.mix.counts)
        run = RunProgress(f"run:{self.job}", f"{message.mix.short()} #{self.job}", s.seed, s.steps, trained)
        self.progress[run.key] = run
        settings = message.settings.to_dict()
        self.supervisor.send(
            p.Train(self.job, message.mix.spec(), settings, str(BASE), str(runs_dir()), message.held_out)
        )

    @on(m.TrainingStep)
    @guarded
    def plot_step(self, message: m.TrainingStep) -> None:
        ev = message.event
        if ev.id == self.training:
            self.train_panel.step(ev.step, ev.steps, ev.loss, ev.elapsed)
        run = self.progress.get(f"run:{ev.id}")
        if run is not None:
            run.losses.append(ev.loss)
            if isinstance(self.screen, ProcedureView) and self.screen.run is run:
                self.screen.add_loss(ev.loss)

    @on(m.EvaluationStarted)
    @guarded
    def say_evaluating(self, message: m.EvaluationStarted) -> None:
        if message.event.id == self.training:
            self.train_panel.show("evaluating on held-out sums...")

    @on(m.ModelTrained)
    @guarded
    def add_trained_model(self, message: m.ModelTrained) -> None:
        """The new model joins the runs table and becomes current (the loss plot keeps its curves).

        One the engine could not save (`path` '') stays in its memory: the status line and a notification
        say why, and Ctrl+S saves it. A note beside a saved file (the run not recorded in the results store)
        is shown the same way, in addition to the saved message.
        """
        ev = message.event
        if ev.id == self.training:
            self.training = None
        entry = self.entries[ev.key] = ModelEntry.trained(ev.key, ev.id, ev.path, ev.meta)
        if ev.key in self.progress:
            self.progress[ev.key].finished = True
        self.supervisor.loaded.add(ev.key)
        self.current = ev.key
        self.roster.join(ev.key, self.entries)
        self._show_race()
        if ev.path and not ev.note:
            self.train_panel.show(f"done in {entry.run.train_seconds:.1f}s and saved")
            self.notify(f"Trained and saved: {ev.path}", timeout=6)
        elif ev.path:
            self.train_panel.show_error(f"done in {entry.run.train_seconds:.1f}s and saved; {ev.note}")
            self.notify(f"Trained and saved: {ev.path}", timeout=6)
            self.notify(f"{entry.title}: {ev.note}", severity="warning", timeout=15)
        else:
            note = f"{ev.note or 'not saved; kept in memory'}, Ctrl+S to save it"
            self.train_panel.show_error(f"done in {entry.run.train_seconds:.1f}s; {note}")
            self.notify(f"Trained, {note}", severity="error", timeout=15)

    @guarded
    def action_stop(self) -> None:
        self.train_panel.ask_stop()

    @on(TrainPanel.StopRequested)
    @guarded
    def stop(self) -> None:
        """Ask the engine to stop; the supervisor kills it if it does not confirm in time."""
        if self.training is None:
            return
        job = self.training
        self.train_panel.show("stopping...")
        self.supervisor.stop(job, still_running=lambda: self.training == job, give_up=self._abort_training)

    @on(m.TrainingStopped)
    @guarded
    def end_stopped_job(self, message: m.TrainingStopped) -> None:
        self.training = None
        self.progress.pop(f"run:{message.event.id}", None)  # the engine dropped its snapshots
        self.train_panel.show(f"stopped at step {message.event.steps}; kept {self._title(self.current)}")

    def _abort_training(self, text: str) -> None:
        if self.training is not None:
            self.training = None
            self.train_panel.show_error(text)

    # models

    @guarded
    def action_next_model(self) -> None:
        keys = list(self.entries)
        if keys:
            i = keys.index(self.current) + 1 if self.current in keys else 0
            self.switch_to(keys[i % len(keys)])

    @on(ScorePanel.ModelChosen)
    @guarded
    def chosen(self, message: ScorePanel.ModelChosen) -> None:
        """Switch to the chosen model; while racing, it also joins the race, or leaves it if it runs."""
        self.switch_to(message.key)
        if self.playground.racing and message.key in self.entries:
            try:
                self.playground.say(self.roster.toggle(message.key, self.entries))
            except ValueError as e:
                self.playground.say(str(e), error=True)
            self._show_race()

    def switch_to(self, key: str | None, fresh: bool = False) -> None:
        """Make `key` the model that plays and whose scores and training curve show."""
        if key is not None and key not in self.entries:
            return
        self.current = key
        if key is not None:
            entry = self.entries[key]
            if entry.path:
                self.supervisor.load(key, entry.path, fresh)
            self.train_panel.show_reference(list(entry.run.losses), entry.title)

    @guarded
    def action_save(self) -> None:
        """Save the current model under a new path: its file copied, or, if it has none, written by the engine."""
        if self.current is None:
            self.notify("no model to save", severity="warning")
            return
        key = self.current
        self.open_screen(SavePrompt, lambda: SavePrompt(self.entries[key]), lambda target: self.save_to(key, target))

    @guarded
    def save_to(self, key: str, target: SaveTarget | None) -> None:
        """The Save prompt closed: say where the copy went, or ask the engine to write the model it holds."""
        if target is None:
            return
        if target.copied:
            self.notify(f"saved {target.path}")
            return
        self.save_id += 1
        if self.supervisor.gave_up or not self.supervisor.send(p.Save(self.save_id, key, target.path)):
            self.notify(f"not saved: {engine_gone()}", severity="error", timeout=10)
            return
        self.saving[self.save_id] = key
        self.notify(f"saving {self._title(key)} to {target.path}...", timeout=3)

    @on(m.ModelSaved)
    @guarded
    def note_saved(self, message: m.ModelSaved) -> None:
        """The engine wrote a model it kept in memory: the model now has a file (and outlives the engine)."""
        ev = message.event
        key = self.saving.pop(ev.id, None)
        if key in self.entries and not self.entries[key].path:
            self.entries[key].path = ev.path
        self.notify(f"saved {ev.path}")

    @guarded
    def action_load(self) -> None:
        """Load a checkpoint from a path and switch to it."""
        self.open_screen(LoadPrompt, LoadPrompt, self.add_loaded_model)

    @guarded
    def add_loaded_model(self, entry: ModelEntry | None) -> None:
        if entry is not None:
            self.entries[entry.key] = entry
            self.switch_to(entry.key, fresh=True)  # the file may have changed since it was last loaded

    # the playground

    @on(Playground.PlayRequested)
    @guarded
    def play(self, message: Playground.PlayRequested) -> None:
        """Play a sum with the current model, or race it (unless there is none, or no engine will ever play it)."""
        playground = self.playground
        if playground.racing:
            self.play_race(message)
            return
        if self.current is None:
            playground.say("no model loaded: load a checkpoint (Ctrl+L) or train one (Ctrl+T)", error=True)
            return
        if self.supervisor.gave_up:
            playground.say(engine_gone(), error=True)
            return
        if self.entries[self.current].scores_only:
            playground.say(
                "this stored run kept no model (a sweep's, or its file is gone): pick a row with a "
                "model (Ctrl+N) to play",
                error=True,
            )
            return
        if not self.supervisor.ready:
            playground.say("the engine is starting (loading torch); this sum plays as soon as it is ready")
        self.probe += 1
        playground.begin(self.probe, message.problem, self._title(self.current))
        self._send_play(self.probe, self.current, message.text)

    def play_race(self, message: Playground.PlayRequested) -> None:
        """Play the sum on every model of the race at once, each in its lane, each its own Play."""
        keys = self.roster.playable(self.entries)
        if self.supervisor.gave_up:
            self.playground.say(engine_gone(), error=True)
            return
        if len(keys) < MIN_LANES:
            self.playground.say(f"a race needs {MIN_LANES} models that can play: Enter on a runs-table row adds one")
            return
        if not self.supervisor.ready:
            self.playground.say("the engine is starting (loading torch); the race runs as soon as it is ready")
        lanes = []
        for key in keys:
            self.probe += 1
            lanes.append((self.probe, key, self._title(key)))
        self.playground.begin_race(message.problem, lanes)
        held_first = sorted(lanes, key=lambda lane: lane[1] not in self.supervisor.loaded)  # stable sort
        for probe, key, _ in held_first:  # once played they are the last used: loading the others cannot drop them
            self._send_play(probe, key, message.text)

    def _send_play(self, probe: int, key: str, text: str) -> None:
        """Play `text` on `key`, loading it first if the engine let it go (it holds four models at most)."""
        self.supervisor.ensure()
        if self.entries[key].path:
            self.supervisor.load(key, self.entries[key].path)
        self.supervisor.send(p.Play(probe, key, text, lie=self.playground.lie_spec()))

    @guarded
    def action_race(self) -> None:
        """Toggle between racing the sum on several models and playing it on the current one."""
        self.playground.racing = not self.playground.racing
        self._show_race()

    def _show_race(self) -> None:
        """Give the race view one lane per model of the race."""
        self.playground.race.set_lanes([(key, self._title(key)) for key in self.roster.playable(self.entries)])

    @on(m.CharStreamed)
    @guarded
    def stream_char(self, message: m.CharStreamed) -> None:
        view = self.listeners.get(message.event.id)
        if view is None:
            self.playground.char(message.event)
        elif view in self.screen_stack:  # a closed scrubber's probes end unseen
            view.char(message.event)

    @on(m.ProbeFinished)
    @guarded
    def show_verdict(self, message: m.ProbeFinished) -> None:
        ev = message.event
        if ev.id in self.listeners:
            view = self.listeners.pop(ev.id)
            if view in self.screen_stack:
                view.finish(ev)
            return
        self.playground.finish(ev.id, ev.solved, ev.failure, ev.answer, ev.copied)

    # watching the procedure form (snapshots)

    @on(m.SnapshotKept)
    @guarded
    def note_snapshot(self, message: m.SnapshotKept) -> None:
        run = self.progress.get(f"run:{message.event.id}")
        if run is not None:
            run.kept.append(message.event.step)
            self._refresh_procedure(run)

    @on(m.SnapshotScored)
    @guarded
    def note_snapshot_scores(self, message: m.SnapshotScored) -> None:
        ev = message.event
        run = self.progress.get(ev.key)
        if run is not None:
            run.scores[ev.step] = {name: HeldOutScore.from_dict(name, data) for name, data in ev.scores.items()}
            self._refresh_procedure(run)

    def _refresh_procedure(self, run: RunProgress) -> None:
        if isinstance(self.screen, ProcedureView) and self.screen.run is run:
            self.screen.refresh_run()

    @guarded
    def action_procedure(self) -> None:
        """Open the snapshot scrubber on the current model's run, else the latest run trained here."""
        run = self.progress.get(self.current or "") or next(reversed(self.progress.values()), None)
        if run is None and not any(isinstance(screen, ProcedureView) for screen in self.screen_stack):
            self.notify("train a model (Ctrl+T) to watch its procedure form: snapshots are kept every 25 steps")
            return
        self.open_screen(ProcedureView, lambda: ProcedureView(run))

    def play_snapshot(self, view: ProcedureView, key: str, text: str, step: int) -> tuple[int, str]:
        """Play `text` on the snapshot at `step` of run `key` for `view`: the probe id (its events go to the
        view) and '' if it was sent, else why not."""
        self.probe += 1
        if self.supervisor.gave_up or not self.supervisor.send(p.Play(self.probe, key, text, step=step)):
            return self.probe, engine_gone()
        self.listeners[self.probe] = view
        return self.probe, ""

    # demo mode (`breadth-tui --demo`)

    def _start_demo(self) -> None:
        """The shipped models race at the audience pace; the probes wait for PageDown; skipped lines are named."""
        self.playground.racing = True
        self.playground.pace = AUDIENCE
        self._show_race()
        self._say_demo()

    def _say_demo(self) -> None:
        """Under the sum box: how many probes and which keys; a probes file's skipped lines, as an error line."""
        probes, skipped = self.demo
        note = f"demo: {len(probes)} probes, PageDown next, PageUp back"
        if skipped:
            more = f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else ""
            note += f" · skipped {skipped[0]}{more}"
        self.playground.say(note, error=bool(skipped))

    @guarded
    def action_demo_step(self, by: int) -> None:
        """Demo mode: play the next (or previous) probe of the list, as if typed and entered in the sum box."""
        if self.demo is None:
            return
        probes = self.demo[0]
        self.demo_at = min(max(self.demo_at + by, 0), len(probes) - 1)
        text = probes[self.demo_at]
        self.playground.focus_sum()
        self.playground.query_one("#sum", SumBox).remember(text)  # Up recalls it, as if typed
        self.playground.say(f"probe {self.demo_at + 1} of {len(probes)}: {text} · PageDown next, PageUp back")
        self.playground.post_message(Playground.PlayRequested(parse_sum(text), text))  # checked when read

    @guarded
    def action_lie(self) -> None:
        """The calculator for the next sums: honest, off by one, or always a number typed in the box it opens."""
        self.notify(f"calculator: {self.playground.cycle_lie()}", timeout=2)

    @guarded
    def action_shade(self) -> None:
        """Shade the model's characters by the probability it gave them, with a picked character's alternatives."""
        self.playground.shaded = not self.playground.shaded

    @guarded
    def action_pick(self, by: int) -> None:
        self.playground.pick(by)

    @guarded
    def action_pick_lane(self, by: int) -> None:
        self.playground.pick_lane(by)

    @guarded
    def action_pace(self) -> None:
        self.notify(f"streaming pace: {self.playground.cycle_pace()}", timeout=1.5)

    @guarded
    def action_matrix(self) -> None:
        self.open_screen(MatrixView, MatrixView)

    @guarded
    def action_figures(self) -> None:
        """Save the screen (SVG now, on this thread; PNG later) and the current model's slide, in a worker."""
        if self.saving_figures:
            self.playground.say("still saving the last figures; press Ctrl+F again once they are written")
            return
        svg = self.export_screenshot()  # reads the screen: the one step that must run here
        entry = self.entries.get(self.current)
        run, name = (entry.run, entry.title) if entry else (None, "")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.saving_figures = True
        self.playground.say("saving figures...")
        self.run_worker(
            lambda: self.post_message(save_figures(svg, run, name, figures_dir(), stamp)),
            thread=True,
            group="figures",
            exit_on_error=False,  # save_figures reports its own failures; this only guards against the unforeseen
        )

    @on(FiguresSaved)
    @guarded
    def say_figures_saved(self, message: FiguresSaved) -> None:
        self.saving_figures = False
        self.playground.say(saved_line(message), error=bool(message.missing))

    @on(FiguresFailed)
    @guarded
    def say_figures_failed(self, message: FiguresFailed) -> None:
        self.saving_figures = False
        self.playground.say(message.why, error=True)

    @guarded
    def action_demos(self) -> None:
        """What the model would learn from: the form's mix's demonstrations, loss-carrying characters marked."""
        self.open_screen(DemosView, lambda: DemosView(self.train_panel.request))

    @guarded
    def action_help(self) -> None:
        """Open the help, or close it if it is on top (F1 again, as its own keys say)."""
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.open_screen(HelpScreen, HelpScreen)

    # screens over the main one: at most one view, and one modal (help, a prompt) over it

    def open_screen(self, kind: type[Screen], make: Callable[[], Screen], callback: Callable | None = None) -> None:
        """Bring back the open screen of `kind` (closing what is over it), else open `make()` in its layer's place.

        The stack holds at most the main screen, one full-screen view (matrix, procedure, demos) and one modal
        (help, a path prompt) over it: a view key replaces the view and modal open, a modal replaces the
        modal open. A view key never stacks a copy (60 rounds of Ctrl+W, D, G stacked 182 screens).
        """
        stack = self.screen_stack
        same = next((i for i, screen in enumerate(stack) if isinstance(screen, kind)), None)
        if same is not None:
            keep = same + 1
        elif issubclass(kind, ModalScreen):
            keep = 2 if len(stack) > 1 and not isinstance(stack[1], ModalScreen) else 1  # over the view, if any
        else:
            keep = 1  # a view sits on the main screen
        if same is None and callback is None and len(stack) > keep:  # a view in a view's place: the main screen
            for _ in range(len(stack) - keep - 1):  # stays suspended (it would redraw, its footer recompose)
                self.pop_screen()
            self.switch_screen(make())
            return
        for _ in range(len(stack) - keep):
            self.pop_screen()
        if same is None:
            self.push_screen(make(), callback)

    async def on_event(self, event: events.Event) -> None:
        """Drop a typed character a full text box would refuse before Textual routes it (bindings, the box's queue).

        A terminal without bracketed paste types a paste as keys: 100 kB into the sum box took 14.5 s in tmux,
        4.5 s of it the bell Input rang for each refused key and most of the rest routing. Keys come faster than
        the box takes them, so it counts those on their way. No binding of the app is a printable character:
        the key would have gone to the box.
        """
        if isinstance(event, events.Key) and not event.is_forwarded and event.is_printable:
            box = self.focused
            if isinstance(box, BoundedInput):
                if box.full():
                    box.refuse_key()
                    return
                box.incoming += 1  # routed to it below: no binding takes a printable key
        await super().on_event(event)

    def notify(self, message: str, *, markup: bool = False, **kwargs) -> None:
        """Notify in plain text by default: paths and error messages may hold '[' and '[/]', which are not markup,
        and escape sequences, which are written out (core.world.text.shown), never sent to the terminal."""
        super().notify(message if markup else shown(message, newlines=True), markup=markup, **kwargs)

    def _title(self, key: str | None) -> str:
        return self.entries[key].title if key in self.entries else "no model"

    @guarded
    async def action_quit(self) -> None:
        self.supervisor.close()
        self.exit()

    @guarded
    def on_unmount(self) -> None:
        self.supervisor.close()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's last resort, which ends the app (return code 1): the traceback goes to app.log first."""
        log_error(error, "the app stopped")
        super()._handle_exception(error)
