"""The breadth curve, Cobbe's protocol: how held-out success grows with the number of training environments.

From a pool of environments (a slice of the generator's space), each split holds some out (at random, or as folds
that hold each environment out as often: `core.results.splits`) and orders the rest at random; a run trains on the
first N of that order (N = 1, 2, 4, ...: nested subsets) with the same demonstrations per environment (fewer for one
whose demonstration pool is smaller: it gives all it has, and the others keep theirs), for steps that grow with N so
that each demonstration is seen about as often as on the plate (at least the plate's 400). Every run is scored on its
training environments and on the held-out ones (their test splits). A ceiling run per split trains on the held-out
environments themselves at the same budget: a curve that cannot reach its ceiling proves nothing.

Outcomes are often bimodal (a seed's held-out success either clicks or does not), so beside the mean
over seeds and splits with its 95% interval the curve reports the share of (split, seed) pairs that
transfer: held-out success above half of that split's ceiling on that seed. Runs are ordinary stored
runs (their mix names the environments, their scores cover exactly the environments they were scored on),
so a curve resumes from the store like any sweep. The plan itself is stored too (`to_dict`, `from_dict`), so
the app can draw a curve from the store while it fills. A plan may train its runs in lockstep (`lockstep`: up to
K seeds of one point at a time, `core.results.groups`): its runs are then keyed by their groups, so a lockstep
curve and a curve of runs trained alone are two curves in the store, neither taken for the other.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace

from breadth.core.results.grid import Cell, GridError, Job, refuse_repeats
from breadth.core.results.groups import Group, lockstep_groups
from breadth.core.results.splits import designed, fold_splits, held_splits, random_splits
from breadth.core.storage.store import run_key
from breadth.core.world.arithmetic.problem import first_name
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.registry import by_name
from breadth.core.world.runs.records import MAX_GROUP
from breadth.core.world.runs.settings import MAX_HELD_OUT, MAX_SEED, FinetuneSettings, SettingsError

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
    folds: bool = False  # held-out sets as folds, each environment held out as often (`core.results.splits`)
    budget: str = "own"  # steps: each run its own (`own`), the ceiling (`ceiling`) or every run (`largest`) at N max's
    total_demos: int = 0  # the same demonstrations in all, split over a run's environments; 0: `demos` each
    hold: tuple[str, ...] = ()  # a designed hold-out: DIM=PATTERN conditions naming the held-out environments
    vary: tuple[str, ...] = ()  # with `hold`: training only on environments one step from them along these

    def __post_init__(self) -> None:
        """The plan's limits, one place for the writer (`breadth curve`, before anything is stored or trained) and
        every reader (the store, the app's curve view): a plan outside them is one GridError line."""
        if not 0 <= self.lockstep <= MAX_GROUP:
            raise GridError(f"--lockstep takes 1 to {MAX_GROUP} runs a group, not {self.lockstep}")
        if self.budget not in BUDGETS:
            raise GridError(f"--budget is one of {', '.join(BUDGETS)}, not {str(self.budget)[:20]!r}")
        refuse_repeats("the pool", self.pool)
        if self.vary and not self.hold:
            raise GridError("--vary chooses the training environments of a designed hold-out: give --hold too")
        if self.hold and self.folds:
            raise GridError("--folds draws the held-out sets and --hold names them: give one")
        if self.hold and self.held != len(designed(self.pool, self.hold, self.vary)[0]):
            raise GridError(f"--hold {' '.join(self.hold)} names the held-out environments: --held cannot count them")
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
            ("--total-demos", (self.total_demos,), 0, MAX_WHOLE),
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
        most = max(self.largest(), self.held)  # the most environments a run trains on
        if self.total_demos and self.total_demos < most:
            raise GridError(
                f"--total-demos {self.total_demos} gives each of a run's environments at least one demonstration "
                f"only from {most} up (the most a run trains on)"
            )
        longest = max(
            self.passes * n * self.demos_for(n) / self.settings.batch_size for n in (self.largest(), self.held)
        )
        if longest > MAX_STEPS:  # the most steps a run takes, before rounding up (may be inf)
            many = f"{math.ceil(longest):,}" if math.isfinite(longest) else "endless"
            raise GridError(
                f"the largest run ({most} environments x {self.demos_for(most)} demonstrations, each seen "
                f"{self.passes:g} "
                f"times) would take {many} steps: more than {MAX_STEPS:,}; lower --passes or --demos"
            )
        if not self.hold and math.comb(len(self.pool), self.held) < self.splits:
            raise GridError(
                f"{self.splits} splits need as many different held-out sets: {len(self.pool)} environments have "
                f"{math.comb(len(self.pool), self.held)} of {self.held}"
            )
        self._drawn(self.splits)  # drawn now (cached): a plan whose splits cannot be is refused

    def runs(self) -> int:
        """How many runs the plan asks for (every split leaves as many environments, so each runs as many N); a
        designed hold-out's runs that repeat across splits are counted each time."""
        left = self.trainable()
        return len(self.seeds) * self.splits * (len({min(n, left) for n in self.sizes}) + 1)

    def trainable(self) -> int:
        """How many environments a split leaves to train on: the pool's rest, or a designed hold-out's choice."""
        return len(designed(self.pool, self.hold, self.vary)[1]) if self.hold else len(self.pool) - self.held

    def ceiling_split(self, index: int) -> int:
        """The split whose ceiling run serves split `index`: its own, or for a designed hold-out (one held-out set,
        one ceiling run per seed) the first."""
        return 0 if self.hold else index

    def to_dict(self) -> dict:
        """The plan as plain JSON values (what the store keeps); the `OPTIONAL` fields only when on, so a curve of
        runs trained alone on random splits at their own budgets keeps the name it always had."""
        out = {name: getattr(self, name) for name in PLAN_FIELDS}
        return out | {
            "pool": list(self.pool),
            "sizes": list(self.sizes),
            "seeds": list(self.seeds),
            "settings": self.settings.to_dict(),
            **{name: _plain(getattr(self, name)) for name, off in OPTIONAL.items() if getattr(self, name) != off},
        }

    @classmethod
    def from_dict(cls, data: object) -> CurvePlan:
        """A plan from JSON data read from a store; GridError (one line) for data breadth did not write: of another
        shape or kind, or outside the limits `breadth curve` checks before it stores a plan (`__post_init__`)."""
        if not isinstance(data, dict) or set(data) - set(OPTIONAL) != {*PLAN_FIELDS, *PLAN_LISTS}:
            raise GridError("a stored curve plan of an unexpected shape")
        optional = {name: _tupled(data.get(name, off)) for name, off in OPTIONAL.items()}
        if any(type(value) is not type(OPTIONAL[name]) or name in data and value == OPTIONAL[name]
               for name, value in optional.items()):  # fmt: skip  # each of its kind, and written only when on
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
            return cls(
                tuple(pool), held, splits, sizes, demos, seeds, settings, held_out, passes, min_steps, **optional
            )
        except GridError as e:
            raise GridError(f"a stored curve plan breadth would not write: {e}") from None

    def split(self, index: int) -> tuple[list[str], list[str]]:
        """Split `index`: the held-out environments and the others in the order nested subsets take them. No two
        splits hold out the same set (a draw an earlier split holds is drawn again), so no run is counted twice."""
        return self._drawn(max(self.splits, index + 1))[index]  # drawn once for every split

    def _drawn(self, count: int) -> list[tuple[list[str], list[str]]]:
        """The first `count` splits by the plan's design: random draws, or folds (`core.results.splits`)."""
        if self.hold:
            return held_splits(self.pool, self.hold, self.vary, count)
        draw = fold_splits if self.folds else random_splits
        return draw(self.pool, self.held, count)

    def demos_for(self, environments: int) -> int:
        """Demonstrations of each environment a run on this many takes: `demos`, or `total_demos` split over them."""
        return self.total_demos // environments if self.total_demos else self.demos

    def steps(self, environments: int) -> int:
        """A run's own budget on this many environments: each demonstration seen `passes` times, at least min_steps."""
        demos = environments * self.demos_for(environments)
        return max(self.min_steps, math.ceil(self.passes * demos / self.settings.batch_size))

    def largest(self) -> int:
        """The largest N a split runs (every split leaves as many environments)."""
        return min(max(self.sizes), self.trainable())

    def steps_of(self, environments: int, ceiling: bool = False) -> int:
        """The steps a run takes by the plan's budget: its own, or the largest N's (for the ceiling, or for all)."""
        matched = self.budget == "largest" or self.budget == "ceiling" and ceiling
        return self.steps(self.largest() if matched else environments)

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
        """Every run as (job, split, N) keyed as a run trained alone, each once: a designed hold-out's ceiling, and
        its largest N (every split trains on all it may), are one run per seed, which the first split holds."""
        out, seen = [], set()
        for seed in self.seeds:
            for s in range(self.splits):
                held, order = self.split(s)
                for n in [*self.sizes_of(s), CEILING]:
                    trained = held if n == CEILING else order[:n]
                    job = self._job(trained, held, seed, base_hash, n == CEILING)
                    if job.key not in seen:
                        seen.add(job.key)
                        out.append((job, s, n))
        return out

    def _job(self, trained: list[str], held: list[str], seed: int, base_hash: str, ceiling: bool) -> Job:
        demos = self.demos_for(len(trained))
        # an environment with a smaller pool gives all it has; the others keep theirs (the smallest pool for every
        # environment would hand a run on 128 of the wide pool 50 demonstrations of each, whatever --demos said)
        mix = Mix.of(**{name: min(demos, _pool(name)) for name in trained})
        settings = replace(self.settings, steps=self.steps_of(len(trained), ceiling), seed=seed)
        environments = tuple(dict.fromkeys([*trained, *held]))
        key = run_key(mix.spec(), settings, self.held_out, base_hash, environments)
        return Job(Cell(mix, replace(settings, seed=0)), seed, self.held_out, key, environments)


MAX_SPLITS = 1_000  # splits a curve may draw: each is drawn again while an earlier one holds its held-out set
MAX_RUNS = 100_000  # runs a curve may ask for (as a sweep's grid): more is surely a typo, and would not be drawn
MAX_WHOLE = 10**9  # the largest N, demonstrations per environment (each run takes at most an environment's pool)
MAX_STEPS = FinetuneSettings.setting("steps").high  # the most steps any run may take, as FinetuneSettings checks
PLAN_FIELDS = ("held", "splits", "demos", "held_out", "passes", "min_steps")  # the plan's numbers, stored as they are
PLAN_LISTS = ("pool", "sizes", "seeds", "settings")  # the plan's lists and its settings
OPTIONAL = {"lockstep": 0, "folds": False, "budget": "own", "total_demos": 0, "hold": (), "vary": ()}  # when not these
BUDGETS = ("own", "ceiling", "largest")  # `budget`: whose steps a run takes


def _plain(value: object) -> object:
    """A plan field as JSON holds it: a tuple as a list."""
    return list(value) if isinstance(value, tuple) else value


def _tupled(value: object) -> object:
    """A stored list of text as the plan's tuple (anything else as it is, for the kind check to refuse)."""
    return tuple(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value


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
