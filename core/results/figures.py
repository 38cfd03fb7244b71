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
from .matrix import TRAINED, BreadthPoint, MatrixRow, columns, group_of
from .report import BudgetPoint, CellSummary, budget, varied


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


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out: Path) -> list[Path]:
    """Write the figure as `out`.png and .svg, atomically; the paths."""
    written = []
    for suffix in (".png", ".svg"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=suffix[1:])
        written.append(write_atomic(out.with_suffix(suffix), buffer.getvalue()))
    return written


def figure(cells: list[CellSummary], out: Path) -> list[Path]:
    """The picture the cells make: a budget (alone against mixed) over several totals if they are one, else a curve."""
    points = budget(cells)
    if len({p.total for p in points}) > 1:
        return budget_figure(points, out)
    return sweep_figure(cells, out)


def budget_figure(points: list[BudgetPoint], out: Path) -> list[Path]:
    """Per family, held-out success against the total of demonstrations, trained alone and in an even mix."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=150)
    families = list(dict.fromkeys(p.family for p in points))
    for k, name in enumerate(families):
        mine = [p for p in points if p.family == name]
        shown = FAMILIES[name].label if name in FAMILIES else name
        colour = f"C{k}"
        for which, style in (("alone", "-"), ("mixed", "--")):
            summaries = [getattr(p, which) for p in mine]
            ax.errorbar(
                [p.total for p in mine],
                [100 * f.mean for f in summaries],
                yerr=[[100 * (f.mean - f.low) for f in summaries], [100 * (f.high - f.mean) for f in summaries]],
                marker="o" if which == "alone" else "s",
                linestyle=style,
                color=colour,
                capsize=3,
                label=f"{shown}: {'trained alone' if which == 'alone' else 'in an even mix'}",
            )
    totals = sorted({p.total for p in points})
    ax.set_xscale("log")
    ax.set_xticks(totals, [str(t) for t in totals])
    ax.minorticks_off()
    ax.set_xlabel("demonstrations in all (a mix gives each family half)")
    ax.set_ylabel("held-out success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    seeds = sorted({len(p.alone.rates) for p in points} | {len(p.mixed.rates) for p in points})
    n = seeds[0] if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    ax.set_title(f"the cost of mixing: mean over {n} seeds, 95% intervals over seeds", fontsize=10)
    fig.tight_layout()
    written = _save(fig, out)
    plt.close(fig)
    return written


def sweep_figure(cells: list[CellSummary], out: Path, title: str = "") -> list[Path]:
    """Draw success per family against the swept value; write `out` as .png and .svg (atomically); the paths."""
    plt = _pyplot()
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
    written = _save(fig, out)
    plt.close(fig)
    return written


def matrix_figure(rows: list[MatrixRow], out: Path) -> list[Path]:
    """The transfer matrix as a heat map: mean success per (mix, family), its interval, trained cells outlined."""
    import numpy as np

    plt = _pyplot()
    names = columns()
    values = np.full((len(rows), len(names)), np.nan)
    for i, row in enumerate(rows):
        for j, name in enumerate(names):
            if name in row.cells:
                values[i, j] = 100 * row.cells[name].mean
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(names), 1.2 + 0.55 * len(rows)), dpi=150)
    ax.imshow(values, cmap="Greens", vmin=0, vmax=100, aspect="auto")
    for i, row in enumerate(rows):
        for j, name in enumerate(names):
            f = row.cells.get(name)
            if f is None:
                continue
            dark = 100 * f.mean > 60
            ax.text(
                j,
                i - 0.12,
                f"{100 * f.mean:.0f}",
                ha="center",
                va="center",
                fontsize=9,
                color="white" if dark else "black",
                fontweight="bold" if name in row.trained else "normal",
            )
            ax.text(
                j,
                i + 0.22,
                f"{100 * f.low:.0f}-{100 * f.high:.0f}",
                ha="center",
                va="center",
                fontsize=6,
                color="white" if dark else "dimgray",
            )
            if name in row.trained:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
    starts = [j for j in range(len(names)) if j == 0 or group_of(names[j]) != group_of(names[j - 1])]
    for k, j in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(names)
        if j:
            ax.axvline(j - 0.5, color="black", linewidth=1)
        ax.text((j + end - 1) / 2, len(rows) - 0.5 + 0.35, group_of(names[j]), ha="center", va="top", fontsize=9)
    ax.set_xticks(range(len(names)), [f"{FAMILIES[n].short}" for n in names], fontsize=8)
    ax.set_yticks(range(len(rows)), [r.label for r in rows], fontsize=8)
    ax.xaxis.set_ticks_position("top")
    seeds = sorted({len(r.seeds) for r in rows})
    n = seeds[0] if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    ax.set_title(
        f"held-out success (%) by training mix and environment; mean over {n} seeds, 95% interval; outlined: trained",
        fontsize=8,
        pad=18,
    )
    fig.tight_layout()
    written = _save(fig, out)
    plt.close(fig)
    return written


def breadth_figure(points: list[BreadthPoint], out: Path, seeds: int) -> list[Path]:
    """Success on each held-out family (and the mean on the trained ones) against how many environments the
    training mix spread its demonstrations over, with 95% intervals over seeds."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=150)
    for name in dict.fromkeys(p.family for p in points):
        line = sorted((p for p in points if p.family == name), key=lambda p: p.environments)
        x = [p.environments for p in line]
        mean = [100 * p.mean for p in line]
        err = [[100 * (p.mean - p.low) for p in line], [100 * (p.high - p.mean) for p in line]]
        label = (
            "own families (mean)" if name == TRAINED else f"{FAMILIES[name].label} ({FAMILIES[name].short}), held out"
        )
        style = {"linestyle": "--", "color": "gray"} if name == TRAINED else {}
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, label=label, **style)
    xs = sorted({p.environments for p in points})
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.minorticks_off()
    totals = sorted({p.demonstrations for p in points})
    total = str(totals[0]) if len(totals) == 1 else f"{totals[0]}-{totals[-1]}"
    ax.set_xlabel(f"training environments ({total} demonstrations in all)")
    ax.set_ylabel("held-out success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"the breadth curve: mean over {seeds} seeds, 95% intervals over seeds", fontsize=10)
    fig.tight_layout()
    written = _save(fig, out)
    plt.close(fig)
    return written
