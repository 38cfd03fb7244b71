"""Pictures for slides: held-out success per environment against a swept value, with 95% intervals over seeds;
and one model on one projector slide (its scores per environment beside its loss curve).

matplotlib with its Agg backend writes PNG and SVG without a display; it is imported only when a
picture is drawn, so nothing else pays for it. Every name from a store or a record (a mix, an environment, a
model's title) is drawn through `figure_text`: as text, never as mathtext (core.world.text.shown).
"""

from __future__ import annotations

import io
from pathlib import Path

from breadth.core.results.matrix import TRAINED, BreadthPoint, MatrixRow, columns, group_of, row_names
from breadth.core.results.report import BudgetPoint, CellSummary, budget, varied
from breadth.core.storage.files import write_atomic
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import brief, label
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.stats import wilson
from breadth.core.world.text.shown import FIGURE_RC, figure_text


class FigureError(ValueError):
    """The cells do not make a curve (no single swept value); one line."""


def axis(cells: list[CellSummary]) -> tuple[str, list[float]]:
    """The swept quantity and each cell's value on it: a setting, or a share of demonstrations between environments."""
    what = varied(cells)
    if len(what) != 1:
        raise FigureError(f"a curve needs exactly one swept quantity; these cells vary {', '.join(what) or 'nothing'}")
    if what[0] != "mix":
        return what[0].replace("_", " "), [float(getattr(c.key.settings, what[0])) for c in cells]
    mixes = [dict(Mix.parse(c.key.mix).counts) for c in cells]
    names = sorted({name for counts in mixes for name in counts}, key=list(REGISTERED).index)
    if len(names) != 2 or len({sum(counts.values()) for counts in mixes}) != 1:
        raise FigureError("mixes make a curve only as a share between two environments of one total")
    first = label(REGISTERED[names[0]])
    return f"{first} demonstrations (of {sum(mixes[0].values())})", [float(c.get(names[0], 0)) for c in mixes]


def pyplot():
    """matplotlib's pyplot on the Agg backend with the figures' settings, imported when a figure is first made."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update(FIGURE_RC)  # text is never handed to LaTeX, and `\$` is a dollar sign
    import matplotlib.pyplot as plt

    return plt


# What makes a figure file the same every time it is drawn: no date or software version written into it, and the
# SVG's element ids made from a fixed salt instead of a random one. Re-running a README command rewrites its figure
# byte for byte (tests/test_results_figures.py checks one).
STABLE = {"svg": {"Date": None, "Creator": None}, "png": {"Software": None}}
STABLE_RC = {"svg.hashsalt": "breadth"}


def _save(fig, out: Path) -> list[Path]:
    """Write the figure as `out`.png and .svg, atomically and deterministically (`STABLE`); the paths."""
    written = []
    for suffix in (".png", ".svg"):
        buffer = io.BytesIO()
        with pyplot().rc_context(STABLE_RC):
            fig.savefig(buffer, format=suffix[1:], metadata=STABLE[suffix[1:]])
        written.append(write_atomic(out.with_suffix(suffix), buffer.getvalue()))
    return written


def new_plot(plt):
    """A figure and its axes, the size every success plot has."""
    return plt.subplots(figsize=(6.4, 4.0), dpi=150)


def success_axes(ax, xlabel: str, title: str, legend_size: float | None = None) -> None:
    """The axes of a held-out success plot: its labels, 0-100% with a margin, a light grid, the legend, a title."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("held-out success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size)
    ax.set_title(title, fontsize=10)


def finish(plt, fig, out: Path) -> list[Path]:
    """Lay the figure out, write it as PNG and SVG (atomically), close it; the paths written."""
    fig.tight_layout()
    written = _save(fig, out)
    plt.close(fig)
    return written


def figure(cells: list[CellSummary], out: Path) -> list[Path]:
    """The picture the cells make: a budget (alone against mixed) over several totals if they are one, else a curve."""
    points = budget(cells)
    if len({p.total for p in points}) > 1:
        return budget_figure(points, out)
    return sweep_figure(cells, out)


def budget_figure(points: list[BudgetPoint], out: Path) -> list[Path]:
    """Per environment, held-out success against the total of demonstrations, trained alone and in an even mix."""
    plt = pyplot()
    fig, ax = new_plot(plt)
    environments = list(dict.fromkeys(p.environment for p in points))
    for k, name in enumerate(environments):
        mine = [p for p in points if p.environment == name]
        shown = label(REGISTERED[name]) if name in REGISTERED else name
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
                label=figure_text(f"{shown}: {'trained alone' if which == 'alone' else 'in an even mix'}"),
            )
    totals = sorted({p.total for p in points})
    ax.set_xscale("log")
    ax.set_xticks(totals, [str(t) for t in totals])
    ax.minorticks_off()
    seeds = sorted({len(p.alone.rates) for p in points} | {len(p.mixed.rates) for p in points})
    n = seeds[0] if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    title = f"the cost of mixing: mean over {n} seeds, 95% intervals over seeds"
    success_axes(ax, "demonstrations in all (a mix gives each environment half)", title, legend_size=8)
    return finish(plt, fig, out)


