"""The live loss plot: a plotext chart redrawn on a timer from a bounded buffer, never per step.

A redraw costs 20-30 ms, so steps only append to a buffer and a 4 Hz timer redraws when something
changed. The loaded model's own training curve, if its checkpoint kept one, stays beside the live
curve as a grey reference.
"""

from __future__ import annotations

from textual_plotext import PlotextPlot

REDRAW_HZ = 4
MAX_POINTS = 400  # plotted points per curve; longer curves are strided down to this


def _thin(values: list[float]) -> tuple[list[int], list[float]]:
    stride = max(1, -(-len(values) // MAX_POINTS))
    xs = list(range(1, len(values) + 1, stride))
    return xs, [max(values[x - 1], 1e-5) for x in xs]  # log scale: keep above zero


class LossPlot(PlotextPlot):
    """Training loss per step, log scale."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.live: list[float] = []
        self.steps = 0  # planned steps of the live run (x-axis span)
        self.reference: list[float] = []
        self.reference_label = ""
        self.redraws = 0  # how many times the chart was rendered (for the benchmark)
        self._dirty = True

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1 / REDRAW_HZ, self._redraw_if_dirty)

    def start(self, steps: int) -> None:
        """Clear the live curve for a run of `steps` steps."""
        self.live, self.steps, self._dirty = [], steps, True

    def add(self, loss: float) -> None:
        """Append one step's loss (cheap; drawing happens on the timer)."""
        self.live.append(loss)
        self._dirty = True

    def set_reference(self, losses: list[float], label: str) -> None:
        """Show `losses` as the grey reference curve."""
        self.reference, self.reference_label, self._dirty = list(losses), label, True

    def _redraw_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            self.draw()

    def draw(self) -> None:
        """Redraw the chart now."""
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.yscale("log")
        if self.reference:
            xs, ys = _thin(self.reference)
            plt.plot(xs, ys, color="gray", marker="braille")
        if self.live:
            xs, ys = _thin(self.live)
            plt.plot(xs, ys, color="cyan", marker="braille")
        span = max(self.steps, len(self.reference), len(self.live), 1)
        plt.xlim(1, span + 1)
        ticks = [1] + [t for t in range(span // 4, span + 1, max(1, span // 4))][:4]
        plt.xticks(ticks, [str(t) for t in ticks])
        self.refresh()

    def render(self):
        self.redraws += 1
        return super().render()
