"""The live reward plot of a run that learns from reward, and the line of numbers a person needs to trust it.

Where a demonstrations run streams its loss, a reward run streams its mean reward per step (0 to 1, a linear
axis) and, when it trains on several environments, each one's reward (at most MAX_ENVIRONMENT_LINES lines, in the
mix's order). As for the loss plot, a step only appends to a bounded buffer and a 4 Hz timer redraws.
`reward_line` says, under the plot: pass@G before training (and, near zero, that reward has nothing to
reinforce), the reward beside the share correct with the expected calls, answers made without a call, and
the model's characters per episode; then which colour is which environment.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual_plotext import PlotextPlot

from breadth.core.world.environments.environment import name_label
from breadth.core.world.episodes.rewards import ENVIRONMENT_REWARD, NEAR_ZERO
from breadth.tui.widgets.loss_plot import MAX_POINTS, REDRAW_HZ

SMALL = 6  # rows under which the chart drops its frame and step labels
MEAN_COLOUR = "cyan"
ENVIRONMENT_COLOURS = ("orange", "magenta", "green", "yellow")  # one per environment's line, readable on dark and light
MAX_ENVIRONMENT_LINES = len(ENVIRONMENT_COLOURS)  # environments drawn as lines of their own; more are left to the mean
NARROW = 56  # columns under which the line uses its short words (the train panel at 80x24 has 36)
RICH_COLOUR = {"cyan": "cyan", "orange": "dark_orange", "magenta": "magenta", "green": "green", "yellow": "yellow"}


def _thin(points: list[tuple[int, float]]) -> tuple[list[int], list[float]]:
    """At most MAX_POINTS (step, value) pairs, strided evenly."""
    stride = max(1, -(-len(points) // MAX_POINTS))
    kept = points[::stride]
    return [x for x, _ in kept], [y for _, y in kept]


class RewardPlot(PlotextPlot):
    """Mean reward per step, and each environment's when there are several; linear axis from 0 to 1."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.steps = 0  # planned steps of the live run (x-axis span)
        self.mean: list[tuple[int, float]] = []  # (step, mean reward)
        self.environments: dict[
            str, list[tuple[int, float]]
        ] = {}  # environment -> (step, its reward), first seen first
        self.redraws = 0  # how many times the chart was rendered (for the benchmark)
        self.draws = 0  # how many times the chart was rebuilt from the buffer (at most REDRAW_HZ a second)
        self._dirty = True

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1 / REDRAW_HZ, self._redraw_if_dirty)

    def start(self, steps: int, environments: list[str]) -> None:
        """Clear the curves for a run of `steps` steps on `environments` (lines for the first MAX_ENVIRONMENT_LINES)."""
        self.steps, self.mean = steps, []
        self.environments = {name: [] for name in environments[:MAX_ENVIRONMENT_LINES]} if len(environments) > 1 else {}
        self.draw()

    def add(self, step: int, metrics: dict) -> None:
        """Append one step's rewards (cheap; drawing happens on the timer). A metric that is not a number is skipped."""
        if _number(metrics.get("reward")):
            self.mean.append((step, float(metrics["reward"])))
        for name, points in self.environments.items():
            value = metrics.get(ENVIRONMENT_REWARD + name)  # missing at a step that drew none of its sums
            if _number(value):
                points.append((step, float(value)))
        self._dirty = True

    def _redraw_if_dirty(self) -> None:
        if self._dirty:
            self.draw()

    def draw(self) -> None:
        """Redraw the chart now."""
        self._dirty = False
        self.draws += 1
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        for colour, points in zip(ENVIRONMENT_COLOURS, self.environments.values(), strict=False):
            if points:
                plt.plot(*_thin(points), color=colour, marker="braille")
        if self.mean:  # drawn last: on top
            plt.plot(*_thin(self.mean), color=MEAN_COLOUR, marker="braille")
        span = max(self.steps, self.mean[-1][0] if self.mean else 1, 1)
        plt.xlim(1, span + 1)
        ticks = [1] + [t for t in range(span // 4, span + 1, max(1, span // 4))][:4]
        plt.xticks(ticks, [str(t) for t in ticks])
        plt.ylim(0, 1)
        if self.size.height >= SMALL:
            plt.yticks([0, 0.5, 1], ["0", ".5", "1"])
        else:  # a few rows: the canvas only, no frame or step labels, so that the curve keeps the rows
            plt.frame(False)
            plt.xticks([])
            plt.yticks([0, 1], ["0", "1"] if self.size.height > 1 else ["", ""])
        self.refresh()

    def render(self):
        self.redraws += 1
        try:
            return super().render()
        except Exception as e:  # noqa: BLE001 -- a plot must never take the app down on stage
            return Text(f"(plot unavailable: {e})", style="dim")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def reward_line(
    before: dict | None, latest: dict | None, group: int, environments: list[str], width: int = 80, codes: bool = False
) -> Text:
    """What to read beside the curve: pass@G before training (said plainly when near zero), the step's reward with
    the share correct with the expected calls, answers without a call, characters per episode, the colour key (its
    environments in words, `two-digit`, as many to a row as `width` holds; by code with `codes`). Under NARROW columns
    (the train panel at 80x24) the same numbers in shorter words, one row each."""
    narrow = width < NARROW
    rows: list[Text] = []
    if before is not None and _number(before.get("pass")):
        share = before["pass"]
        row = Text(
            f"pass@{group} {100 * share:.0f}% before" if narrow else f"pass@{group} before training {100 * share:.0f}%"
        )
        row.stylize("bold")
        if share < NEAR_ZERO:
            if narrow:
                row.append(": nothing to learn" if share == 0 else ": little to learn", "bold yellow")
            else:
                nothing = "nothing" if share == 0 else "next to nothing"
                row.append(f": reward has {nothing} to reinforce", "bold yellow")
        rows.append(row)
    elif before is None:
        rows.append(Text(f"measuring pass@{group} before training...", "dim"))
    if latest:
        said = []
        if _number(latest.get("reward")):
            said.append(f"reward {latest['reward']:.2f}")
        if _number(latest.get("expected")):
            said.append(f"{'expected' if narrow else 'with the expected calls'} {latest['expected']:.2f}")
        more = []
        if _number(latest.get("no_call")):
            more.append(f"no call {100 * latest['no_call']:.0f}%")
        chars = latest.get("chars")
        if isinstance(chars, (int, float)) and not isinstance(chars, bool) and math.isfinite(chars):
            more.append(f"{chars:.0f} chars/episode")
        rows += [Text(" · ".join(said)), Text(" · ".join(more))] if narrow else [Text(" · ".join(said + more))]
    if len(environments) > 1:
        keys = [Text("━ mean", RICH_COLOUR[MEAN_COLOUR])]
        for colour, name in zip(ENVIRONMENT_COLOURS, environments[:MAX_ENVIRONMENT_LINES], strict=False):
            keys.append(Text(f"━ {name_label(name, codes)}", RICH_COLOUR[colour]))
        if len(environments) > MAX_ENVIRONMENT_LINES:
            keys.append(Text(f"(+{len(environments) - MAX_ENVIRONMENT_LINES} in the mean)", "dim"))
        key = Text()
        for entry in keys:  # a new row where the next entry would not fit: words are longer than codes
            if key.plain and key.cell_len + 1 + entry.cell_len > width:
                rows.append(key)
                key = Text()
            key.append(" " if key.plain else "").append_text(entry)
        rows.append(key)
    return Text("\n").join(row for row in rows if row.plain)