def sweep_figure(cells: list[CellSummary], out: Path, title: str = "") -> list[Path]:
    """Draw success per environment against the swept value; write `out` as .png and .svg (atomically); the paths."""
    plt = pyplot()
    swept, xs = axis(cells)
    order = sorted(range(len(cells)), key=lambda i: xs[i])
    fig, ax = new_plot(plt)
    environments = list(dict.fromkeys(name for c in cells for name in c.environments))
    for name in environments:
        points = [(xs[i], cells[i].environments[name]) for i in order if name in cells[i].environments]
        x = [p for p, _ in points]
        mean = [100 * f.mean for _, f in points]
        err = [[100 * (f.mean - f.low) for _, f in points], [100 * (f.high - f.mean) for _, f in points]]
        shown = label(REGISTERED[name]) if name in REGISTERED else name
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, label=figure_text(f"{shown} held-out"))
    if swept == "lr":
        ax.set_xscale("log")
    seeds = sorted({len(c.seeds) for c in cells})
    n = seeds[0] if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    success_axes(ax, swept, figure_text(title) or f"mean over {n} seeds, 95% intervals over seeds")
    return finish(plt, fig, out)


def matrix_figure(rows: list[MatrixRow], out: Path, names_of_rows: list[str] | None = None) -> list[Path]:
    """The transfer matrix as a heat map: mean success per (mix, environment), its interval, trained cells outlined;
    rows named `names_of_rows` (as a view shows them), else each by a name no other row has."""
    import numpy as np

    plt = pyplot()
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
    ax.set_xticks(range(len(names)), [f"{REGISTERED[n].short}" for n in names], fontsize=8)
    ax.set_yticks(range(len(rows)), [figure_text(n) for n in names_of_rows or row_names(rows)], fontsize=8)
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
    """Success on each held-out environment (and the mean on the trained ones) against how many environments the
    training mix spread its demonstrations over, with 95% intervals over seeds."""
    plt = pyplot()
    fig, ax = new_plot(plt)
    for name in dict.fromkeys(p.environment for p in points):
        line = sorted((p for p in points if p.environment == name), key=lambda p: p.environments)
        x = [p.environments for p in line]
        mean = [100 * p.mean for p in line]
        err = [[100 * (p.mean - p.low) for p in line], [100 * (p.high - p.mean) for p in line]]
        legend = (
            "own environments (mean)"
            if name == TRAINED
            else f"{label(REGISTERED[name])} ({REGISTERED[name].short}), held out"
        )
        style = {"linestyle": "--", "color": "gray"} if name == TRAINED else {}
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, label=legend, **style)
    xs = sorted({p.environments for p in points})
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.minorticks_off()
    totals = sorted({p.demonstrations for p in points})
    total = str(totals[0]) if len(totals) == 1 else f"{totals[0]}-{totals[-1]}"
    title = f"the breadth curve: mean over {seeds} seeds, 95% intervals over seeds"
    success_axes(ax, f"training environments ({total} demonstrations in all)", title, legend_size=8)
    return finish(plt, fig, out)


SLIDE = (12.8, 7.2)  # inches: 1920x1080 pixels at SLIDE_DPI, a projector's 16:9
SLIDE_DPI = 150
SLIDE_FONT = 18  # points: the smallest text on the slide (ticks, labels); titles are larger
OWN, OTHER = "#0072B2", "#D55E00"  # Okabe-Ito blue and vermillion: told apart by colour-blind eyes, dark on white
SLIDE_STYLE = {  # black on white, thick lines, large type; SVG text kept as text (editable in slides)
    "font.size": SLIDE_FONT,
    "axes.titlesize": SLIDE_FONT + 2,
    "axes.labelsize": SLIDE_FONT,
    "xtick.labelsize": SLIDE_FONT,
    "ytick.labelsize": SLIDE_FONT,
    "legend.fontsize": SLIDE_FONT,
    "figure.titlesize": SLIDE_FONT + 6,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "text.color": "black",
    "axes.labelcolor": "black",
    "axes.edgecolor": "black",
    "xtick.color": "black",
    "ytick.color": "black",
    "axes.linewidth": 1.5,
    "lines.linewidth": 2.5,
    "svg.fonttype": "none",
}


def _own(run: RunMeta) -> list[str]:
    """The environments of the run's mix, in registry order (none when its mix is unknown)."""
    try:
        return [name for name, _ in Mix.parse(run.mix).counts] if run.mix else []
    except MixError:
        return []


