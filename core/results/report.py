"""Summaries of stored runs: per cell and environment, the mean over seeds with intervals, and paired differences.

Runs that differ only by seed form a cell; runs trained in lockstep (`core.learning.lockstep`) form cells of their
own, apart from runs trained alone (`cells_by_seed`). Per environment a cell reports the seeds' rates, their mean with
a 95% t interval over seeds (the spread that matters when comparing settings: a new seed is a new
model), and the pooled Wilson interval (all held-out sums of all seeds together: the counting noise
alone). Two cells compare seed by seed on the seeds they share: the mean paired difference and its
t interval.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from breadth.core.storage.store import StoredRun
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.episodes.scores import FailedEpisode
from breadth.core.world.runs.recipes import swept_by_any
from breadth.core.world.runs.stats import mean_interval, paired_difference, wilson


@dataclass(frozen=True)
class CellKey:
    """What a cell's runs share: the mix, the settings without the seed, the held-out size, the base, and whether
    they trained alone or in lockstep (in groups of up to how many)."""

    mix: str
    settings: object  # its recipe's settings, seed 0
    held_out: int | None
    base_hash: str
    lockstep: int = 0  # its largest lockstep group's size; 0: every run trained alone
    part: int = 0  # a further lockstep cell of this recipe and size (its groups share seeds with the first's)

    @property
    def note(self) -> str:
        """`lockstep 8` for a cell of runs trained in lockstep (`lockstep_note`), '' for runs trained alone."""
        return lockstep_note(self.lockstep, self.part)


def lockstep_note(size: int, part: int = 0) -> str:
    """`lockstep 8` for runs trained in lockstep groups of up to 8, as `breadth runs` notes each run (`lockstep 8 #2`
    for a second cell of one recipe and size); '' for runs trained alone (size 0)."""
    if not size:
        return ""
    return f"lockstep {size}" + (f" #{part + 1}" if part else "")


@dataclass(frozen=True)
class EnvironmentSummary:
    """One environment's result over a cell's seeds."""

    environment: str
    rates: dict[int, float]  # seed -> share solved
    mean: float
    low: float  # 95% t interval over seeds
    high: float
    pooled_low: float  # 95% Wilson interval of all seeds' sums pooled
    pooled_high: float
    solved: int
    total: int
    failures: dict[str, int] = field(default_factory=dict)  # failure kind -> unsolved episodes, over every seed
    examples: tuple[tuple[int, FailedEpisode], ...] = ()  # (seed, failed episode), taking seeds in turn


@dataclass(frozen=True)
class CellSummary:
    """A cell: its key, its seeds and a summary per environment."""

    key: CellKey
    seeds: tuple[int, ...]
    environments: dict[str, EnvironmentSummary]  # environment -> its summary


def recipe_key(stored: StoredRun) -> CellKey:
    """The recipe a stored run followed, the seed aside: its cell if it trained alone (else see `cells_by_seed`)."""
    run = stored.run
    return CellKey(run.mix or "", replace(run.settings, seed=0), run.held_out, stored.base_hash)


def summarise(runs: list[StoredRun]) -> list[CellSummary]:
    """One summary per cell, in the order cells first appear."""
    return [
        _summary(replace(recipe, lockstep=k, part=part), by_seed)
        for recipe, k, part, by_seed in cells_by_seed(runs, recipe_key)
    ]


def cells_by_seed(items: Iterable[Any], recipe: Callable[[Any], Hashable]) -> list[tuple]:
    """Runs (anything with a `.run` record: stored runs, the app's models) in cells of one run a seed, in the order
    cells first appear: (recipe, lockstep size, part, {seed: item}).

    Runs trained alone pool by `recipe(item)` (lockstep size 0; of two runs of a seed, the later is kept). Runs
    trained in lockstep pool apart from them: each recipe's groups largest first (then as they come), a group into
    the first of the recipe's lockstep cells that has none of its seeds. So the groups of one `--lockstep K` (its
    last one smaller, or one made later for more seeds) are one cell, and groups that share a seed (another K, or
    seed lists that overlap) never are. A lockstep cell is named by its first (largest) group's size and, after the
    first cell of that size, its part (1, 2, ...).
    """
    alone: dict[Hashable, tuple[int, dict[int, Any]]] = {}  # recipe -> (where it first came, {seed: item})
    groups: dict[Hashable, dict[tuple[str, ...], list[tuple[int, Any]]]] = {}  # recipe -> group -> (where, item)
    for i, item in enumerate(items):
        run = item.run
        if run.lockstep is None:
            alone.setdefault(recipe(item), (i, {}))[1][run.seed] = item
        else:
            groups.setdefault(recipe(item), {}).setdefault(run.lockstep.group, []).append((i, item))
    cells = [(first, key, 0, 0, by_seed) for key, (first, by_seed) in alone.items()]
    for key, by_group in groups.items():
        placed: list[tuple[int, int, list[tuple[int, Any]]]] = []  # (size, part, members)
        for group, members in sorted(by_group.items(), key=lambda kv: -len(kv[0])):  # stable: as they come
            seeds = {item.run.seed for _, item in members}
            home = next((m for _, _, m in placed if not seeds & {item.run.seed for _, item in m}), None)
            if home is not None:
                home += members
            else:
                placed.append((len(group), sum(size == len(group) for size, _, _ in placed), list(members)))
        for size, part, members in placed:
            cells.append((min(i for i, _ in members), key, size, part, {item.run.seed: item for _, item in members}))
    return [(key, size, part, by_seed) for _, key, size, part, by_seed in sorted(cells, key=lambda c: c[0])]


def _summary(key: CellKey, by_seed: dict[int, StoredRun]) -> CellSummary:
    seeds = tuple(sorted(by_seed))
    names = list(dict.fromkeys(name for s in seeds for name in by_seed[s].run.scores))
    environments = {}
    for name in names:
        scored = {s: by_seed[s].run.scores[name] for s in seeds if name in by_seed[s].run.scores}
        rates = {s: sc.rate for s, sc in scored.items() if sc.total}
        solved, total = sum(sc.solved for sc in scored.values()), sum(sc.total for sc in scored.values())
        mean, low, high = mean_interval(list(rates.values())) if rates else (0.0, 0.0, 0.0)
        plo, phi = wilson(solved, total)
        failures: dict[str, int] = {}
        for sc in scored.values():
            for kind, n in sc.failures.items():
                failures[kind] = failures.get(kind, 0) + n
        examples = _in_turn({s: sc.examples for s, sc in scored.items()})
        environments[name] = EnvironmentSummary(
            name, rates, mean, max(0.0, low), min(1.0, high), plo, phi, solved, total, failures, examples
        )
    return CellSummary(key, seeds, environments)


def _in_turn(by_seed: dict[int, tuple[FailedEpisode, ...]]) -> tuple[tuple[int, FailedEpisode], ...]:
    """Every seed's kept failures, first of each seed, then second of each, so a few show several seeds."""
    out = []
    for i in range(max((len(e) for e in by_seed.values()), default=0)):
        out += [(seed, kept[i]) for seed, kept in by_seed.items() if i < len(kept)]
    return tuple(out)


