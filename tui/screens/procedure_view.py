"""Watching the procedure form: a fine-tune's kept snapshots, replayed one step at a time (F9).

While the app fine-tunes, the engine keeps a copy of the weights at step 0, every 25 steps and at the
end; a model whose checkpoint was saved with its snapshots (the shipped ones, runs saved by the app or
`breadth train`) brings its own, already scored, so the view opens on them at once. This view replays
one fixed probe per environment with the snapshot at the chosen step (Left/Right, Home/End), each through the
engine protocol (`Probe` with `step`), and shows each environment's held-out score at that step (20 sums per
environment: read from the saved snapshots, or scored by the engine in the background after training). By
default it shows the run's own environments and one it never trained on; `a` shows every environment. Under the
run's loss curve, the score against step: the step where an environment's procedure forms is where its curve
leaves zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from breadth.core.engine import protocol as p
from breadth.core.storage.snapshot_file import saved_snapshots
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import name_for
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.transcript import visible
from breadth.tui.guard import guarded
from breadth.tui.widgets.loss_plot import LossPlot
from breadth.tui.widgets.race import char_style

OTHERS = "others"  # the score plot's line for the mean over environments the run did not train on
ASKED = -1  # a line's probe id while the app has not yet answered its ReplayRequested
COLORS = ("cyan", "magenta", "green", "yellow", "blue")  # the score plot's lines, in order (plotext and rich names)


@dataclass
class RunProgress:
    """What the app knows of one fine-tune's snapshots: the steps kept and the scores at each."""

    key: str  # the engine's name for the run's model (`run:N`)
    title: str
    seed: int
    steps: int  # planned
    trained: tuple[str, ...]  # environments with demonstrations
    kept: list[int] = field(default_factory=list)  # steps with a snapshot, in order
    scores: dict[int, dict[str, HeldOutScore]] = field(default_factory=dict)  # step -> environment -> score
    losses: list[float] = field(default_factory=list)
    finished: bool = False
    saved: bool = False  # its snapshots were saved with the model's checkpoint (not trained in this session)
    coded: str = ""  # its title in codes (`a3x1 35 #2`), where a person asked for them; '' if the same

    def title_for(self, codes: bool = False) -> str:
        """Its title in words, or in codes where a person asked for them (Shift+F5)."""
        return (self.coded or self.title) if codes else self.title

    @property
    def environments(self) -> tuple[str, ...]:
        """The environments shown by default: the run's own, then the first it never trained on (the held-out one)."""
        own = tuple(name for name in REGISTERED if name in self.trained)
        other = next((name for name in REGISTERED if name not in self.trained), None)
        return own + ((other,) if other else ())


def saved_run(key: str, title: str, path: str, run: RunMeta) -> RunProgress | None:
    """The snapshots saved beside the checkpoint at `path` (the model loaded as `key`) as a finished run, with their
    scores; None if none were saved. SnapshotError (one line) for a sidecar that is malformed or not this model's."""
    saved = saved_snapshots(path, run) if path and run.mix else None
    if saved is None or not saved.steps:
        return None
    trained = tuple(name for name, _ in Mix.parse(run.mix).counts)
    steps = getattr(run.settings, "steps", saved.steps[-1].step)
    return RunProgress(
        key,
        title,
        saved.header.seed,
        steps,
        trained,
        [s.step for s in saved.steps],
        {s.step: s.scores for s in saved.steps},
        list(run.losses),
        finished=True,
        saved=True,
    )


def probes(seed: int) -> list[Problem]:
    """The fixed probe per environment: its first held-out sum for the run's seed (never a demonstration)."""
    return [environment.held_out(seed, 1)[0] for environment in REGISTERED.values()]


@dataclass
class Line:
    """One environment's probe as replayed at the chosen step."""

    problem: Problem
    probe: int = 0  # the Probe id in flight or done (0: none yet, ASKED: asked for)
    chars: list[p.Char] = field(default_factory=list)  # as the engine streamed them
    verdict: Text | None = None
    step: int | None = None  # the step it was last replayed at


