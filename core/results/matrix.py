"""The transfer matrix: rows are training mixes, columns every environment, cells success over seeds.

A cell is one environment's held-out success for models trained on one mix: the mean over seeds with its
95% interval. An environment outside the row's mix is held out, so the matrix shows how far
each training mix carries. Columns are grouped by the grid's dimensions (operation, then operands,
then digits), so environments that differ along one dimension sit side by side; generated environments a row was
scored on (a breadth curve's) follow the registered environments, and where they are more than columns fit, the front
ends pool them by dimension instead (`core.results.matrix_dimensions`). A store's rows can put
the plate's first; every row has a name no other row has (`row_names`), and a cell's colour band
(`band`: high, middle, low, none) is judged on the percent as the cell writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from breadth.core.results.grid import refuse_repeats
from breadth.core.results.report import CellKey, CellSummary, EnvironmentSummary, varied
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix, MixError, short_spec, spec_name
from breadth.core.world.environments.registry import by_name, environment_named
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.runs.stats import mean_interval

GROUPING = ("op", "operands", "digits")  # column order: by operation, then operands, then digits


@dataclass(frozen=True)
class MatrixRow:
    """One training mix: its spec, the environments it trains on, and a summary per environment scored."""

    mix: str
    trained: frozenset[str]
    cells: dict[str, EnvironmentSummary]  # environment -> success over seeds (an environment not scored is missing)
    seeds: tuple[int, ...]
    key: CellKey | None = None  # the cell shown (settings, held-out size, base); None for a mix with no runs
    hidden: int = 0  # other cells of this mix (other settings or held-out sizes) not shown

    @property
    def label(self) -> str:
        return short_spec(self.mix)


class MatrixError(ValueError):
    """Cells that do not make one matrix (they differ in more than the mix); one line."""


def columns(rows: Sequence[MatrixRow] = ()) -> list[str]:
    """Every registered environment, grouped by operation, then operands, then digits; then the generated environments
    some of `rows` were scored on (a breadth curve's), grouped alike and by call form (names that no longer resolve
    to an environment left out)."""
    registered = sorted(REGISTERED, key=lambda n: tuple(_order(REGISTERED[n].at.value(d)) for d in GROUPING))
    scored = {name for row in rows for name in row.cells} - set(REGISTERED)
    generated = []
    for name in scored:
        try:
            at = by_name(name).at
        except KeyError:  # a stored run's environment of a version no longer generated
            continue
        generated.append((tuple(_order(at.value(d)) for d in (*GROUPING, "form")), name))
    return registered + [name for _, name in sorted(generated)]


def _order(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (0, value)


def group_of(name: str) -> str:
    """The column group of an environment, registered or generated: its first grouping dimension's value (`add`)."""
    return by_name(name).at.value(GROUPING[0])


def matrix(cells: list[CellSummary], mixes: list[str]) -> list[MatrixRow]:
    """The rows for `mixes` (specs, in this order) from cells that differ only by mix."""
    extra = set(varied(cells)) - {"mix"}
    if extra:
        raise MatrixError(f"the runs differ in {', '.join(sorted(extra))} as well as the mix; narrow them")
    by_mix = {c.key.mix: c for c in cells}
    return [_row(spec, by_mix.get(spec)) for spec in mixes]


def stored_rows(cells: list[CellSummary], first: Sequence[str] = ()) -> list[MatrixRow]:
    """A row per mix from cells of any settings (a store's runs): the mixes of `first` (the plate's) that have runs,
    in that order, then the rest in the order mixes first appear. Each mix shows its cell with the default settings
    if it has one, of runs trained alone if it has one (not in lockstep), else the one with the most seeds."""
    by_mix: dict[str, list[CellSummary]] = {}
    for cell in cells:
        by_mix.setdefault(cell.key.mix, []).append(cell)
    default = FinetuneSettings()
    rows = []
    for spec, some in by_mix.items():
        best = max(some, key=lambda c: (c.key.settings == default, not c.key.lockstep, len(c.seeds)))  # seed 0
        rows.append(_row(spec, best, len(some) - 1))
    place = {_canonical(spec): i for i, spec in enumerate(first)}
    return sorted(rows, key=lambda row: place.get(_canonical(row.mix), len(place)))  # stable: the rest keep order


def _canonical(spec: str) -> str:
    """A mix spec as `Mix.spec` writes it (`2d=70` and `two_digit=70` are one mix); the spec if it does not parse."""
    try:
        return Mix.parse(spec).spec()
    except MixError:
        return spec


