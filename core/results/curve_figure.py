"""The breadth curve as a picture: training and held-out success against N, the ceiling as a band, 95% intervals."""

from __future__ import annotations

from pathlib import Path

from breadth.core.results.breadth_curve import CEILING
from breadth.core.results.curve_points import CurvePoint
from breadth.core.results.figures import finish, new_plot, pyplot, success_axes


def curve_figure(points: list[CurvePoint], out: Path, what: str) -> list[Path]:
    """Success on the training environments and on the held-out ones against N (log scale), with the ceiling (the
    held-out environments trained directly) as a shaded band; `what` names the pool in the title."""
    plt = pyplot()
    fig, ax = new_plot(plt)
    line = [p for p in points if p.n != CEILING]
    xs = [p.n for p in line]
    for attr, label, style in (("train", "training environments", {"linestyle": "--"}), ("held", "held out", {})):
        values = [getattr(p, attr) for p in line]
        mean = [100 * v[0] for v in values]
        err = [[100 * (v[0] - v[1]) for v in values], [100 * (v[2] - v[0]) for v in values]]
        ax.errorbar(xs, mean, yerr=err, marker="o", capsize=3, label=label, **style)
    ceiling = next((p for p in points if p.n == CEILING), None)
    if ceiling is not None and xs:
        low, high = 100 * ceiling.held[1], 100 * ceiling.held[2]
        ax.axhspan(
            low,
            high,
            color="gray",
            alpha=0.2,
            label=f"ceiling: held out trained directly ({100 * ceiling.held[0]:.0f}%)",
        )
    if xs:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.minorticks_off()
    pairs, splits = max((p.pairs for p in points), default=0), max((p.splits for p in points), default=0)
    unit = f"95% intervals over {splits} splits" if splits > 1 else "one split: intervals over seeds"
    success_axes(ax, "training environments (N)", f"the breadth curve: {what} ({pairs} split x seed pairs; {unit})", 8)
    return finish(plt, fig, out)
