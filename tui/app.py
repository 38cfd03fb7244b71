"""BreadthApp: the training panel, the score panel and the playground, wired to the engine process.

The app never imports torch: checkpoints' metadata fills the screen at once, the engine process
starts after the first frame, and everything it does arrives as events (`core.frontends.protocol`), read by
a thread worker and handled here on the UI thread.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer

from core.frontends import protocol as p
from core.world.files import write_atomic
from core.world.header import CheckpointError, read_metadata
from core.world.mix import slug
from core.world.paths import BASE, runs_dir
from core.world.presets import DEFAULT_PRESET
from core.world.records import RunMeta

from .catalog import ModelEntry, shipped_entries
from .engine import EngineGone, EngineProcess
from .messages import EngineDied, EngineEvent
from .screens.help import HelpScreen
from .screens.path_prompt import PathPrompt
from .widgets.loss_plot import LossPlot
from .widgets.playground import Playground
from .widgets.score_panel import ScorePanel
from .widgets.train_panel import TrainPanel

STOP_GRACE = 2.0  # seconds to wait for the engine to confirm a Stop before killing it
MAX_RESTARTS = 3  # engine restarts allowed within RESTART_WINDOW before giving up
RESTART_WINDOW = 60.0


class BreadthApp(App):
    """Choose a mix, watch it train, probe it token by token."""

    TITLE = "breadth"
    ENABLE_COMMAND_PALETTE = False
    SUB_TITLE = "breadth of training environments is what transfers"
    CSS_PATH = "breadth.tcss"
    BINDINGS = [
        Binding("ctrl+t", "train", "Train", priority=True),
        Binding("ctrl+x", "stop", "Stop", priority=True),
        Binding("ctrl+o", "pace", "Pace", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+l", "load", "Load", priority=True),
        Binding("ctrl+n", "next_model", "Next", priority=True),
        Binding("f1", "help", "Help", priority=True),
    ]

    def __init__(self, engine_factory=None, start_engine: bool = True) -> None:
        super().__init__()
        self.engine_factory = engine_factory or (lambda: EngineProcess(runs_dir().parent / "engine.log"))
        self.engine = None
        self.auto_start = start_engine
        self.entries: dict[str, ModelEntry] = {}
        self.current: str | None = None
        self.loaded: set[str] = set()  # keys the engine holds
        self.job = 0
        self.training: int | None = None
        self.probe = 0
        self.engine_ready = False
        self.restarts: list[float] = []
        self._quitting = False

    def compose(self) -> ComposeResult:
        # kept as attributes: a modal screen on top would hide them from query_one
        self.train_panel = TrainPanel(id="train-panel")
        self.score_panel = ScorePanel(id="score-panel")
        self.playground = Playground(id="playground")
        with Horizontal(id="top"):
            yield self.train_panel
            yield self.score_panel
        yield self.playground
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.train_panel.border_title = "train"
        self.score_panel.border_title = "held-out scores"
        self.playground.border_title = "playground"
        for entry in shipped_entries():
            self.entries[entry.key] = entry
        default = f"shipped:{DEFAULT_PRESET}"
        self.current = default if default in self.entries else next(iter(self.entries), None)
        self._refresh_models()
        self.playground.query_one("#sum").focus()
        if self.auto_start:
            self.call_after_refresh(self._ensure_engine)  # torch loads after the first frame

    def _ensure_engine(self):
        """The engine, started now if it has not been yet (a key pressed before the first frame)."""
        if self.engine is None:
            self.start_engine()
        return self.engine

    # the engine

    def start_engine(self) -> None:
        """Start (or restart) the engine process and load the current model."""
        self.engine_ready = False
        self.loaded.clear()
        self.engine_status("engine starting (loading torch)...")
        self.engine = self.engine_factory()
        self.engine.start()
        if self.current:
            self._load(self.current)
        self.pump(self.engine)

    @work(thread=True, exclusive=True, group="engine")
    def pump(self, engine) -> None:
        """Read engine events and post them to the app until the engine is gone."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        while not worker.is_cancelled:
            try:
                event = engine.read()
            except EngineGone as e:
                if engine is self.engine and not worker.is_cancelled:
                    self.post_message(EngineDied(e.exitcode, e.last_words))
                return
            self.post_message(EngineEvent(event))

    @on(EngineEvent)
    def handle_event(self, message: EngineEvent) -> None:
        """Route one engine event to the panel it concerns."""
        if self._quitting:
            return
        ev = message.event
        train, play = self.train_panel, self.playground
        if isinstance(ev, p.Ready):
            self.engine_ready = True
            self.engine_status("engine ready")
            if "error" not in play.query_one("#sum-message").classes:
                play.say("")
        elif isinstance(ev, p.Step) and ev.id == self.training:
            train.step(ev.step, ev.steps, ev.loss, ev.elapsed)
        elif isinstance(ev, p.Evaluating) and ev.id == self.training:
            train.show("evaluating on held-out sums...")
        elif isinstance(ev, p.Trained):
            self._trained(ev)
        elif isinstance(ev, p.Stopped):
            self.training = None
            train.set_training(False)
            train.show(f"stopped at step {ev.steps}; kept {self._title(self.current)}")
        elif isinstance(ev, p.Loaded):
            self.loaded.add(ev.key)
        elif isinstance(ev, p.Char):
            play.char(ev.id, ev.role, ev.char)
        elif isinstance(ev, p.Played):
            play.finish(ev.id, ev.solved, ev.failure, ev.answer)
        elif isinstance(ev, p.Failed):
            self._failed(ev)

    @on(EngineDied)
    def engine_died(self, message: EngineDied) -> None:
        """Say what happened, fail what was in flight, and restart the engine (a few times at most)."""
        if self._quitting:
            return
        self._abort_training(f"engine stopped (exit code {message.exitcode}); training lost, model kept")
        for probe, view in self.playground.probes.items():
            if view.state.verdict is None:
                self.playground.fail(probe, "the engine stopped")
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW] + [now]
        if len(self.restarts) > MAX_RESTARTS:
            self.engine_status("engine keeps failing: restart the app")
            self.notify("The engine failed repeatedly; not restarting it.", severity="error", timeout=10)
            return
        why = f": {message.last_words}" if message.last_words else ""
        self.notify(f"The engine stopped (exit code {message.exitcode}){why}; restarting it.", severity="error")
        self.start_engine()

    def _abort_training(self, text: str) -> None:
        if self.training is not None:
            self.training = None
            panel = self.train_panel
            panel.set_training(False)
            panel.show_error(text)

    def _failed(self, ev: p.Failed) -> None:
        if ev.what == "train":
            if ev.id == self.training:
                self._abort_training(f"training failed: {ev.message}")
        elif ev.what == "play":
            self.playground.fail(ev.id, ev.message)
        else:
            self.notify(f"{ev.what} failed: {ev.message}", severity="error")

    def _trained(self, ev: p.Trained) -> None:
        if ev.id == self.training:
            self.training = None
            self.train_panel.set_training(False)
        run = RunMeta.from_dict(ev.meta)
        entry = ModelEntry(ev.key, f"{run.mix_label} #{ev.id}", ev.path, run, "trained")  # '#n': n-th run here
        self.entries[ev.key] = entry
        self.loaded.add(ev.key)
        self.current = ev.key
        self._refresh_models(reference=False)
        self.train_panel.show(f"done in {run.train_seconds:.1f}s and saved")
        self.notify(f"Trained and saved: {ev.path}", timeout=6)

    # actions

    def action_train(self) -> None:
        self.train_panel.ask_train()

    @on(TrainPanel.TrainRequested)
    def train(self, message: TrainPanel.TrainRequested) -> None:
        """Start a fine-tuning job in the engine."""
        if self.training is not None:
            return
        self.job += 1
        self.training = self.job
        self.train_panel.started(message.mix, message.settings)
        self._ensure_engine().send(
            p.Train(
                self.job, message.mix.spec(), message.settings.to_dict(), str(BASE), str(runs_dir()), message.held_out
            )
        )

    def action_stop(self) -> None:
        self.train_panel.ask_stop()

    @on(TrainPanel.StopRequested)
    def stop(self) -> None:
        """Ask the engine to stop; kill it if it does not confirm within STOP_GRACE."""
        if self.training is None:
            return
        job = self.training
        self.engine.send(p.Stop(job))
        self.train_panel.show("stopping...")
        self.set_timer(STOP_GRACE, lambda: self._force_stop(job))

    def _force_stop(self, job: int) -> None:
        if self.training != job or self.engine is None:
            return  # the engine confirmed in time
        if not self.engine_ready:  # still importing torch: the Stop waits in its queue, give it time
            self.set_timer(STOP_GRACE, lambda: self._force_stop(job))
            return
        self._abort_training(f"stopped: the engine did not answer within {STOP_GRACE:.0f}s and was restarted")
        self.engine.kill()  # the pump notices the death and restarts the engine

    def action_pace(self) -> None:
        name = self.playground.cycle_pace()
        self.notify(f"streaming pace: {name}", timeout=1.5)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_next_model(self) -> None:
        keys = list(self.entries)
        if keys:
            i = keys.index(self.current) + 1 if self.current in keys else 0
            self.switch_to(keys[i % len(keys)])

    @on(ScorePanel.ModelChosen)
    def chosen(self, message: ScorePanel.ModelChosen) -> None:
        self.switch_to(message.key)

    def switch_to(self, key: str) -> None:
        """Make `key` the model that plays and whose scores show."""
        if key not in self.entries:
            return
        self.current = key
        self._load(key)
        self._refresh_models()

    def _load(self, key: str) -> None:
        if key not in self.loaded and self.engine is not None:  # (a new engine loads the current model)
            self.engine.send(p.Load(key, self.entries[key].path))

    @on(Playground.PlayRequested)
    def play(self, message: Playground.PlayRequested) -> None:
        """Play a sum with the current model."""
        playground = self.playground
        if self.current is None:
            playground.say("no model loaded: load a checkpoint (Ctrl+L) or train one (Ctrl+T)", error=True)
            return
        if not self.engine_ready:
            playground.say("the engine is starting (loading torch); this sum plays as soon as it is ready")
        self.probe += 1
        playground.begin(self.probe, message.problem, self._title(self.current))
        self._ensure_engine().send(p.Play(self.probe, self.current, message.text))

    def action_save(self) -> None:
        """Save the current model's checkpoint under a new path."""
        entry = self.entries.get(self.current) if self.current else None
        if entry is None:
            self.notify("no model to save", severity="warning")
            return
        default = f"breadth-{slug(entry.run.mix or 'model')}-s{entry.seed}.safetensors"

        def check(path: str) -> str | None:
            target = Path(path).expanduser()
            if target.exists():
                return f"{target} exists; choose another name"
            if not target.parent.is_dir():
                return f"no such folder: {target.parent}"
            return None

        def done(path: str | None) -> None:
            if path:
                try:
                    write_atomic(Path(path).expanduser(), Path(entry.path).read_bytes())
                except OSError as e:
                    self.notify(f"could not save: {e.strerror or e}", severity="error")
                    return
                self.notify(f"saved {path}")

        self.push_screen(PathPrompt("Save the loaded model to:", default, check), done)

    def action_load(self) -> None:
        """Load a checkpoint from a path and switch to it."""
        found: dict[str, RunMeta] = {}

        def check(path: str) -> str | None:
            try:
                found[path] = read_metadata(Path(path).expanduser())
            except CheckpointError as e:
                return str(e)
            return None

        def done(path: str | None) -> None:
            if path:
                key = f"file:{Path(path).expanduser().resolve()}"
                meta = found[path]
                self.entries[key] = ModelEntry(key, Path(path).name[:18], str(Path(path).expanduser()), meta, "loaded")
                self.loaded.discard(key)
                self.switch_to(key)

        self.push_screen(PathPrompt("Load a checkpoint from:", "", check), done)

    # display

    def engine_status(self, text: str) -> None:
        """Say what the engine is doing, in the playground's bottom border."""
        self.playground.border_subtitle = text

    def _title(self, key: str | None) -> str:
        return self.entries[key].title if key in self.entries else "no model"

    def _refresh_models(self, reference: bool = True) -> None:
        entry = self.entries.get(self.current) if self.current else None
        scores = self.score_panel
        scores.show_model(entry)
        scores.set_runs(list(self.entries.values()), self.current)
        if reference and entry is not None:
            self.train_panel.query_one(LossPlot).set_reference(list(entry.run.losses), entry.title)

    async def action_quit(self) -> None:
        self._quitting = True
        if self.engine is not None:
            self.engine.close()
        self.exit()

    def on_unmount(self) -> None:
        self._quitting = True
        if self.engine is not None:
            self.engine.close()
