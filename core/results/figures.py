"""Pictures for slides: held-out success per family against a swept value, with 95% intervals over seeds.

matplotlib with its Agg backend writes PNG and SVG without a display; it is imported only when a
picture is drawn, so nothing else pays for it.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..world.families import FAMILIES
from ..world.files import write_atomic
from ..world.mix import Mix
from .report import CellSummary, varied


class FigureError(ValueError):
    """The cells do not make a curve (no single swept value); one line."""


def axis(cells: list[CellSummary]) -> tuple[str, list[float]]:
    """The swept quantity and each cell's value on it: a setting, or a share of demonstrations between families."""
    what = varied(cells)
    if len(what) != 1:
        raise FigureError(f"a curve needs exactly one swept quantity; these cells vary {', '.join(what) or 'nothing'}")
    if what[0] != "mix":
        return what[0].replace("_", " "), [float(getattr(c.key.settings, what[0])) for c in cells]
    mixes = [dict(Mix.parse(c.key.mix).counts) for c in cells]
    names = sorted({name for counts in mixes for name in counts}, key=list(FAMILIES).index)
    if len(names) != 2 or len({sum(counts.values()) for counts in mixes}) != 1:
        raise FigureError("mixes make a curve only as a share between two families of one total")
    label = FAMILIES[names[0]].label
    return f"{label} demonstrations (of {sum(mixes[0].values())})", [float(c.get(names[0], 0)) for c in mixes]


def sweep_figure(cells: list[CellSummary], out: Path, title: str = "") -> list[Path]:
    """Draw success per family against the swept value; write `out` as .png and .svg (atomically); the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label, xs = axis(cells)
    order = sorted(range(len(cells)), key=lambda i: xs[i])
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=150)
    families = list(dict.fromkeys(name for c in cells for name in c.families))
    for name in families:
        points = [(xs[i], cells[i].families[name]) for i in order if name in cells[i].families]
        x = [p for p, _ in points]
        mean = [100 * f.mean for _, f in points]
        err = [[100 * (f.mean - f.low) for _, f in points], [100 * (f.high - f.mean) for _, f in points]]
        shown = FAMILIES[name].label if name in FAMILIES else name
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, label=f"{shown} held-out")
    if label == "lr":
        ax.set_xscale("log")
    seeds = sorted({len(c.seeds) for c in cells})
    ax.set_xlabel(label)
    ax.set_ylabel("held-out success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend()
    n = seeds[0] if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    ax.set_title(title or f"mean over {n} seeds, 95% intervals over seeds", fontsize=10)
    fig.tight_layout()
    written = []
    for suffix in (".png", ".svg"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=suffix[1:])
        written.append(write_atomic(out.with_suffix(suffix), buffer.getvalue()))
    plt.close(fig)
    return written