def row_names(rows: list[MatrixRow], codes: bool = True) -> list[str]:
    """A name per row, no two alike: the mix's short label (`a2x2 70`, `4 envs 72`), and where two rows share
    one, the environments that tell them apart (`4 envs 72 (a2x2,a4x1)`), then a number if nothing else does.
    Without `codes`, in words (`mix 35+35`, `two-digit 70`), numbered where alike (`4 envs 72 #1`): the environments'
    words would not fit a row's name at 80 columns."""
    names = [spec_name(row.mix, codes) for row in rows]
    for label in {n for n in names if codes and names.count(n) > 1}:
        group = [i for i, n in enumerate(names) if n == label]
        common = frozenset.intersection(*(rows[i].trained for i in group))
        for i in group:
            own = [REGISTERED[n].short for n in columns() if n in rows[i].trained - common]
            names[i] = f"{label} ({','.join(own)})" if own else label
    alike = {name: names.count(name) for name in names}
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        seen[name] = seen.get(name, 0) + 1
        if alike[name] > 1:
            names[i] = f"{name} #{seen[name]}"
    return names


SCALE = ((90, "high"), (50, "middle"), (1, "low"), (0, "none"))  # each band's lowest shown %, high to low


def band(rate: float) -> str:
    """The colour band of a success rate as the matrix shows it (a whole percent): `high`, `middle`, `low`, `none`."""
    shown = int(f"{100 * rate:.0f}")  # the percent as the cell writes it
    return next(name for lowest, name in SCALE if shown >= lowest)


def band_ranges() -> list[tuple[str, str]]:
    """Each band and the percentages it holds, high to low: (`90-100`, `high`) ... (`0`, `none`)."""
    out, top = [], 100
    for lowest, name in SCALE:
        out.append((f"{lowest}-{top}" if top > lowest else f"{lowest}", name))
        top = lowest - 1
    return out


def _row(spec: str, cell: CellSummary | None, hidden: int = 0) -> MatrixRow:
    try:
        trained = frozenset(name for name, _ in Mix.parse(spec).counts)
    except MixError:  # a stored mix of an environment no longer registered
        trained = frozenset()
    if cell is None:
        return MatrixRow(spec, trained, {}, ())
    return MatrixRow(spec, trained, dict(cell.environments), cell.seeds, cell.key, hidden)


@dataclass(frozen=True)
class BreadthPoint:
    """One row of a breadth curve: how many environments it trained on, and success on one environment over seeds."""

    mix: str
    environments: int  # distinct environments with demonstrations
    demonstrations: int  # their total
    environment: str  # a held-out environment, or TRAINED for the mean over the row's own environments
    mean: float
    low: float  # 95% interval over seeds
    high: float


TRAINED = "trained"  # a BreadthPoint's environment for the mean over the environments a row trained on


def parse_environments(text: str) -> list[str]:
    """`a3x2,sub_3x2` -> registered environment names; MatrixError (one line) for an unknown one."""
    names = []
    for part in filter(None, (t.strip() for t in text.split(","))):
        environment = environment_named(part)
        if environment is None:
            raise MatrixError(
                f"no environment {part[:20]!r}; name one of {', '.join(f.short for f in REGISTERED.values())}"
            )
        names.append(environment.name)
    if not names:
        raise MatrixError("name at least one environment, e.g. a3x2,s3x2")
    refuse_repeats("--curve", names)
    return names


def breadth_points(rows: list[MatrixRow], held_out: list[str]) -> list[BreadthPoint]:
    """The breadth curve the rows make: per row, success on each `held_out` environment (which no row may train on)
    and the mean over the row's own environments, seed by seed, each with its 95% interval over seeds."""
    trained_on = sorted({name for row in rows for name in row.trained} & set(held_out))
    if trained_on:
        raise MatrixError(f"a held-out environment is trained on by some row: {', '.join(trained_on)}")
    points = []
    for row in rows:
        counts = dict(Mix.parse(row.mix).counts) if row.trained else {}
        for name in (*held_out, TRAINED):
            members = sorted(row.trained) if name == TRAINED else [name]
            cells = [row.cells[m] for m in members if m in row.cells]
            seeds = sorted(set.intersection(*(set(c.rates) for c in cells))) if cells else []
            if not seeds:
                continue
            per_seed = [sum(c.rates[s] for c in cells) / len(cells) for s in seeds]
            mean, low, high = mean_interval(per_seed)
            points.append(
                BreadthPoint(row.mix, len(counts), sum(counts.values()), name, mean, max(0.0, low), min(1.0, high))
            )
    return points
