"""The live loss plot: a plotext chart redrawn on a timer from a bounded buffer, never per step.

A redraw costs 20-30 ms, so steps only append to a buffer and a 4 Hz timer redraws when something
changed. The loaded model's own training curve, if its checkpoint kept one, stays beside the live
curve as a grey reference. A chart shown to an audience (the procedure view's) names its axes: fine-tuning
step across, loss (log scale) up.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual_plotext import PlotextPlot

REDRAW_HZ = 4
MAX_POINTS = 400  # plotted points per curve; longer curves are strided down to this
X_LABEL = "fine-tuning step"  # the axes' names, on a chart that shows them
Y_LABEL = "loss (log scale)"


def _thin(values: list[float]) -> tuple[list[int], list[float]]:
    """At most MAX_POINTS (step, log10 loss) pairs."""
    stride = max(1, -(-len(values) // MAX_POINTS))
    xs = list(range(1, len(values) + 1, stride))
    return xs, [math.log10(max(values[x - 1], 1e-5)) for x in xs]


class LossPlot(PlotextPlot):
    """Training loss per step, log scale."""

    def __init__(self, labelled: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.labelled = labelled  # name the axes (X_LABEL, Y_LABEL): a row under the chart
        self.live: list[float] = []
        self.steps = 0  # planned steps of the live run (x-axis span)
        self.reference: list[float] = []
        self.reference_label = ""
        self.redraws = 0  # how many times the chart was rendered (for the benchmark)
        self._dirty = True
        self._span: tuple[float, float] | None = None  # log10 range of the data, for the y ticks

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1 / REDRAW_HZ, self._redraw_if_dirty)

    def start(self, steps: int) -> None:
        """Clear the live curve for a run of `steps` steps."""
        self.live, self.steps = [], steps
        self.draw()

    def add(self, loss: float) -> None:
        """Append one step's loss (cheap; drawing happens on the timer)."""
        self.live.append(loss)
        self._dirty = True

    def set_reference(self, losses: list[float], label: str) -> None:
        """Show `losses` as the grey reference curve (drawn at once: this happens rarely)."""
        self.reference, self.reference_label = list(losses), label
        self.draw()

    def _redraw_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            self.draw()

    def draw(self) -> None:
        """Redraw the chart now."""
        self._dirty = False
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        # log scale done by hand (log10 values, labelled ticks): plotext's own log axis crashes when small
        lows: list[float] = []
        if self.reference:
            xs, ys = _thin(self.reference)
            plt.plot(xs, ys, color="gray", marker="braille")
            lows += ys
        if self.live:
            xs, ys = _thin(self.live)
            plt.plot(xs, ys, color="cyan", marker="braille")
            lows += ys
        self._span = (min(lows), max(lows)) if lows else None
        span = max(self.steps, len(self.reference), len(self.live), 1)
        plt.xlim(1, span + 1)
        ticks = [1] + [t for t in range(span // 4, span + 1, max(1, span // 4))][:4]
        plt.xticks(ticks, [str(t) for t in ticks])
        if self.labelled:
            plt.xlabel(X_LABEL)
            plt.ylabel(Y_LABEL)
        self.refresh()

    def render(self):
        self.redraws += 1
        if self._span:
            # decade ticks, few enough for the height (plotext drops colliding ticks in an unstable order);
            # inside the data when there is room, since plotext draws ticks outside it on the frame
            if self.size.height >= 12:
                low, high = math.ceil(self._span[0]), math.floor(self._span[1])
            else:  # too few rows to place inner ticks: label the frame's bottom and top decades
                low, high = math.floor(self._span[0]), math.ceil(self._span[1])
            if high < low:
                low = high = round(sum(self._span) / 2)
            room = max(2, (self.size.height - 2) // 3)
            step = max(1, math.ceil((high - low) / (room - 1)))
            ticks = list(range(high, low - 1, -step))
            if self.size.height < 6:  # one row of canvas or two: two labels collide, and plotext keeps either
                ticks = ticks[:1]
            self.plt.yticks(ticks, [f"{10.0**d:g}" for d in ticks])
        try:
            return super().render()
        except Exception as e:  # noqa: BLE001 -- a plot must never take the app down on stage
            return Text(f"(plot unavailable: {e})", style="dim")
