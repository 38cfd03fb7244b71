"""Reading a breadth curve back from the store: a point per N with intervals that take the split as the unit, the
share of pairs that transfer, what keeps a curve from being read, and held-out success by the dimension along which
a training environment is one step away.

The plan (`core.results.breadth_curve.CurvePlan`) says which runs a curve has; the store holds them as ordinary runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from breadth.core.results.breadth_curve import CEILING, CurvePlan
from breadth.core.results.dimensions import coordinates, value
from breadth.core.storage.store import StoredRun
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS
from breadth.core.world.runs.stats import mean_interval


@dataclass(frozen=True)
class CurvePoint:
    """One N of the curve over every split and seed: training, held-out and the gap, each a mean with its 95%
    interval clustered by split (`by_split`), and the share of (split, seed) pairs that transfer (above half their
    ceiling)."""

    n: int  # training environments (CEILING: the held-out environments trained directly)
    steps: str  # the steps its runs took (a range when splits differ)
    pairs: int  # (split, seed) pairs with a stored run
    train: tuple[float, float, float]  # mean, low, high (rates 0-1)
    held: tuple[float, float, float]
    gap: tuple[float, float, float]  # train - held, paired
    transfer: float | None  # share of pairs above half their ceiling (None: the ceiling row, or no ceiling above 0)
    splits: int = 0  # splits with a stored run: the unit of the intervals (`by_split`); with one, they are over seeds


def points(plan: CurvePlan, runs: dict[str, StoredRun], base_hash: str) -> list[CurvePoint]:
    """The curve from the stored runs of `plan` (runs by key); N values with no stored run are left out."""
    by: dict[int, list[tuple[int, int, float, float, int]]] = {}  # n -> (split, seed, train, held, steps)
    for job, s, n in plan.jobs(base_hash):
        stored = runs.get(job.key)
        if stored is None:
            continue
        held, _ = plan.split(s)
        trained = held if n == CEILING else [name for name, _ in job.cell.mix.counts]
        scores = stored.run.scores
        by.setdefault(n, []).append((s, job.seed, _mean(scores, trained), _mean(scores, held), job.cell.settings.steps))
    ceiling = {(s, seed): h for s, seed, _, h, _ in by.get(CEILING, [])}
    out = []
    for n in sorted(by, key=lambda n: (n == CEILING, n)):
        rows = by[n]
        steps = sorted({r[4] for r in rows})
        share = None
        if n != CEILING:
            of = {(s, seed): ceiling.get((plan.ceiling_split(s), seed), 0) for s, seed, _, _, _ in rows}
            judged = [h > of[(s, seed)] / 2 for s, seed, _, h, _ in rows if of[(s, seed)] > 0]
            share = sum(judged) / len(judged) if judged else None
        out.append(
            CurvePoint(
                n,
                str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}",
                len(rows),
                by_split([(r[0], r[2]) for r in rows]),
                by_split([(r[0], r[3]) for r in rows]),
                by_split([(r[0], r[2] - r[3]) for r in rows], least=-1.0),
                share,
                len({r[0] for r in rows}),
            )
        )
    return out


def _mean(scores: dict, names: list[str]) -> float:
    rates = [scores[name].rate for name in names if name in scores]
    return sum(rates) / len(rates) if rates else 0.0


def by_split(values: list[tuple[int, float]], least: float = 0.0) -> tuple[float, float, float]:
    """Mean and 95% interval of (split, value) pairs with the split as the unit: each split's mean over its seeds,
    then the mean of those and its t interval (splits - 1 degrees of freedom). Runs of one split share its held-out
    draw, so they are not independent: over 3 splits x 10 seeds, treating the 30 pairs as independent gave N=32's
    held out [42-52]%, the splits [29-65]%. Resampling splits and then seeds within them would understate the
    spread of few splits (a resample of three splits can only draw those three), so the t interval is used. With
    one split there is nothing to cluster: the interval is over its seeds (and says nothing of another draw).
    Kept within what the values can be (rates: 0-1; a gap: -1 to 1)."""
    splits: dict[int, list[float]] = {}
    for split, v in values:
        splits.setdefault(split, []).append(v)
    units = [sum(vs) / len(vs) for vs in splits.values()] if len(splits) > 1 else [v for _, v in values]
    m, low, high = mean_interval(units)
    return (m, max(low, least), min(high, 1.0))


def warnings(found: list[CurvePoint], learned: float = 0.5) -> list[str]:
    """What keeps a curve from being read, in words: training environments not learned at their budget, or a
    ceiling so low that the held-out environments are not learned even directly."""
    out = [
        f"N={p.n}: the training environments reach only {100 * p.train[0]:.0f}%: at this budget they are not "
        "learned, so held-out success there says nothing about transfer"
        for p in found
        if p.n != CEILING and p.train[0] < learned
    ]
    once = [str(p.n) for p in found if p.splits == 1 and p.n != CEILING]
    if once:
        out.append(
            f"N={','.join(once)}: one draw of training environments (one split, or a designed hold-out's largest N): "
            "its interval is over seeds and says nothing of another draw"
        )
    ceiling = next((p for p in found if p.n == CEILING), None)
    if ceiling is not None and ceiling.held[0] < learned:
        out.append(
            f"the ceiling is {100 * ceiling.held[0]:.0f}%: trained directly, the held-out environments are not "
            "learned at this budget; the curve cannot rise above it"
        )
    return out


NO_NEIGHBOUR = "none"  # a held-out environment no training environment is one step from


def by_neighbour(
    plan: CurvePlan, runs: dict[str, StoredRun], base_hash: str
) -> dict[str, dict[int, tuple[float, int]]]:
    """Along which dimension held-out success comes: for each dimension D and each N, the mean held-out success of
    the held-out environments that some training environment of the run differs from along D alone (a held-out
    `2s1-postfix` beside a trained `2s1`: D is the call's form), with how many (environment, run) pairs that is;
    `none` for held-out environments no training environment is one step from. An environment with neighbours
    along two dimensions counts under both. Ceiling runs are left out."""
    where: dict[str, tuple[str, ...]] = {}

    def at(name: str) -> tuple[str, ...]:
        if name not in where:
            c = coordinates(name)
            where[name] = tuple(value(c, d) for d in ENV_DIMENSIONS)
        return where[name]

    rates: dict[str, dict[int, list[float]]] = {}
    for job, s, n in plan.jobs(base_hash):
        stored = runs.get(job.key)
        if n == CEILING or stored is None:
            continue
        trained = [at(name) for name, _ in job.cell.mix.counts]
        for name in plan.split(s)[0]:
            score = stored.run.scores.get(name)
            if score is None or not score.total:
                continue
            here = at(name)
            steps = [[i for i, (a, b) in enumerate(zip(t, here, strict=True)) if a != b] for t in trained]
            dims = {ENV_DIMENSIONS[d[0]] for d in steps if len(d) == 1} or {NO_NEIGHBOUR}
            for dim in dims:
                rates.setdefault(dim, {}).setdefault(n, []).append(score.rate)
    order = [*ENV_DIMENSIONS, NO_NEIGHBOUR]
    return {
        dim: {n: (sum(v) / len(v), len(v)) for n, v in sorted(rates[dim].items())}
        for dim in sorted(rates, key=order.index)
    }


def by_environment(
    plan: CurvePlan, runs: dict[str, StoredRun], base_hash: str
) -> dict[str, dict[int, tuple[float, int]]]:
    """Each environment's held-out success per N (and trained directly, under CEILING), with how many runs: a mean
    over the (split, seed) runs that held it out, so one environment that never transfers shows, whatever the
    average hides. Environments never held out are left out; the rest in the pool's order."""
    rates: dict[str, dict[int, list[float]]] = {}
    for job, s, n in plan.jobs(base_hash):
        stored = runs.get(job.key)
        if stored is None:
            continue
        for name in plan.split(s)[0]:
            score = stored.run.scores.get(name)
            if score is not None and score.total:
                rates.setdefault(name, {}).setdefault(n, []).append(score.rate)
    return {
        name: {
            n: (sum(v) / len(v), len(v)) for n, v in sorted(rates[name].items(), key=lambda item: item[0] == CEILING)
        }
        for name in plan.pool
        if name in rates
    }
