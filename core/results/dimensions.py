"""Scores over many environments summarised along their dimensions, not a column per environment (no torch).

A model scored on a hundred environments gives a hundred rates; people read them by dimension. `Rate` pools
some environments' scores (each environment counts once in its mean); `group` pools them by the values of
any dimensions (`group(scores, ("operands",))`); `summarise` gives what `breadth eval --envs` prints and what
the app's score panel and the matrix can show: the overall mean, the mean per value of each dimension, and
one table per operand count whose rows are digit layouts (the digits of each number, `2.1.2`) and whose
columns are operation layouts in a call form (`+-`, `+ pf`), with each row's and column's mean beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from breadth.core.world.arithmetic.calculator import FORMS
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS, Coordinates
from breadth.core.world.arithmetic.problem import PLATE_FORM
from breadth.core.world.environments.registry import by_name, env_id
from breadth.core.world.episodes.scores import HeldOutScore


@dataclass(frozen=True)
class Rate:
    """Success over some environments: their mean rate (each environment counts once) and the pooled sums."""

    mean: float  # the mean of the environments' success rates, 0..1
    solved: int  # sums solved, over every environment pooled
    total: int  # sums scored, pooled
    environments: int  # how many environments

    def percent(self) -> str:
        """The mean as a whole percent, `57%`; `-` when nothing was scored."""
        return f"{100 * self.mean:.0f}%" if self.total else "-"

    def to_dict(self) -> dict:
        """JSON form."""
        return {"mean": self.mean, "solved": self.solved, "total": self.total, "environments": self.environments}


def rate(scores: Iterable[HeldOutScore]) -> Rate:
    """The environments' scores pooled (those with nothing scored left out of the mean)."""
    scored = [s for s in scores if s.total]
    mean = sum(s.rate for s in scored) / len(scored) if scored else 0.0
    return Rate(mean, sum(s.solved for s in scored), sum(s.total for s in scored), len(scored))


def coordinates(name: str) -> Coordinates:
    """Where the environment of this name (registered or generated) sits."""
    return by_name(name).at


def value(at: Coordinates, dimension: str) -> str:
    """A dimension's value as the summary names it: as `Coordinates.value`, but digits always per position
    (`2.2` for two two-digit numbers, so rows of one table compare) and operations as signs (`+-`)."""
    if dimension == "digits":
        return ".".join(map(str, at.layout))
    if dimension == "op":
        return "".join(o.symbol for o in at.operations) if len(at.op) > 1 else at.op
    return at.value(dimension)


def group(scores: Mapping[str, HeldOutScore], by: Sequence[str]) -> dict[tuple[str, ...], Rate]:
    """The scores (by environment name) pooled by their values on the dimensions `by`, in first-seen order."""
    unknown = [d for d in by if d not in ENV_DIMENSIONS]
    if unknown:
        raise ValueError(f"no dimension {unknown[0]!r}; dimensions: {', '.join(ENV_DIMENSIONS)}")
    groups: dict[tuple[str, ...], list[HeldOutScore]] = {}
    for name, score in scores.items():
        at = coordinates(name)
        groups.setdefault(tuple(value(at, d) for d in by), []).append(score)
    return {key: rate(members) for key, members in groups.items()}


@dataclass(frozen=True)
class Column:
    """An operation layout in a call form: a column of an operand count's table."""

    op: str  # the operation at each gap as signs: `+`, `+-`
    form: str  # the call form's name

    @property
    def header(self) -> str:
        """`+-`, or `+ p` in another form than the plate's (`mark`)."""
        return self.op if self.form == PLATE_FORM else f"{self.op} {mark(self.form)}"


def mark(form: str) -> str:
    """A form's mark in a column's header: its first letter (`p`: postfix); the plate's form has none."""
    return "" if form == PLATE_FORM else form[0]


@dataclass(frozen=True)
class OperandTable:
    """One operand count: a rate per digit layout (row) and operation layout in a form (column), and the means."""

    operands: int
    rows: tuple[str, ...]  # digit layouts, `1.1.2`, in order
    columns: tuple[Column, ...]  # operation layouts: the plate's form first, then the others, `+` before `-`
    cells: dict[tuple[str, Column], Rate]  # (row, column) -> rate; absent where no environment was scored
    row_means: dict[str, Rate]
    column_means: dict[Column, Rate]
    mean: Rate


@dataclass(frozen=True)
class Summary:
    """What a score over many environments says by dimension."""

    overall: Rate
    by: dict[str, dict[str, Rate]]  # dimension -> value -> rate, for every named dimension
    tables: tuple[OperandTable, ...]  # one per operand count, fewest first


def summarise(scores: Mapping[str, HeldOutScore]) -> Summary:
    """The overall mean, the mean per value of every dimension, and a table per operand count."""
    by = {d: _sorted(d, group(scores, (d,))) for d in ENV_DIMENSIONS}
    tables = []
    for n in sorted({coordinates(name).operands for name in scores}):
        mine = {name: s for name, s in scores.items() if coordinates(name).operands == n}
        cells_by = group(mine, ("digits", "op", "form"))
        cells = {(row, Column(op, form)): r for (row, op, form), r in cells_by.items()}
        rows = tuple(sorted({row for row, _ in cells}))
        columns = tuple(sorted({c for _, c in cells}, key=_column_order))
        row_means = {key[0]: r for key, r in group(mine, ("digits",)).items()}
        column_means = {Column(op, form): r for (op, form), r in group(mine, ("op", "form")).items()}
        tables.append(OperandTable(n, rows, columns, cells, row_means, column_means, rate(mine.values())))
    return Summary(rate(scores.values()), by, tuple(tables))


def _column_order(column: Column) -> tuple:
    """The plate's form first, then the other forms in registry order; in a form, one operation throughout first."""
    forms = list(FORMS)
    return (forms.index(column.form) if column.form in forms else len(forms), len(set(column.op)) > 1, column.op)


def _sorted(dimension: str, rates: dict[tuple[str, ...], Rate]) -> dict[str, Rate]:
    """One dimension's rates by value, in reading order: operand counts as numbers, forms in registry order,
    digit and operation layouts shortest first (`+`, `-`, `+-`, ..., `++-`)."""
    forms = list(FORMS)

    def key(v: str) -> tuple:
        if dimension == "operands":
            return (int(v), v)
        if dimension == "form":
            return (forms.index(v) if v in forms else len(forms), v)
        return (len(v), v)

    return {v: rates[(v,)] for v in sorted((k[0] for k in rates), key=key)}


def environments_json(scores: Mapping[str, HeldOutScore]) -> dict[str, dict]:
    """Every environment's score by its id, with its coordinates (what `--json` keeps)."""
    out = {}
    for name, score in scores.items():
        at = coordinates(name)
        out[env_id(by_name(name))] = {"name": name, **{d: at.value(d) for d in ENV_DIMENSIONS}, **score.to_dict()}
    return out


def summary_json(summary: Summary) -> dict:
    """The summary as JSON: the overall rate and the rate per value of each dimension."""
    return {
        "overall": summary.overall.to_dict(),
        "by": {d: {v: r.to_dict() for v, r in values.items()} for d, values in summary.by.items()},
    }
