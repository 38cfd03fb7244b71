"""The transfer matrix: rows are training mixes, columns every family, cells success over seeds.

A cell is one family's held-out success for models trained on one mix: the mean over seeds with its
95% interval. A family outside the row's mix is a held-out environment, so the matrix shows how far
each training mix carries. Columns are grouped by the grid's dimensions (operation, then operands,
then digits), so environments that differ along one dimension sit side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..world.families import FAMILIES
from ..world.mix import Mix
from .report import CellSummary, FamilySummary, varied

GROUPING = ("op", "operands", "digits")  # column order: by operation, then operands, then digits


@dataclass(frozen=True)
class MatrixRow:
    """One training mix: its spec, the families it trains on, and a summary per family scored."""

    mix: str
    trained: frozenset[str]
    cells: dict[str, FamilySummary]  # family -> success over seeds (a family not scored is missing)
    seeds: tuple[int, ...]

    @property
    def label(self) -> str:
        return Mix.parse(self.mix).short()


class MatrixError(ValueError):
    """Cells that do not make one matrix (they differ in more than the mix); one line."""


def columns() -> list[str]:
    """Every registered family, grouped by operation, then operands, then digits."""
    return sorted(FAMILIES, key=lambda n: tuple(_order(FAMILIES[n].at.value(d)) for d in GROUPING))


def _order(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (0, value)


def group_of(name: str) -> str:
    """The column group a family belongs to: its first grouping dimension's value (`add`, `sub`)."""
    return FAMILIES[name].at.value(GROUPING[0])


def matrix(cells: list[CellSummary], mixes: list[str]) -> list[MatrixRow]:
    """The rows for `mixes` (specs, in this order) from cells that differ only by mix."""
    extra = set(varied(cells)) - {"mix"}
    if extra:
        raise MatrixError(f"the runs differ in {', '.join(sorted(extra))} as well as the mix; narrow them")
    by_mix = {c.key.mix: c for c in cells}
    rows = []
    for spec in mixes:
        cell = by_mix.get(spec)
        trained = frozenset(name for name, _ in Mix.parse(spec).counts)
        rows.append(MatrixRow(spec, trained, dict(cell.families) if cell else {}, cell.seeds if cell else ()))
    return rows