@dataclass(frozen=True)
class PairedDifference:
    """B minus A for one environment, seed by seed on the seeds both cells have."""

    environment: str
    seeds: int
    mean: float
    low: float
    high: float


def compare(a: CellSummary, b: CellSummary) -> list[PairedDifference]:
    """Per environment both cells scored: the mean paired difference (b - a) in share solved, with its 95% interval."""
    out = []
    for name in a.environments:
        if name in b.environments:
            n, m, lo, hi = paired_difference(a.environments[name].rates, b.environments[name].rates)
            out.append(PairedDifference(name, n, m, lo, hi))
    return out


def varied(cells: list[CellSummary]) -> tuple[str, ...]:
    """What differs between the cells: `mix`, setting names, `held_out`, `base`, `lockstep`."""
    out = []
    if len({c.key.mix for c in cells}) > 1:
        out.append("mix")
    if len({type(c.key.settings) for c in cells}) > 1:
        out.append("recipe")
    for s in swept_by_any():
        if len({getattr(c.key.settings, s.name, None) for c in cells}) > 1:
            out.append(s.name)
    if len({c.key.held_out for c in cells}) > 1:
        out.append("held_out")
    if len({c.key.base_hash for c in cells}) > 1:
        out.append("base")
    if len({(c.key.lockstep, c.key.part) for c in cells}) > 1:
        out.append("lockstep")
    return tuple(out)


@dataclass(frozen=True)
class BudgetPoint:
    """One environment at one total of demonstrations: trained alone on the whole total, or in an even mix."""

    environment: str
    total: int
    alone: EnvironmentSummary
    mixed: EnvironmentSummary
    mixed_count: int  # the environment's own demonstrations in the mix

    def paired(self) -> tuple[int, float, float, float]:
        """Mixed minus alone, seed by seed: (seeds, mean, low, high) in share solved."""
        return paired_difference(self.alone.rates, self.mixed.rates)


def budget(cells: list[CellSummary]) -> list[BudgetPoint]:
    """The cells read as a demonstration budget (see core.results.grid.parse_budget), or [] if they are not one.

    For every total where an environment was trained alone and in an even two-environment mix of the same
    total, a point: its held-out success alone and mixed. Cells must share everything but the mix,
    and every mix must be one environment or an even two-environment mix (a share sweep's uneven mixes are not).
    """
    if set(varied(cells)) - {"mix"}:
        return []
    alone: dict[tuple[str, int], EnvironmentSummary] = {}
    mixed: dict[tuple[str, int], tuple[EnvironmentSummary, int]] = {}
    for cell in cells:
        try:
            counts = dict(Mix.parse(cell.key.mix).counts)
        except MixError:  # a stored mix this program cannot read (an environment no longer registered): not a budget
            return []
        total = sum(counts.values())
        if len(counts) == 1:
            (name,) = counts
            if name in cell.environments:
                alone[name, total] = cell.environments[name]
        elif len(counts) == 2 and max(counts.values()) - min(counts.values()) <= 1:
            for name, n in counts.items():
                if name in cell.environments:
                    mixed[name, total] = (cell.environments[name], n)
        else:
            return []
    points = [BudgetPoint(f, t, alone[f, t], *mixed[f, t]) for f, t in alone if (f, t) in mixed]
    order = list(REGISTERED)
    return sorted(points, key=lambda p: (order.index(p.environment) if p.environment in order else len(order), p.total))
