"""The transfer matrix by dimension: a row's cells when its environments are more than columns fit (no torch).

A row scored on many environments (a breadth curve's runs are scored on up to a dozen generated ones, whose ids
run to 15 characters) cannot give each a column at 80 columns. Its cells pool them instead, each environment
counting once with its mean over seeds, as `core.results.dimensions` pools one model's scores: `own` over the
environments the row trained on; then, over those it was scored on and did not train on (held out), all of
them, by operand count, by operation (`+`, `-`: one throughout; `mixed`: more than one) and by call form. Which
form a matrix takes is its front end's choice by width: a column per environment where that fits (the plate's
and the ten named environments do at 80 columns), this where it does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from breadth.core.results.dimensions import Rate
from breadth.core.results.matrix import MatrixRow
from breadth.core.results.report import EnvironmentSummary
from breadth.core.world.arithmetic.calculator import FORMS
from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.arithmetic.operations import OPERATIONS
from breadth.core.world.environments.registry import by_name

OWN = "own"  # the column pooling the environments a row trained on
HELD = "held out"  # the column pooling every environment a row was scored on and did not train on
MIXED = "mixed"  # the operation value of a sum with more than one operation (`12+3-4`)
GROUPS = {OWN: "", HELD: "held out", "operands": "numbers", "op": "op", "form": "form"}  # header's first line


@dataclass(frozen=True)
class DimensionColumn:
    """A column of the matrix by dimension: `own`, `held out`, or one value of a dimension over held-out ones."""

    dimension: str  # OWN, HELD, or a dimension of the environments: "operands", "op", "form"
    value: str = ""  # the value pooled: "2", "+", "mixed", "postfix" ("" for OWN and HELD)

    @property
    def group(self) -> str:
        """The header's first line, shown over a group's first column: `held out`, `numbers`, `op`, `form`."""
        return GROUPS[self.dimension]

    @property
    def header(self) -> str:
        """The header's second line: `own`, `all`, `2`, `+`, `mixed`, `postfix`."""
        return {OWN: "own", HELD: "all"}.get(self.dimension, self.value)

    @property
    def key(self) -> str:
        """A key no other column has: `own`, `held out`, `operands=2`."""
        return f"{self.dimension}={self.value}" if self.value else self.dimension

    def describe(self) -> str:
        """The cell's environments in words: `trained on`, `held out`, `held out, 2 numbers`, `held out, form infix`."""
        if self.dimension in (OWN, HELD):
            return "trained on" if self.dimension == OWN else HELD
        if self.dimension == "operands":
            return f"{HELD}, {self.value} numbers"
        return f"{HELD}, {'operation' if self.dimension == 'op' else self.dimension} {self.value}"

    def members(self, row: MatrixRow) -> list[str]:
        """The environments of `row` this column pools: those scored, trained on (OWN) or not, at its value."""
        scored = [name for name, f in row.cells.items() if f.total]
        if self.dimension == OWN:
            return [name for name in scored if name in row.trained]
        held = [name for name in scored if name not in row.trained]
        return held if self.dimension == HELD else [n for n in held if dimension_value(n, self.dimension) == self.value]


def dimension_value(name: str, dimension: str) -> str | None:
    """An environment's value on `dimension` as the columns name it (`2`, `+`, `mixed`, `infix`); None for a name no
    longer registered or generated (a stored run's), which only the `own` and `held out` columns pool."""
    try:
        at: Coordinates = by_name(name).at
    except KeyError:
        return None
    if dimension == "op":
        return at.op if len(set(at.op)) == 1 else MIXED
    return at.value(dimension)


def dimension_columns(rows: Sequence[MatrixRow]) -> list[DimensionColumn]:
    """`own`, `held out`, then each value some row holds environments out at: operand counts, operations, forms, in
    reading order (counts as numbers, operations and forms in registry order, `mixed` last)."""
    held = {name for row in rows for name, f in row.cells.items() if f.total and name not in row.trained}
    out = [DimensionColumn(OWN), DimensionColumn(HELD)]
    for dimension, order in (("operands", None), ("op", [*OPERATIONS, MIXED]), ("form", list(FORMS))):
        values = {v for v in (dimension_value(n, dimension) for n in held) if v is not None}
        key = (lambda v: (int(v), v)) if order is None else (lambda v, o=order: (o.index(v) if v in o else len(o), v))
        out += [DimensionColumn(dimension, v) for v in sorted(values, key=key)]
    return out


def pooled(row: MatrixRow, column: DimensionColumn) -> Rate | None:
    """The row's environments in `column` pooled: the mean of their means over seeds, their sums, how many; None when
    it has none there."""
    members: list[EnvironmentSummary] = [row.cells[name] for name in column.members(row)]
    if not members:
        return None
    mean = sum(f.mean for f in members) / len(members)
    return Rate(mean, sum(f.solved for f in members), sum(f.total for f in members), len(members))


def per_seed(row: MatrixRow, column: DimensionColumn) -> dict[int, float]:
    """Seed -> the mean rate of the column's environments on that seed, for the seeds every one of them was run on."""
    members = [row.cells[name] for name in column.members(row)]
    seeds = set.intersection(*(set(f.rates) for f in members)) if members else set()
    return {s: sum(f.rates[s] for f in members) / len(members) for s in sorted(seeds)}