def model_title(run: RunMeta, name: str = "") -> str:
    """`mix 35+35, seed 0`: `name`, else the mix in words and the settings that differ from the defaults; then the
    seed."""
    seed = "" if run.seed is None else f", seed {run.seed}"
    return (name or f"{run.mix_name()} {run.settings_note}".strip()) + seed


def model_figure(run: RunMeta, out: Path, name: str = "") -> list[Path]:
    """One model on one slide: held-out success per environment with 95% Wilson intervals (its mix's environments, then
    the others) beside its training loss per step; `out`.png (1920x1080) and .svg, atomically; the paths.

    `name`: what the title calls the model (the app's name for it), else its mix and settings; its seed follows.
    """
    plt = pyplot()
    with plt.rc_context(SLIDE_STYLE):  # also around savefig: svg.fonttype is read when the SVG is written
        fig, (left, right) = plt.subplots(1, 2, figsize=SLIDE, dpi=SLIDE_DPI, width_ratios=(3, 2), layout="constrained")
        _scores_axes(left, run)
        _loss_axes(right, run)
        fig.suptitle(figure_text(model_title(run, name)), fontweight="bold")
        written = _save(fig, out)
    plt.close(fig)
    return written


def _scores_axes(ax, run: RunMeta) -> None:
    """Horizontal bars, one per scored environment, top to bottom: trained (blue), then held out (vermillion)."""
    own = _own(run)
    others = [n for n in REGISTERED if n not in own and n in run.scores]
    others += [n for n in run.scores if n not in REGISTERED and n not in own]
    names = own + others
    if not any(run.scores.get(n) and run.scores[n].total for n in names):
        ax.text(0.5, 0.5, "not evaluated on held-out sums", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    for y, name in enumerate(names):
        score = run.scores.get(name)
        colour = OWN if name in own else OTHER
        if score is None or not score.total:
            ax.text(1, y, "not evaluated", va="center")
            continue
        lo, hi = wilson(score.solved, score.total)
        rate = 100 * score.rate
        ax.barh(y, rate, height=0.7, color=colour)
        ax.errorbar(rate, y, xerr=[[rate - 100 * lo], [100 * hi - rate]], color="black", capsize=5, elinewidth=2)
        ax.text(100 * hi + 2, y, f"{rate:.0f}%", va="center")
    if own and others:
        ax.axhline(len(own) - 0.5, color="black", linewidth=1.5, linestyle="--")
    ax.set_yticks(range(len(names)), [figure_text(brief(REGISTERED[n]) if n in REGISTERED else n) for n in names])
    ax.set_ylim(len(names) - 0.5, -0.5)  # the first environment on top
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("held-out success (%), 95% interval")
    held = sorted({run.scores[n].total for n in names if n in run.scores and run.scores[n].total})
    sums = f"{held[0]}" if len(held) == 1 else f"{held[0]}-{held[-1]}"
    ax.set_title(f"held-out sums ({sums} per environment, never trained on)")
    ax.grid(axis="x", alpha=0.4)
    handles = [_patch(OWN, "trained on (its mix)")] if own else []
    scored = [run.scores[n].rate for n in others if run.scores[n].total]
    if scored:
        handles.append(_patch(OTHER, f"other environments: mean {100 * sum(scored) / len(scored):.0f}%"))
    if handles:  # under the whole slide, never over a bar
        ax.figure.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False)


def _patch(colour: str, label: str):
    """A legend entry: a box of `colour`."""
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, label=label)


def _loss_axes(ax, run: RunMeta) -> None:
    """The run's training loss per step on a log scale (a pre-trained model's pre-training loss)."""
    losses = [x for x in run.losses if x > 0]
    if not losses:
        ax.text(0.5, 0.5, "no training curve kept", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    steps = range(1, len(losses) + 1)
    ax.plot(steps, losses, color="#999999", linewidth=1.5, label="per step")
    window = max(1, len(losses) // 20)
    if window > 1:  # the trend, through the noise of one batch a step
        ax.plot(steps, _moving_mean(losses, window), color="black", label=f"mean of {window} steps")
        ax.legend(loc="upper right", framealpha=1, edgecolor="black")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_plain_log())  # 1, 0.1 rather than 10^0, 10^-1
    ax.yaxis.set_minor_formatter(_plain_log(minor_thresholds=(1, 0.5)))  # 2, 3 too, within one decade
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("training loss (log scale)")
    ax.set_title("pre-training loss" if run.recipe == "pretrain" else "fine-tuning loss")
    ax.grid(alpha=0.4)


def _plain_log(**kwargs):
    """A log axis formatter that writes 0.1 and 3, not 1e-01 and 3x10^0 (it still decides which ticks to label)."""
    from matplotlib.ticker import LogFormatter

    class PlainLog(LogFormatter):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    return PlainLog(**kwargs)


def _moving_mean(values: list[float], window: int) -> list[float]:
    """The mean of the last `window` values (fewer at the start) at each position."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out
