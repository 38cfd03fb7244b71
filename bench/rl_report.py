"""The tables and figures of `python -m bench.rl_experiments`: read from its run records, nothing measured here.

Every number is a mean over seeds with its 95% t interval (`core.world.runs.stats.mean_interval`, kept within
0-100%), on the test split (100 sums per environment) unless the table says validation; experiment 4's take the
split as the unit, as `breadth curve`'s do (each split's mean over its seeds, then a t interval over the splits).
Figures are written as PNG and SVG beside each other, deterministically (`core.results.figures`' writer).
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.rl_experiments import (
    BOTH_MIX,
    CHOOSE_GRID,
    CHOOSE_K,
    CHOOSE_LRS,
    CHOOSE_SEEDS,
    EPISODES,
    KNOWN,
    PLATE,
    RL_MIX,
    SHOWN,
    TARGET,
    WARM_KS,
)
from bench.rl_figures import arms_figure, ci, curve_figure, metrics_figure, plate_figure, rate
from breadth.core.world.arithmetic.problem import first_name

console = Console(highlight=False, width=132)


def _load(folder: Path, name: str) -> dict | None:
    path = folder / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _pct(values: list[float], digits: int = 0) -> str:
    """Mean and 95% interval in %: `45 [23-68]`."""
    if not values:
        return "-"
    m, lo, hi = ci(values)
    return f"{100 * m:.{digits}f} [{100 * lo:.{digits}f}-{100 * hi:.{digits}f}]"


def _runs(folder: Path, pattern: str, seeds) -> list[dict]:
    return [r for s in seeds if (r := _load(folder, pattern.format(s=s))) is not None]


def choose(folder: Path) -> tuple[float, int] | None:
    """Both grids on the validation split; the choice: the (lr, group) of the second grid (reward on both environments'
    sums) with the best mean of the two environments' validation success."""
    best, best_at = -1.0, None
    warm = _runs(folder, f"warm-k{CHOOSE_K}-s{{s}}", CHOOSE_SEEDS)
    for grid, title, prefix in (
        (CHOOSE_GRID, f"reward on {RL_MIX}", "choose"),
        (tuple((lr, 8) for lr in CHOOSE_LRS), f"reward on {BOTH_MIX}", "choose2"),
    ):
        table = Table(
            title=f"choosing on the validation split: warm start k={CHOOSE_K}, seeds {CHOOSE_SEEDS}, {title}, "
            f"200 steps x {EPISODES} episodes"
        )
        for c in ("lr", "group", "prompts", f"{SHOWN[TARGET]} %", f"{SHOWN[KNOWN]} %", "mean %", "seeds"):
            table.add_column(c, justify="right")
        if warm:
            t, k = [r["validation"][TARGET] for r in warm], [r["validation"][KNOWN] for r in warm]
            mean = sum(t + k) / len(t + k)
            table.add_row("warm start", "-", "-", _pct(t), _pct(k), f"{100 * mean:.1f}", str(len(warm)))
        for lr, g in grid:
            runs = _runs(folder, f"{prefix}-lr{lr:g}-g{g}-s{{s}}", CHOOSE_SEEDS)
            if not runs:
                continue
            t = [r["validation"][TARGET] for r in runs]
            k = [r["validation"][KNOWN] for r in runs]
            mean = sum(t + k) / len(t + k)
            if prefix == "choose2" and len(runs) == len(CHOOSE_SEEDS) and mean > best:
                best, best_at = mean, (lr, g)
            table.add_row(f"{lr:g}", str(g), str(EPISODES // g), _pct(t), _pct(k), f"{100 * mean:.1f}", str(len(runs)))
        console.print(table)
    if best_at:
        console.print(
            f"chosen: lr {best_at[0]:g}, group {best_at[1]} (reward on both environments: the best mean of their "
            "validation success)"
        )
    return best_at


def experiment1(folder: Path, seeds, figures: Path) -> None:
    runs = _runs(folder, "rl1-s{s}", seeds)
    warm = _runs(folder, "warm-k0-s{s}", seeds)
    if not runs:
        return
    table = Table(title=f"1. from the two-digit-only model, reward on three-digit sums ({len(runs)} seeds; test split)")
    shown = (f"{SHOWN[KNOWN]} %", f"{SHOWN[TARGET]} %")
    for c in ("", "pass@G", "reward", "correct, expected calls", "no call", "chars", *shown):
        table.add_column(c, justify="right")
    before = [r["record"]["before"] for r in runs]
    last = [{k: sum(v[-20:]) / len(v[-20:]) for k, v in r["record"]["metrics"].items()} for r in runs]
    for label, measured, scored in (("before (warm start)", before, warm), ("last 20 steps / after", last, runs)):
        table.add_row(
            label,
            *(_pct([m[key] for m in measured]) for key in ("pass", "reward", "expected", "no_call")),
            f"{sum(m['chars'] for m in measured) / len(measured):.1f}",
            *(_pct([rate(r, name) for r in scored]) for name in (KNOWN, TARGET)),
        )
    console.print(table)
    seeds_line = "; ".join(
        f"seed {r['record']['seed']}: {SHOWN[KNOWN]} {100 * rate(r, KNOWN):.0f}%, "
        f"{SHOWN[TARGET]} {100 * rate(r, TARGET):.0f}%, "
        f"last 20 steps no call {100 * sum(r['record']['metrics']['no_call'][-20:]) / 20:.0f}%"
        for r in runs
    )
    console.print(f"per seed: {seeds_line}", soft_wrap=False)
    metrics_figure(runs, figures / "rl-1-from-two-digit")


def experiment2(folder: Path, seeds, figures: Path, steps: int) -> None:
    table = Table(
        title=f"2. k three-digit demonstrations, then reward on {BOTH_MIX} ({steps} steps x {EPISODES} episodes) or "
        "as many episodes of their demonstrations (test split)"
    )
    for c in (
        "k",
        f"{SHOWN[TARGET]} % sampled before",
        f"{SHOWN[TARGET]}: demos",
        "+ reward",
        "+ demos",
        f"{SHOWN[KNOWN]}: demos",
        "+ reward",
        "+ demos",
        "seeds",
    ):
        table.add_column(c, justify="right")
    rows = []
    for k in WARM_KS:
        warm, rl, demo = (_runs(folder, f"{p}-k{k}-s{{s}}", seeds) for p in ("warm", "rl", "demo"))
        if not warm:
            continue
        rows.append((k, warm, rl, demo))
        table.add_row(
            str(k),
            _pct([r["record"]["before"][f"reward:{TARGET}"] for r in rl], 1),  # sampled at temperature 1, per episode
            *(_pct([rate(r, TARGET) for r in x]) for x in (warm, rl, demo)),
            *(_pct([rate(r, KNOWN) for r in x]) for x in (warm, rl, demo)),
            f"{len(warm)}/{len(rl)}/{len(demo)}",
        )
    console.print(table)
    if rows:
        arms_figure(rows, figures / "rl-2-warm-starts", steps)


def experiment3(folder: Path, seeds, figures: Path) -> None:
    table = Table(title="3. the plate's mixes from the base: demonstrations against reward (test split)")
    for c in ("mix", "arm", "episodes", f"{SHOWN[KNOWN]} %", f"{SHOWN[TARGET]} %", "pass@G before", "seeds"):
        table.add_column(c, justify=("left" if c in ("mix", "arm") else "right"))
    found = []
    for i, mix in enumerate(PLATE):
        demos = _runs(folder, "warm-k0-s{s}" if i == 0 else f"plate{i}-s{{s}}", seeds)
        arms = [("demonstrations", 400 * 8, demos)]
        arms += [(f"reward {n} steps", n * EPISODES, _runs(folder, f"base-rl{i}-{n}-s{{s}}", seeds)) for n in (25, 200)]
        for arm, episodes, runs in arms:
            if not runs:
                continue
            before = [r["record"]["before"]["pass"] for r in runs if r["record"].get("before")]
            table.add_row(
                mix,
                arm,
                f"{episodes:,}",
                _pct([rate(r, KNOWN) for r in runs]),
                _pct([rate(r, TARGET) for r in runs]),
                _pct(before, 1),
                str(len(runs)),
            )
            found.append((mix, arm, runs))
    console.print(table)
    if found:
        plate_figure(found, figures / "rl-3-plate-mixes")


def _by_split(pairs: list[tuple[str, float]], gain: bool = False) -> str:
    """Mean and 95% interval in % with the split as the unit (`core.results.curve_points.by_split`): `45 [23-68]`;
    a `gain` (a difference, -100 to 100) signed: `+1 [-4, +7]`."""
    from breadth.core.results.curve_points import by_split

    if not pairs:
        return "-"
    m, lo, hi = (round(100 * x) + 0 for x in by_split(pairs, -1.0 if gain else 0.0))  # + 0: never `-0`
    return f"{m:+d} [{lo:+d}, {hi:+d}]" if gain else f"{m} [{lo}-{hi}]"


def _mean(scores: dict, names: list[str]) -> float:
    return sum(scores[f]["solved"] / scores[f]["total"] for f in names) / len(names)


def experiment4(folder: Path, seeds, figures: Path, demos: int, on: str = "two") -> None:
    """The curve under reward: per N, training and held-out success after the warm start and after reward, and
    reward's held-out gain paired run by run; every interval takes the split as the unit, as `breadth curve`'s."""
    from bench.rl_experiments import CURVE_PROMPTS, SETUPS, curve_tasks
    from breadth.core.results.curve_points import by_split

    setup = SETUPS[on]
    tasks = {t["name"]: t for t in curve_tasks(0.0, 8, seeds, demos, on)}  # names and environments only
    rates: dict[tuple[str, str, str, str], tuple[float, float | None]] = {}  # (stage, N, split, seed) -> held, train
    for name, t in tasks.items():
        run = _load(folder, name)
        if run is None:
            continue
        stage = "warm" if "warm-" in name else "reward"
        _, split, n, seed = name.split("-")
        held = t["held"]
        trained = [f for f in t["families"] if f not in held]  # a task key: run JSONs hold it
        stored = run["record"]["scores"]  # keyed by the names the runs were made with (two_digit for add_2x2)
        scores = {f: stored[f] if f in stored else stored[first_name(f)] for f in t["families"]}
        rates[(stage, n, split, seed)] = (_mean(scores, held), _mean(scores, trained) if trained else None)
    if not rates:
        return
    rows: dict[str, dict[str, list[tuple[str, float]]]] = {}  # N -> key -> (split, value) pairs
    transfer: dict[str, list[bool]] = {}  # N -> per pair after reward: held out above half its own ceiling
    for (stage, n, split, seed), (held, train) in rates.items():
        row = rows.setdefault(n, {})
        row.setdefault(f"{stage} held", []).append((split, held))
        if train is not None:
            row.setdefault(f"{stage} train", []).append((split, train))
        if stage == "reward" and ("warm", n, split, seed) in rates:
            row.setdefault("gain", []).append((split, held - rates[("warm", n, split, seed)][0]))
        if stage == "reward" and n != "nceil" and ("reward", "nceil", split, seed) in rates:
            transfer.setdefault(n, []).append(held > rates[("reward", "nceil", split, seed)][0] / 2)
    splits = len({split for _, _, split, _ in rates})
    table = Table(
        title=f"4. the curve under reward: {setup.title}, 3 splits x {len(seeds)} seeds; warm start {demos} "
        f"demonstrations per training environment, then reward on up to {CURVE_PROMPTS} sums of each (test splits; "
        f"95% intervals over the {splits} splits)"
    )
    columns = ("N", "runs", "warm: training %", "held out %", "+ reward: training %", "held out %", "reward's gain")
    for c in (*columns, "above half the ceiling"):
        table.add_column(c, justify="right")
    order = sorted((n for n in rows if n != "nceil"), key=lambda n: int(n[1:])) + ["nceil"]
    for n in order:
        if n not in rows:
            continue
        row = rows[n]
        pairs = transfer.get(n, [])
        table.add_row(
            "ceiling" if n == "nceil" else n[1:],
            str(len(row.get("warm held", []))),
            _by_split(row.get("warm train", [])),
            _by_split(row.get("warm held", [])),
            _by_split(row.get("reward train", [])),
            _by_split(row.get("reward held", [])),
            _by_split(row.get("gain", []), gain=True),
            f"{sum(pairs)} of {len(pairs)}" if pairs else "-",
        )
    console.print(table)
    points = {n: {key: by_split(values) for key, values in row.items() if key != "gain"} for n, row in rows.items()}
    for stage in ("warm", "reward"):  # what keeps the curve from being read, as `breadth curve` warns
        said = "after the warm start" if stage == "warm" else "after reward"
        for n in order:
            train = points.get(n, {}).get(f"{stage} train")
            if n != "nceil" and train and train[0] < 0.5:
                console.print(f"{said}, N={n[1:]}: the training environments reach only {100 * train[0]:.0f}%")
        ceiling = points.get("nceil", {}).get(f"{stage} held")
        if ceiling and ceiling[0] < 0.5:
            console.print(f"{said}: the ceiling is {100 * ceiling[0]:.0f}%; the curve cannot rise above it")
    name = f"rl-4-curve-under-reward-{demos}" if on == "two" else f"rl-4-curve-under-reward-{on}-{demos}"
    curve_figure(points, order, figures / name, len(seeds), demos, setup.title)


def report(folder: Path, lr: float, group: int, seeds, figures: Path) -> None:
    figures.mkdir(parents=True, exist_ok=True)
    choose(folder)
    experiment1(folder, seeds, figures)
    experiment2(folder, seeds, figures, 200)
    experiment3(folder, seeds, figures)
    from bench.rl_experiments import CURVES

    for on, demos in CURVES:
        experiment4(folder, seeds, figures, demos, on)
