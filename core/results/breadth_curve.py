"""The breadth curve, Cobbe's protocol: how held-out success grows with the number of training environments.

From a pool of environments (a slice of the generator's space), each split holds some out at random and
orders the rest at random; a run trains on the first N of that order (N = 1, 2, 4, ...: nested subsets)
with the same demonstrations per environment, for steps that grow with N so that each demonstration is
seen about as often as on the plate (at least the plate's 400). Every run is scored on its training
environments and on the held-out ones (their test splits). A ceiling run per split trains on the held-out
environments themselves at the same budget: a curve that cannot reach its ceiling proves nothing.

Outcomes are often bimodal (a seed's held-out success either clicks or does not), so beside the mean
over seeds and splits with its 95% interval the curve reports the share of (split, seed) pairs that
transfer: held-out success above half of that split's ceiling on that seed. Runs are ordinary stored
runs (their mix names the environments, their scores cover exactly the families they were scored on),
so a curve resumes from the store like any sweep. The plan itself is stored too (`to_dict`, `from_dict`), so
the app can draw a curve from the store while it fills. A plan may train its runs in lockstep (`lockstep`: up to
K seeds of one point at a time, `core.results.groups`): its runs are then keyed by their groups, so a lockstep
curve and a curve of runs trained alone are two curves in the store, neither taken for the other.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
from dataclasses import dataclass, replace

from breadth.core.results.dimensions import coordinates, value
from breadth.core.results.grid import Cell, GridError, Job, refuse_repeats
from breadth.core.results.groups import Group, lockstep_groups
from breadth.core.storage.store import StoredRun, run_key
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS
from breadth.core.world.arithmetic.problem import first_name
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.registry import by_name
from breadth.core.world.runs.records import MAX_GROUP
from breadth.core.world.runs.settings import MAX_HELD_OUT, MAX_SEED, FinetuneSettings, SettingsError
from breadth.core.world.runs.stats import mean_interval

PLATE_PASSES = 400 * 8 / 70  # times the plate's recipe shows each demonstration: 400 steps of 8, 70 demonstrations
CEILING = 0  # the N of a ceiling run: trained on the split's held-out environments themselves


@dataclass(frozen=True)
class CurvePlan:
    """What a curve runs: the pool, how many held out per split, the N values, demonstrations, seeds, budget."""

    pool: tuple[str, ...]  # environment names, in registry order
    held: int  # environments held out per split
    splits: int
    sizes: tuple[int, ...]  # N: training environments per run (capped at what a split leaves)
    demos: int  # demonstrations per environment
    seeds: tuple[int, ...]
    settings: FinetuneSettings  # the recipe (its steps are replaced by the budget)
    held_out: int = 30  # test sums per environment a run is scored on
    passes: float = PLATE_PASSES  # times each demonstration is seen
    min_steps: int = 400  # never fewer steps than this
    lockstep: int = 0  # train up to this many seeds of a point together (core.learning.lockstep); 0: one at a time

    def __post_init__(self) -> None:
        """The plan's limits, one place for the writer (`breadth curve`, before anything is stored or trained) and
        every reader (the store, the app's curve view): a plan outside them is one GridError line."""
        if not 0 <= self.lockstep <= MAX_GROUP:
            raise GridError(f"--lockstep takes 1 to {MAX_GROUP} runs a group, not {self.lockstep}")
        refuse_repeats("the pool", self.pool)
        if not 1 <= self.held < len(self.pool):
            raise GridError(f"hold out 1 to {len(self.pool) - 1} of the pool's {len(self.pool)} environments")
        if self.splits < 1 or not self.sizes or not self.seeds:
            raise GridError("a curve needs at least one split, one N and one seed")
        if any(n < 1 for n in self.sizes):
            raise GridError("N counts training environments: 1 or more")
        refuse_repeats("--n", self.sizes)
        refuse_repeats("--seeds", self.seeds)
        if not isinstance(self.settings, FinetuneSettings):
            raise GridError("a curve fine-tunes on demonstrations: its settings are fine-tuning settings")
        for flag, values, low, high in (
            ("--n", self.sizes, 1, MAX_WHOLE),
            ("--seeds", self.seeds, 0, MAX_SEED),
            ("--splits", (self.splits,), 1, MAX_SPLITS),
            ("--demos", (self.demos,), 1, MAX_WHOLE),
            ("--held-out-sums", (self.held_out,), 1, MAX_HELD_OUT),
            ("--min-steps", (self.min_steps,), 1, MAX_STEPS),
        ):
            bad = next((v for v in values if not low <= v <= high), None)
            if bad is not None:
                raise GridError(f"{flag} takes {low:,} to {high:,}, not {bad}")
        if not math.isfinite(self.passes) or self.passes <= 0:
            raise GridError(f"--passes takes a number above 0 (times each demonstration is seen), not {self.passes}")
        runs = self.runs()
        if runs > MAX_RUNS:
            raise GridError(
                f"the plan asks for {runs:,} runs ({len(self.seeds):,} seeds x {self.splits:,} splits x "
                f"{runs // len(self.seeds) // self.splits} runs a split): more than {MAX_RUNS:,}; narrow --seeds, "
                "--splits or --n"
            )
        most = max(min(max(self.sizes), len(self.pool) - self.held), self.held)  # the largest run's environments
        longest = self.passes * most * self.demos / self.settings.batch_size  # `steps` before rounding up (may be inf)
        if longest > MAX_STEPS:
            many = f"{math.ceil(longest):,}" if math.isfinite(longest) else "endless"
            raise GridError(
                f"the largest run ({most} environments x {self.demos} demonstrations, each seen {self.passes:g} "
                f"times) would take {many} steps: more than {MAX_STEPS:,}; lower --passes or --demos"
            )
        if math.comb(len(self.pool), self.held) < self.splits:
            raise GridError(
                f"{self.splits} splits need as many different held-out sets: {len(self.pool)} environments have "
                f"{math.comb(len(self.pool), self.held)} of {self.held}"
            )
        _splits(self.pool, self.held, self.splits)  # drawn now (cached): a plan whose splits cannot be is refused

    def runs(self) -> int:
        """How many runs the plan asks for (every split leaves as many environments, so each runs as many N)."""
        left = len(self.pool) - self.held
        return len(self.seeds) * self.splits * (len({min(n, left) for n in self.sizes}) + 1)

    def to_dict(self) -> dict:
        """The plan as plain JSON values (what the store keeps); `lockstep` only when it is on, so a curve of runs
        trained alone keeps the name it always had."""
        out = {name: getattr(self, name) for name in PLAN_FIELDS}
        return out | {
            "pool": list(self.pool),
            "sizes": list(self.sizes),
            "seeds": list(self.seeds),
            "settings": self.settings.to_dict(),
            **({"lockstep": self.lockstep} if self.lockstep else {}),
        }

    @classmethod
    def from_dict(cls, data: object) -> CurvePlan:
        """A plan from JSON data read from a store; GridError (one line) for data breadth did not write: of another
        shape or kind, or outside the limits `breadth curve` checks before it stores a plan (`__post_init__`)."""
        if not isinstance(data, dict) or set(data) - {"lockstep"} != {*PLAN_FIELDS, *PLAN_LISTS}:
            raise GridError("a stored curve plan of an unexpected shape")
        lockstep = data.get("lockstep", 0)
        if not _whole(lockstep) or "lockstep" in data and not 1 <= lockstep <= MAX_GROUP:
            raise GridError("a stored curve plan with values of the wrong kind")
        lists = [data[name] for name in ("pool", "sizes", "seeds")]
        if not all(isinstance(v, list) and len(v) <= MAX_RUNS for v in lists):
            raise GridError("a stored curve plan whose pool, sizes or seeds are not lists")
        pool, sizes, seeds = lists
        held, splits, demos, held_out, passes, min_steps = (data[name] for name in PLAN_FIELDS)
        if not all(isinstance(p, str) for p in pool) or not all(
            _whole(x) for x in [*sizes, *seeds, held, splits, demos, held_out, min_steps]
        ):
            raise GridError("a stored curve plan with values of the wrong kind")
        if isinstance(passes, bool) or not isinstance(passes, int | float):
            raise GridError("a stored curve plan with values of the wrong kind")
        if len(seeds) * splits * (len(sizes) + 1) > MAX_RUNS:
            raise GridError(f"a stored curve plan of more than {MAX_RUNS:,} runs")
        for name in pool:
            try:
                by_name(name)
            except KeyError:
                raise GridError(f"a stored curve's environment {name[:40]!r} is not registered here") from None
        pool = [by_name(name).name for name in pool]  # an old name (`two_digit`) reads as its environment's
        try:
            settings = FinetuneSettings.from_dict(data["settings"])
        except SettingsError as e:
            raise GridError(f"a stored curve plan's settings: {e}") from None
        sizes, seeds = tuple(sizes), tuple(seeds)
        try:
            return cls(tuple(pool), held, splits, sizes, demos, seeds, settings, held_out, passes, min_steps, lockstep)
        except GridError as e:
            raise GridError(f"a stored curve plan breadth would not write: {e}") from None

    def split(self, index: int) -> tuple[list[str], list[str]]:
        """Split `index`: the held-out environments and the others in the order nested subsets take them. No two
        splits hold out the same set (a draw an earlier split holds is drawn again), so no run is counted twice."""
        return _splits(self.pool, self.held, max(self.splits, index + 1))[index]  # drawn once for every split

    def steps(self, environments: int) -> int:
        """Steps for a run on this many environments: each demonstration seen `passes` times, at least min_steps."""
        return max(self.min_steps, math.ceil(self.passes * environments * self.demos / self.settings.batch_size))

    def sizes_of(self, index: int) -> list[int]:
        """The N values split `index` can run (those above what it leaves are dropped; the largest is kept once)."""
        left = len(self.split(index)[1])
        return sorted({min(n, left) for n in self.sizes})

    def jobs(self, base_hash: str) -> list[tuple[Job, int, int]]:
        """Every run as (job, split, N), seed by seed; N = CEILING for the ceiling run of a split. In lockstep, each
        job is keyed by its group (`groups`)."""
        alone = self._alone(base_hash)
        if not self.lockstep:
            return alone
        together = {key: job for g in self.groups(base_hash) for key, job in zip(g.alone, g.jobs, strict=True)}
        return [(together[job.key], s, n) for job, s, n in alone]

    def groups(self, base_hash: str) -> list[Group]:
        """The lockstep groups the runs train in: up to `lockstep` seeds of one split and N, in seed order."""
        return lockstep_groups([job for job, _, _ in self._alone(base_hash)], self.lockstep, base_hash)

    def _alone(self, base_hash: str) -> list[tuple[Job, int, int]]:
        """Every run as (job, split, N) keyed as a run trained alone."""
        out = []
        for seed in self.seeds:
            for s in range(self.splits):
                held, order = self.split(s)
                for n in [*self.sizes_of(s), CEILING]:
                    trained = held if n == CEILING else order[:n]
                    out.append((self._job(trained, held, seed, base_hash), s, n))
        return out

    def _job(self, trained: list[str], held: list[str], seed: int, base_hash: str) -> Job:
        demos = min([self.demos] + [_pool(name) for name in trained])
        mix = Mix.of(**dict.fromkeys(trained, demos))
        settings = replace(self.settings, steps=self.steps(len(trained)), seed=seed)
        families = tuple(dict.fromkeys([*trained, *held]))
        key = run_key(mix.spec(), settings, self.held_out, base_hash, families)
        return Job(Cell(mix, replace(settings, seed=0)), seed, self.held_out, key, families)


@functools.cache
def _splits(pool: tuple[str, ...], held: int, count: int) -> list[tuple[list[str], list[str]]]:
    """The first `count` splits of `pool`: each a seeded shuffle (`curve/<i>`), drawn again (`curve/<i>/<attempt>`)
    while its held-out set is one an earlier split holds. The first draws are kept, so curves whose splits never
    collided keep their runs."""
    out: list[tuple[list[str], list[str]]] = []
    seen: set[frozenset[str]] = set()
    for i in range(count):
        for attempt in range(10_000):
            names = list(pool)
            random.Random(f"curve/{i}" if attempt == 0 else f"curve/{i}/{attempt}").shuffle(names)
            if frozenset(names[:held]) not in seen:
                break
        else:
            raise GridError(f"no held-out set for split {i} that no earlier split holds")
        seen.add(frozenset(names[:held]))
        out.append((sorted(names[:held], key=pool.index), names[held:]))
    return out


MAX_SPLITS = 1_000  # splits a curve may draw: each is drawn again while an earlier one holds its held-out set
MAX_RUNS = 100_000  # runs a curve may ask for (as a sweep's grid): more is surely a typo, and would not be drawn
MAX_WHOLE = 10**9  # the largest N, demonstrations per environment (each run takes at most an environment's pool)
MAX_STEPS = FinetuneSettings.setting("steps").high  # the most steps any run may take, as FinetuneSettings checks
PLAN_FIELDS = ("held", "splits", "demos", "held_out", "passes", "min_steps")  # the plan's numbers, stored as they are
PLAN_LISTS = ("pool", "sizes", "seeds", "settings")  # the plan's lists and its settings (`lockstep` only when on)


def _whole(x: object) -> bool:
    """A whole number as JSON gives it (bool is not one); its limits are the plan's own (`CurvePlan.__post_init__`)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _pool(name: str) -> int:
    return by_name(name).demo_pool


@dataclass(frozen=True)
class StoredCurve:
    """A curve as the store keeps it: its plan, the words that chose its pool, the base its runs start from."""

    plan: CurvePlan
    what: str  # `operands=2`, or `every environment`
    base_hash: str
    created: float = 0.0

    @property
    def name(self) -> str:
        """Its name in the store: a hash of the plan and the base (the same plan from another base is another curve),
        its environments named as they were when curves were first stored (`first_name`), so a curve keeps its name."""
        plan = self.plan.to_dict()
        plan["pool"] = [first_name(name) for name in plan["pool"]]
        text = json.dumps([plan, self.base_hash], sort_keys=True)
        return "curve-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        """What the store keeps under the name."""
        return {"plan": self.plan.to_dict(), "what": self.what, "base": self.base_hash}

    @classmethod
    def from_dict(cls, data: dict, created: float = 0.0) -> StoredCurve:
        """A stored curve from the store's JSON; GridError (one line) for data breadth did not write."""
        if set(data) != {"plan", "what", "base"} or not all(isinstance(data[k], str) for k in ("what", "base")):
            raise GridError("a stored curve of an unexpected shape")
        return cls(CurvePlan.from_dict(data["plan"]), data["what"][:200], data["base"][:64], created)


@dataclass(frozen=True)
class CurvePoint:
    """One N of the curve over every split and seed: training, held-out and the gap, each a mean with its 95%
    interval over the (split, seed) pairs, and the share of pairs that transfer (above half their ceiling)."""

    n: int  # training environments (CEILING: the held-out environments trained directly)
    steps: str  # the steps its runs took (a range when splits differ)
    pairs: int  # (split, seed) pairs with a stored run
    train: tuple[float, float, float]  # mean, low, high (rates 0-1)
    held: tuple[float, float, float]
    gap: tuple[float, float, float]  # train - held, paired
    transfer: float | None  # share of pairs above half their ceiling (None: the ceiling row, or no ceiling above 0)


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
            judged = [(h > ceiling[(s, seed)] / 2) for s, seed, _, h, _ in rows if ceiling.get((s, seed), 0) > 0]
            share = sum(judged) / len(judged) if judged else None
        out.append(
            CurvePoint(
                n,
                str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}",
                len(rows),
                _interval([r[2] for r in rows]),
                _interval([r[3] for r in rows]),
                _interval([r[2] - r[3] for r in rows], least=-1.0),
                share,
            )
        )
    return out


def _mean(scores: dict, names: list[str]) -> float:
    rates = [scores[name].rate for name in names if name in scores]
    return sum(rates) / len(rates) if rates else 0.0


def _interval(values: list[float], least: float = 0.0) -> tuple[float, float, float]:
    """Mean and 95% t interval, the interval kept within what the values can be (rates: 0-1; a gap: -1 to 1): with
    three pairs a t interval runs past 100%, which no success rate can."""
    m, low, high = mean_interval(values)
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
