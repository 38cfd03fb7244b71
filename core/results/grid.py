"""A sweep's grid: mixes x setting values x seeds, every cell on the same seeds and held-out sets (paired).

A cell is a mix with settings; a job is a cell on one seed. Seeds seed the demonstrations, the
held-out sets, batch order and dropout alike, so two cells on seed s are scored on the same held-out
sums: the difference between cells, seed by seed, is not seed noise. Built from what a person types
(`0-9`, `1e-3,2e-3`, `add_2x2/add_3x1=70:7`), with one-line refusals.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace

from breadth.core.storage.store import run_key
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError, swept

MAX_JOBS = 100_000  # a grid larger than this is surely a typo


class GridError(ValueError):
    """A grid that cannot be run: empty, too large, or built from bad values; one line."""


def refuse_repeats(what: str, values: Iterable) -> None:
    """GridError (one line, naming the value) if a list a person typed holds a value twice: a repeated seed would
    train one run and count it as two, so every list flag refuses one rather than quietly dropping it."""
    seen = set()
    for v in values:
        if v in seen:
            raise GridError(f"{what}: {v:g} appears twice" if isinstance(v, float) else f"{what}: {v} appears twice")
        seen.add(v)


@dataclass(frozen=True)
class Cell:
    """A mix with settings (the seed aside): one point of the grid."""

    mix: Mix
    settings: object  # its recipe's settings, seed 0 here; each job sets its own

    def label(self, varied: tuple[str, ...] = ()) -> str:
        """`2d 35+3d 35`, then the varied settings: `2d 35+3d 35 lr 0.001`."""
        extra = " ".join(f"{name} {getattr(self.settings, name):g}" for name in varied if name != "mix")
        return f"{self.mix.short()} {extra}".strip()


@dataclass(frozen=True)
class Job:
    """A cell on one seed: one fine-tune and its held-out evaluation, with the key it is stored under."""

    cell: Cell
    seed: int
    held_out: int | None
    key: str
    environments: tuple[str, ...] | None = None  # the environments it is scored on (None: every registered environment)

    @property
    def settings(self) -> object:
        return replace(self.cell.settings, seed=self.seed)


@dataclass(frozen=True)
class Grid:
    """Mixes x setting values x seeds at one held-out size."""

    mixes: tuple[Mix, ...]
    base: object  # the recipe's settings every cell shares (seed ignored)
    values: tuple[tuple[str, tuple], ...]  # (setting, values) for each swept setting
    seeds: tuple[int, ...]
    held_out: int | None

    def __post_init__(self) -> None:
        if not self.mixes or not self.seeds or any(not v for _, v in self.values):
            raise GridError("an empty grid: give at least one mix, one seed and one value per setting")
        refuse_repeats("seeds", self.seeds)
        if self.size > MAX_JOBS:
            raise GridError(f"{self.size:,} runs: more than {MAX_JOBS:,}; narrow the grid")

    @property
    def size(self) -> int:
        """How many runs the grid holds."""
        n = len(self.mixes) * len(self.seeds)
        for _, values in self.values:
            n *= len(values)
        return n

    @property
    def varied(self) -> tuple[str, ...]:
        """What differs between cells: `mix` if several mixes, then each setting with several values."""
        return (("mix",) if len(self.mixes) > 1 else ()) + tuple(n for n, v in self.values if len(v) > 1)

    def cells(self) -> list[Cell]:
        """Every cell, mixes outermost."""
        names = [name for name, _ in self.values]
        out = []
        for mix in self.mixes:
            for combo in itertools.product(*(values for _, values in self.values)):
                out.append(Cell(mix, replace(self.base, seed=0, **dict(zip(names, combo, strict=True)))))
        return out

    def jobs(self, base_hash: str) -> list[Job]:
        """Every run, seed by seed (so an interrupted sweep has whole seeds of every cell done first)."""
        return [
            Job(
                cell,
                seed,
                self.held_out,
                run_key(cell.mix.spec(), replace(cell.settings, seed=seed), self.held_out, base_hash),
            )
            for seed in self.seeds
            for cell in self.cells()
        ]


def parse_seeds(text: str) -> tuple[int, ...]:
    """`0-9`, `0,1,2` or a mix of both (`0-4,10`), each seed checked like FinetuneSettings.seed."""
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, dash, high = part.partition("-")
        try:
            ends = [FinetuneSettings.from_text(seed=x).seed for x in ((low, high) if dash else (low,))]
        except SettingsError as e:
            raise GridError(f"seeds {text!r}: {e}") from None
        if dash and ends[1] < ends[0]:
            raise GridError(f"seeds {part!r}: a range runs low to high")
        if dash and ends[1] - ends[0] >= MAX_JOBS:
            raise GridError(f"seeds {part!r}: more than {MAX_JOBS:,} seeds")
        seeds += range(ends[0], ends[-1] + 1)
    if not seeds:
        raise GridError("no seeds: write e.g. 0-9 or 0,1,2")
    refuse_repeats(f"seeds {text[:40]!r}", seeds)
    return tuple(seeds)


def parse_values(name: str, text: str, settings_class: type = FinetuneSettings) -> tuple:
    """A setting's values to sweep, `1e-3,2e-3`, each checked by the recipe's settings class."""
    sweepable = [s.name for s in swept(settings_class)]
    if name not in sweepable:
        raise GridError(f"cannot sweep {name!r}; sweepable: {', '.join(sweepable)}")
    values = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            values.append(getattr(settings_class.from_text(**{name: part}), name))
        except SettingsError as e:
            raise GridError(str(e)) from None
    if not values:
        raise GridError(f"no values for {name}")
    refuse_repeats(name, values)
    return tuple(values)


def _is_count(text: str) -> bool:
    """A count as typed: ASCII digits ('²' is a digit to str.isdigit, not to int), at most six of them (no pool is
    larger; a thousand digits would otherwise reach int()'s limit, or a range of a billion)."""
    text = text.strip()
    return text.isascii() and text.isdigit() and len(text) <= 6


def parse_share(text: str) -> tuple[Mix, ...]:
    """`add_2x2/add_3x1=70:7`: 70 demonstrations split 0/70, 7/63, ..., 70/0 between the two environments."""
    environments, eq, amounts = text.partition("=")
    first, slash, second = environments.partition("/")
    total, colon, step = amounts.partition(":")
    if not (eq and slash and colon and _is_count(total) and _is_count(step)):
        raise GridError(f"expected a share such as add_2x2/add_3x1=70:7, got {text[:60]!r}")
    total_n, step_n = int(total), int(step)
    if first.strip() == second.strip():
        raise GridError(f"a share is between two different environments, not {first.strip()!r} twice")
    if step_n <= 0 or total_n <= 0:
        raise GridError("a share's total and step are positive")
    counts = list(range(0, total_n + 1, step_n))
    if counts[-1] != total_n:
        counts.append(total_n)
    try:
        return tuple(Mix.of(**{first.strip(): n, second.strip(): total_n - n}) for n in counts)
    except (MixError, TypeError) as e:
        raise GridError(str(e)) from None


def parse_budget(text: str) -> tuple[Mix, ...]:
    """`add_2x2/add_3x1=10,20,35,70,140`: at each total, each environment alone and an even mix of the two.

    An odd total gives the first environment the extra demonstration (35: 18 + 17).
    """
    environments, eq, amounts = text.partition("=")
    first, slash, second = (part.strip() for part in environments.partition("/"))
    totals = [part.strip() for part in amounts.split(",")]
    if not (eq and slash and totals and all(_is_count(t) for t in totals)):
        raise GridError(f"expected a budget such as add_2x2/add_3x1=10,20,35,70,140, got {text[:60]!r}")
    if first == second:
        raise GridError(f"a budget compares two different environments, not {first!r} twice")
    mixes = []
    try:
        refuse_repeats("a budget's totals", [int(t) for t in totals])
        for total in (int(t) for t in totals):
            if total < 2:
                raise GridError(f"a budget's totals are at least 2 (one demonstration per environment), not {total}")
            mixes += [
                Mix.of(**{first: total}),
                Mix.of(**{second: total}),
                Mix.of(**{first: total - total // 2, second: total // 2}),
            ]
    except (MixError, TypeError) as e:
        raise GridError(str(e)) from None
    return tuple(mixes)
