"""The training controller: one fine-tuning job at a time in the engine, its loss (or reward) and status on the
train panel, each run's snapshots for the procedure view (F9) and a reward run's sampled groups (Shift+F1)."""

from __future__ import annotations

from pathlib import Path

from breadth.core.engine import protocol as p
from breadth.core.storage.header import CheckpointError
from breadth.core.storage.paths import BASE, folder_full, runs_dir
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.recipes import REWARD, recipe_of
from breadth.tui import messages as m
from breadth.tui.guard import guarded, one_line
from breadth.tui.parts import Part, hears
from breadth.tui.parts.catalogue import engine_gone
from breadth.tui.screens.procedure_view import ProcedureView, RunProgress, saved_run
from breadth.tui.screens.rollouts_view import Feed, RolloutsView
from breadth.tui.widgets.train_panel import TrainPanel


class TrainingJobs(Part):
    """The job being trained (`app.training`), the last job's id, and every run's progress by key."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.job = 0  # the last training job's id
        self.progress: dict[str, RunProgress] = {}  # run key -> its snapshots and their scores (F9)
        self.left_focus = None  # the widget focused once the job began (the Train button's going moves it)
        self.rollouts = Feed()  # the latest reward run's latest sampled group (Shift+F1)
        self.rollouts_job: int | None = None  # that run's job

    @hears(TrainPanel.TrainRequested)
    @guarded
    def train(self, message: TrainPanel.TrainRequested) -> None:
        """Start a fine-tuning job in the engine (if the engine is gone for good, say so at once)."""
        app = self.app
        if app.training is not None:
            return
        if app.supervisor.gave_up:
            app.train_panel.show_error(engine_gone())
            return
        full = folder_full(runs_dir())  # a served browser's own folder: the engine would refuse it too
        if full:
            app.train_panel.show_error(full)
            app.notify(full, severity="warning", timeout=10)  # whole: the panel's border cuts a long line
            return
        self.job += 1
        app.training = self.job
        app.train_panel.started(message.mix, message.settings)
        app.call_after_refresh(self._note_focus)  # after the disabled Train button has passed its focus on
        s = message.settings
        trained = tuple(name for name, _ in message.mix.counts)
        run = RunProgress(f"run:{self.job}", f"{message.mix.words()} #{self.job}", s.seed, s.steps, trained)
        run.coded = f"{message.mix.short()} #{self.job}"  # Shift+F5
        self.progress[run.key] = run
        if recipe_of(s).name == REWARD:
            self.rollouts_job = self.job
            self.rollouts.begin(run.title, s.steps, s.group, list(trained), run.coded)
        settings = message.settings.to_dict()
        app.supervisor.send(
            p.Train(
                self.job,
                message.mix.spec(),
                settings,
                str(BASE),
                str(runs_dir()),
                message.held_out,
                recipe=recipe_of(message.settings).name,
            )
        )

    @hears(p.Step)
    @guarded
    def plot_step(self, ev: p.Step) -> None:
        if ev.id == self.app.training:
            self.app.train_panel.step(ev.step, ev.steps, ev.loss, ev.elapsed, ev.metrics)
        if ev.id == self.rollouts_job and ev.metrics:
            self.rollouts.measured(latest=ev.metrics)
        run = self.progress.get(f"run:{ev.id}")
        if run is not None:
            run.losses.append(ev.loss)
            if isinstance(self.app.screen, ProcedureView) and self.app.screen.run is run:
                self.app.screen.add_loss(ev.loss)

    @hears(p.Measured)
    @guarded
    def show_measured(self, ev: p.Measured) -> None:
        """pass@G before training, under the reward plot."""
        if ev.id == self.app.training:
            self.app.train_panel.measured(ev.metrics)
        if ev.id == self.rollouts_job:
            self.rollouts.measured(before=ev.metrics)

    @hears(p.Rollouts)
    @guarded
    def keep_rollouts(self, ev: p.Rollouts) -> None:
        """The reward run's latest group, for the rollouts view (which redraws from it on its own timer)."""
        if ev.id == self.rollouts_job:
            self.rollouts.sampled(ev.step, ev.group)

    def watch_rollouts(self) -> None:
        """Open the rollouts view on the latest reward run's latest group (or its one line saying there is none)."""
        self.app.open_screen(RolloutsView, lambda: RolloutsView(self.rollouts))

    @hears(p.Evaluating)
    @guarded
    def say_evaluating(self, ev: p.Evaluating) -> None:
        if ev.id == self.app.training:
            self.app.train_panel.show("evaluating on held-out sums...")

    @hears(p.Trained)
    @guarded
    def say_trained(self, ev: p.Trained) -> None:
        """The job is done (the catalogue made its model current; the loss plot keeps its curves).

        One the engine could not save (`path` '') stays in its memory: the status line and a notification
        say why, and Ctrl+S saves it. A note beside a saved file (the run not recorded in the results store)
        is shown the same way, in addition to the saved message.
        """
        app = self.app
        if ev.id == app.training:
            app.training = None
            self.give_back_focus()
        if ev.id == self.rollouts_job:
            self.rollouts.end()
        if ev.key in self.progress:
            self.progress[ev.key].finished = True
        entry = app.catalogue.entries[ev.key]
        if ev.path and not ev.note:
            app.train_panel.show(f"done in {entry.run.train_seconds:.1f}s, saved in {Path(ev.path).parent}")
            app.notify(f"Trained and saved: {entry.title}", timeout=6)  # one line; the folder is in the status line
        elif ev.path:
            app.train_panel.show_error(f"done in {entry.run.train_seconds:.1f}s and saved; {ev.note}")
            app.notify(f"Trained and saved: {entry.title}", timeout=6)  # one line; the folder is in the status line
            app.notify(f"{entry.title}: {ev.note}", severity="warning", timeout=15)
        else:
            note = f"{ev.note or 'not saved; kept in memory'}, Ctrl+S to save it"
            app.train_panel.show_error(f"done in {entry.run.train_seconds:.1f}s; {note}")
            app.notify(f"Trained, {note}", severity="error", timeout=15)

    @hears(TrainPanel.StopRequested)
    @guarded
    def stop(self, message: TrainPanel.StopRequested) -> None:
        """Ask the engine to stop; the supervisor kills it if it does not confirm in time."""
        app = self.app
        if app.training is None:
            return
        job = app.training
        app.train_panel.show("stopping...")
        app.supervisor.stop(job, still_running=lambda: app.training == job, give_up=self.abort)

    @hears(p.Stopped)
    @guarded
    def end_stopped_job(self, ev: p.Stopped) -> None:
        self.app.training = None
        self.rollouts.end()
        self.give_back_focus()
        self.progress.pop(f"run:{ev.id}", None)  # the engine dropped its snapshots
        title = self.app.catalogue.title(self.app.current)
        self.app.train_panel.show(f"stopped at step {ev.steps}; kept {title}")

    @hears(m.failed("train"))
    @guarded
    def end_failed_job(self, ev: p.Failed) -> None:
        if ev.id == self.app.training:
            self.abort(f"training failed: {ev.message}")

    @hears(m.EngineDied)
    @guarded
    def lose_job(self, message: m.EngineDied) -> None:
        """The job and every run's snapshots died with the engine."""
        if not self.app.supervisor.closed:
            self.abort(f"engine stopped (exit code {message.exitcode}); training lost, model kept")
            self.progress.clear()

    def abort(self, text: str) -> None:
        self.rollouts.end()
        if self.app.training is not None:
            self.app.training = None
            self.app.train_panel.show_error(text)
            self.give_back_focus()

    # where typed sums go once the job ends

    def _note_focus(self) -> None:
        self.left_focus = self.app.focused

    def give_back_focus(self) -> None:
        """The job ended (done, stopped or failed): the sum box takes the focus back, so a typed sum is played,
        unless the user moved the focus since the job began (to the runs table, say): then it stays there."""
        focused = self.app.focused
        if focused is None or focused is self.left_focus or focused.disabled:
            self.app.playground.focus_sum()
        self.left_focus = None

    # watching the procedure form (snapshots)

    @hears(p.Snapshot)
    @guarded
    def note_snapshot(self, ev: p.Snapshot) -> None:
        run = self.progress.get(f"run:{ev.id}")
        if run is not None:
            run.kept.append(ev.step)
            self._refresh_procedure(run)

    @hears(p.SnapshotScored)
    @guarded
    def note_snapshot_scores(self, ev: p.SnapshotScored) -> None:
        run = self.progress.get(ev.key)
        if run is not None:
            run.scores[ev.step] = {name: HeldOutScore.from_dict(name, data) for name, data in ev.scores.items()}
            self._refresh_procedure(run)

    def _refresh_procedure(self, run: RunProgress) -> None:
        if isinstance(self.app.screen, ProcedureView) and self.app.screen.run is run:
            self.app.screen.refresh_run()

    def watch_procedure(self) -> None:
        """Open the procedure view on the current model's run trained here, else the run training now, else the
        current model's snapshots saved with its checkpoint (as the shipped models' are), else the latest run."""
        training = self.progress.get(f"run:{self.app.training}") if self.app.training is not None else None
        current = self.progress.get(self.app.current or "") or training or self._saved_run()
        run = current or next(reversed(self.progress.values()), None)
        if run is None and not any(isinstance(screen, ProcedureView) for screen in self.app.screen_stack):
            self.app.notify("train a model (F2) to watch its procedure form: snapshots are kept every 25 steps")
            return
        self.app.open_screen(ProcedureView, lambda: ProcedureView(run))

    def _saved_run(self) -> RunProgress | None:
        """The current model's snapshots saved with its checkpoint, already scored (a bad file: one line, None)."""
        entry = self.app.catalogue.entries.get(self.app.current or "")
        if entry is None or not entry.path:
            return None
        try:
            run = saved_run(entry.key, entry.title, entry.path, entry.run)
        except CheckpointError as e:  # SnapshotError is one
            self.app.notify(f"{entry.title}: snapshots not shown: {one_line(e)}", severity="warning", timeout=10)
            return None
        if run is not None:
            codes = self.app.codes  # the runs table's title as it stands, and the other way for Shift+F5
            run.title, run.coded = (entry.named(), entry.title) if codes else (entry.title, entry.named(codes=True))
            self.app.supervisor.load(entry.key, entry.path)  # the engine replays them: it must hold the model
        return run
