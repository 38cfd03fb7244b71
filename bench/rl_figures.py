"""The figures of `python -m bench.rl_experiments`'s report (`bench.rl_report`): bars, curves and training metrics
with 95% intervals over seeds, drawn from the run records and written as PNG and SVG (`core.results.figures`).
"""

from __future__ import annotations

from pathlib import Path

from bench.rl_experiments import EPISODES, KNOWN, SHOWN, TARGET
from breadth.core.world.arithmetic.problem import canonical
from breadth.core.world.runs.stats import mean_interval

SHOWN_METRICS = (
    ("reward", "reward"),
    ("pass", "pass@G"),
    ("expected", "correct, expected calls"),
    ("no_call", "no call"),
)


def rate(run: dict, name: str) -> float:
    """A run's held-out success on `name` (`two_digit`), its score read under the environment's name now too
    (`add_2x2`: records written since the rename)."""
    scores = run["record"]["scores"]
    s = scores[name] if name in scores else scores[canonical(name)]
    return s["solved"] / s["total"]


def ci(values: list[float]) -> tuple[float, float, float]:
    m, lo, hi = mean_interval(values)
    return m, max(lo, 0.0), min(hi, 1.0)


def plate_figure(found, out: Path) -> None:
    """Grouped bars: per plate mix, each arm's success on the two environments, with 95% intervals."""
    from breadth.core.results.figures import finish, pyplot

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), dpi=150, sharey=True)
    mixes = list(dict.fromkeys(m for m, _, _ in found))
    arms = list(dict.fromkeys(a for _, a, _ in found))
    colours = ("#1f77b4", "#ff9896", "#d62728")
    width = 0.8 / len(arms)
    for ax, name in zip(axes, (KNOWN, TARGET), strict=True):
        for j, arm in enumerate(arms):
            xs, means, errs = [], [[], []], []
            for i, mix in enumerate(mixes):
                runs = next((r for m, a, r in found if m == mix and a == arm), None)
                if not runs:
                    continue
                m, lo, hi = ci([rate(r, name) for r in runs])
                xs.append(i + (j - (len(arms) - 1) / 2) * width)
                errs.append(100 * m)
                means[0].append(100 * (m - lo))
                means[1].append(100 * (hi - m))
            ax.bar(xs, errs, width, yerr=means, capsize=3, color=colours[j % 3], label=arm)
            for x, v in zip(xs, errs, strict=True):
                ax.text(x, v + 1.5, f"{v:.0f}", ha="center", fontsize=6)  # a bar at 0 is still read as 0
        ax.set_xticks(range(len(mixes)), [m.replace(",", ",\n") for m in mixes], fontsize=7)
        ax.set_title(f"{SHOWN[name]} test success", fontsize=9)
        ax.set_ylim(0, 103)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("% solved (mean, 95% interval)")
    axes[1].legend(fontsize=7)
    fig.suptitle("the plate's mixes from the base: demonstrations (3,200 episodes) against reward", fontsize=10)
    finish(plt, fig, out)