class ProcedureView(Screen):
    """Replay a fixed probe per environment at each kept step of a run; per-environment scores and their curve by
    step."""

    codes = False  # environments and runs named by codes, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("left", "step(-1)", "Earlier"),
        Binding("right", "step(1)", "Later"),
        Binding("home", "step(-1000)", "First", show=False),
        Binding("end", "step(1000)", "Last", show=False),
        Binding("a", "all_environments", "All environments"),
    ]

    @dataclass
    class ReplayRequested(Message):
        """Replay line `line`'s probe `text` on the snapshot at `step` of run `key`; the app answers with `sent`."""

        view: ProcedureView
        line: int  # index into the view's lines
        key: str
        text: str
        step: int

    def __init__(self, run: RunProgress) -> None:
        super().__init__()
        self.run = run
        self.at = len(run.kept) - 1  # index into run.kept: start at the latest snapshot
        self.lines = [Line(problem) for problem in probes(run.seed)]
        self.all_environments = False  # every environment's line, or (False) the run's own and one held out

    def compose(self) -> ComposeResult:
        yield Static("", id="procedure-status")
        with Vertical(id="procedure-lines"):
            for i, line in enumerate(self.lines):
                widget = Static("", id=f"procedure-line-{i}", classes="procedure-line")
                widget.display = self._shown(line)
                yield widget
        self.plots = (LossPlot(labelled=True, id="procedure-loss"), PlotextPlot(id="procedure-scores"))
        yield self.plots[0]
        yield Static("", id="procedure-legend")
        yield self.plots[1]
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        loss = self.query_one("#procedure-loss", LossPlot)
        loss.start(self.run.steps)
        for value in self.run.losses:
            loss.add(value)
        self.refresh_run()

    def on_unmount(self) -> None:
        """Let go of the plots: textual-plotext subscribes each to the app's theme and never unsubscribes, which
        would keep every closed view alive."""
        for plot in self.plots:
            self.app.theme_changed_signal.unsubscribe(plot)

    def show_codes(self, codes: bool) -> None:
        """Shift+F5: the title and the environments in codes, or in words again (as the app says: the view
        never reads the app for it)."""
        self.codes = codes
        self.show_lines()
        self.draw_scores()

    @property
    def step(self) -> int | None:
        """The step shown, or None while the run has no snapshot yet."""
        return self.run.kept[self.at] if 0 <= self.at < len(self.run.kept) else None

    @guarded
    def action_step(self, by: int) -> None:
        if not self.run.kept:
            return
        at = min(max(self.at + by, 0), len(self.run.kept) - 1)
        if at != self.at:
            self.at = at
            self.replay()

    @guarded
    def action_at_step(self, step: int) -> None:
        """Show the snapshot kept at fine-tuning step `step`, or the last kept before it (a talk's moment)."""
        before = [i for i, kept in enumerate(self.run.kept) if kept <= step]
        if before:
            self.action_step(before[-1] - self.at)

    @guarded
    def action_all_environments(self) -> None:
        """Show every environment's line, or only the run's own and one held out; lines shown anew are replayed."""
        self.all_environments = not self.all_environments
        for i, line in enumerate(self.lines):
            self.query_one(f"#procedure-line-{i}", Static).display = self._shown(line)
        if self.step is not None:
            self.replay(only_stale=True)
        self.show_lines()
        self.draw_scores()

    def _shown(self, line: Line) -> bool:
        return self.all_environments or line.problem.environment in self.run.environments

    def refresh_run(self) -> None:
        """The run changed (a snapshot kept or scored, a loss step): redraw; replay if nothing is shown yet."""
        if self.at < 0 and self.run.kept:
            self.at = len(self.run.kept) - 1
        if self.step is not None and not any(line.probe for line in self.lines):
            self.replay()
        self.show_lines()
        self.draw_scores()

    def add_loss(self, loss: float) -> None:
        self.query_one("#procedure-loss", LossPlot).add(loss)

    def replay(self, only_stale: bool = False) -> None:
        """Ask for each shown environment's probe on the snapshot at the chosen step (one Probe each, through the
        engine); `only_stale`: only those not already played at that step."""
        for i, line in enumerate(self.lines):
            if not self._shown(line) or (only_stale and line.step == self.step):
                continue
            line.chars, line.verdict, line.probe, line.step = [], None, ASKED, self.step
            self.post_message(
                self.ReplayRequested(self, i, self.run.key, line.problem.prompt.removesuffix("="), self.step)
            )
        self.show_lines()
        self.draw_scores()

    # events routed here by the app (probe ids this view sent)

    def sent(self, line: int, probe: int, why: str = "") -> None:
        """Line `line`'s replay is probe `probe`, or (`why`) it could not be sent."""
        self.lines[line].probe = probe
        if why:
            self.lines[line].verdict = Text(f" not played: {why}", style="red")
            self._show(self.lines[line])

    def char(self, event: p.Char) -> None:
        line = self._line(event.id)
        if line is not None:
            line.chars.append(event)
            self._show(line)

    def finish(self, event: p.ProbeFinished) -> None:
        line = self._line(event.id)
        if line is not None:
            mark, style = ("✓", "bold green") if event.solved else ("✗", "bold red")
            line.verdict = Text.assemble((f" {mark} ", style), ("" if event.solved else event.failure or "", "dim"))
            self._show(line)

    def fail(self, probe: int, message: str) -> None:
        line = self._line(probe)
        if line is not None:
            line.verdict = Text(f" not played: {message}", style="red")
            self._show(line)

    def _line(self, probe: int) -> Line | None:
        return next((line for line in self.lines if line.probe == probe), None)

    # drawing

    def show_lines(self) -> None:
        step = self.step
        where = (
            "no snapshot yet: the first is kept before the first step"
            if step is None
            else f"step {step} of {self.run.steps} (snapshot {self.at + 1} of {len(self.run.kept)})"
        )
        scored = "" if step in self.run.scores else " · scores come when the engine has scored this snapshot"
        environments = f"{sum(map(self._shown, self.lines))} of {len(self.lines)} environments"  # `a` for all
        self.query_one("#procedure-status", Static).update(
            Text.assemble((self.run.title_for(self.codes), "bold"), f" · {where} · {environments}{scored}")
        )
        for line in self.lines:
            self._show(line)

    def _show(self, line: Line) -> None:
        i = self.lines.index(line)
        environment = REGISTERED[line.problem.environment]
        mark = "*" if environment.name in self.run.trained else " "
        score = self.run.scores.get(self.step, {}).get(environment.name)
        codes = self.codes  # environments in words, or in codes where a person asked (Shift+F5)
        width = max(
            len(name_for(REGISTERED[o.problem.environment], codes)) for o in self.lines if self._shown(o) or o is line
        )
        text = Text.assemble(
            (f"{mark}{name_for(environment, codes):<{width + 1}}", "bold" if mark == "*" else ""),
            (f"{score.percent():>5} " if score else "    - ", "cyan"),
        )
        for char in line.chars:
            text.append(visible(char.char), char_style(char))
        if line.verdict is not None:
            text.append_text(line.verdict)
        elif line.probe and not line.chars:
            text.append("replaying…", "dim")  # asked for: the engine plays it once it is ready and free
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one(f"#procedure-line-{i}", Static).update(text)

    def draw_scores(self) -> None:
        """Held-out score against step: each trained environment, and the mean over the others; the chosen step
        marked."""
        plot = self.query_one("#procedure-scores", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        steps = sorted(self.run.scores)
        own = tuple(name for name in self.run.environments if name in self.run.trained)[:4]
        held_out = tuple(name for name in self.run.environments if name not in self.run.trained)
        lines = (*own, OTHERS) if self.all_environments or not held_out else (*own, *held_out)
        legend = Text("held-out % by step" + ("" if steps else ": scored after training") + "  ", style="dim")
        for n, name in enumerate(lines):
            label = OTHERS if name == OTHERS else name_for(REGISTERED[name], self.codes)
            legend.append(f" {label} ", style=f"bold {COLORS[n % len(COLORS)]}")
            if steps:
                plt.plot(
                    steps, [_percent(self.run, s, name) for s in steps], marker="braille", color=COLORS[n % len(COLORS)]
                )
        self.query_one("#procedure-legend", Static).update(legend)
        if self.step is not None:
            plt.vline(self.step, "gray")
        plt.xlim(0, max(self.run.steps, 1))
        plt.ylim(0, 100)
        plt.yticks([0, 50, 100])
        plot.refresh()


def _percent(run: RunProgress, step: int, name: str) -> float:
    scores = run.scores.get(step, {})
    if name != OTHERS:
        return 100 * scores[name].rate if name in scores else 0.0
    others = [sc.rate for fam, sc in scores.items() if fam not in run.trained]
    return 100 * sum(others) / len(others) if others else 0.0