def curve_figure(points, order, out: Path, seeds: int, demos: int, title: str) -> None:
    """Experiment 4's curve: per N (`n8`, `nceil` the ceiling) and stage, (mean, low, high) held out and trained."""
    from breadth.core.results.figures import finish, pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.6, 4.0), dpi=150)
    ns = [n for n in order if n != "nceil" and n in points]
    xs = [int(n[1:]) for n in ns]
    styles = {
        "warm train": ("#2ca02c", "--", "training, demonstrations only"),
        "warm held": ("#17becf", "--", "held out, demonstrations only"),
        "reward train": ("#2ca02c", "-", "training, then reward"),
        "reward held": ("#17becf", "-", "held out, then reward"),
    }
    for key, (colour, line, label) in styles.items():
        found = [(x, points[n][key]) for x, n in zip(xs, ns, strict=True) if points[n].get(key)]
        if not found:
            continue
        ax.errorbar(
            [x for x, _ in found],
            [100 * m for _, (m, _, _) in found],
            yerr=[[100 * (m - lo) for _, (m, lo, _) in found], [100 * (hi - m) for _, (m, _, hi) in found]],
            color=colour,
            linestyle=line,
            marker="o",
            capsize=3,
            label=label,
        )
    ceiling = points.get("nceil", {})
    for key, line in (("warm held", ":"), ("reward held", "-.")):
        if ceiling.get(key):
            m = ceiling[key][0]
            stage = "demonstrations only" if key.startswith("warm") else "then reward"
            ax.axhline(100 * m, color="#7f7f7f", linestyle=line, label=f"ceiling, {stage}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("training environments N")
    ax.set_ylabel("test success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)  # beside, over no point
    ax.set_title(
        f"{title}: warm start {demos} demonstrations per environment, then reward;\n"
        f"mean, 95% interval over 3 splits (x {seeds} seeds)",
        fontsize=8,
    )
    finish(plt, fig, out)


def metrics_figure(runs: list[dict], out: Path) -> None:
    from breadth.core.results.figures import finish, pyplot

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6), dpi=150)
    steps = range(1, len(runs[0]["record"]["metrics"]["reward"]) + 1)
    for key, label in SHOWN_METRICS:
        left.plot(steps, _mean_curve(runs, key, 100), label=label)
    left.set_xlabel("reward step")
    left.set_ylabel("% of episodes (pass@G: of groups)")
    left.set_ylim(-2, 102)
    left.grid(alpha=0.3)
    left.legend(fontsize=7)
    left.set_title(f"mean of {len(runs)} seeds, 10-step moving mean", fontsize=9)
    for key, label, scale in (("chars", "model's characters per episode", 1), ("calls", "calls per episode x 10", 10)):
        right.plot(steps, _mean_curve(runs, key, scale), label=label)
    right.set_xlabel("reward step")
    right.grid(alpha=0.3)
    right.legend(fontsize=7)
    right.set_ylim(bottom=0)
    fig.suptitle("reward on three-digit sums from the two-digit-only model", fontsize=10)
    finish(plt, fig, out)


def _mean_curve(runs: list[dict], key: str, scale: float) -> list[float]:
    """The metric `key` at each step, averaged over the runs, times `scale`, as a 10-step moving mean."""
    rows = [r["record"]["metrics"][key] for r in runs]
    mean = [scale * sum(col) / len(col) for col in zip(*rows, strict=True)]
    return [_smooth(mean, i) for i in range(len(mean))]


def _smooth(values: list[float], i: int, window: int = 10) -> float:
    part = values[max(0, i - window + 1) : i + 1]
    return sum(part) / len(part)


def arms_figure(rows, out: Path, steps: int) -> None:
    from breadth.core.results.figures import finish, pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=150)
    xs = list(range(len(rows)))
    arms = (
        ("k demonstrations only", 1, "#888888"),
        (f"then reward ({steps * EPISODES:,} episodes)", 2, "#d62728"),
        ("then as many demonstration episodes", 3, "#1f77b4"),
    )
    for (label, j, colour), shift in zip(arms, (-0.15, 0.0, 0.15), strict=True):
        means, lows, highs = [], [], []
        for row in rows:
            values = [rate(r, TARGET) for r in row[j]]
            m, lo, hi = ci(values) if values else (float("nan"),) * 3
            means.append(100 * m)
            lows.append(100 * (m - lo))
            highs.append(100 * (hi - m))
        ax.errorbar([x + shift for x in xs], means, yerr=[lows, highs], fmt="o", capsize=3, color=colour, label=label)
    ax.set_xticks(xs, [str(r[0]) for r in rows])
    ax.set_xlabel("three-digit demonstrations in the warm start (with 70 two-digit)")
    ax.set_ylabel("three-digit test success (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"mean and 95% interval over {len(rows[0][1])} seeds", fontsize=9)
    finish(plt, fig, out)
