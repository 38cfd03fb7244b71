"""Every table of the command line reads whole at 80 columns: no cell cut to `…`, no line past the 80th column.

The tables are made from the committed results store (`results/grid.sqlite`, opened read-only) and printed
as `breadth runs`, `plate`, `report`, `matrix`, `eval` and the breadth curve print them on an 80-column
terminal or a pipe of that width.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from breadth.core.cli import tables
from breadth.core.results.matrix import breadth_points, stored_rows
from breadth.core.results.report import budget, summarise
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store

STORE = Path(__file__).resolve().parent.parent / "results" / "grid.sqlite"
WIDTH = 80


@pytest.fixture(scope="module")
def stored():
    with Store(STORE, read_only=True) as store:
        return store.runs()


def _printed(table) -> str:
    console = Console(width=WIDTH, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the console
    console.print(table)
    return console.export_text()


def _whole(text: str) -> None:
    assert "…" not in text, text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= WIDTH, text


def test_runs_at_80_columns(stored):
    """`breadth runs`: every run a row, families folded into own/other, nothing cut."""
    text = _printed(tables.runs_table(stored, f"{len(stored)} stored runs", WIDTH))
    _whole(text)
    assert len([line for line in text.splitlines() if line.strip().endswith(("matrix", "sweep", "plate"))]) >= 100


def test_plate_at_80_columns(stored):
    """`breadth plate` over ten seeds: labels whole, the seeds folded onto lines."""
    by_mix = {(r.run.mix, r.run.seed): r.run for r in stored if r.run.held_out == 200}
    records = {}
    for preset in PRESETS.values():
        for seed in range(5):
            records[(preset.name, seed)] = by_mix[(preset.mix.spec(), seed)]
    _whole(_printed(tables.plate_table(records, list(range(5)), 200)))


def test_report_matrix_budget_and_curve_at_80_columns(stored):
    """`breadth report` (cells, and the cost of mixing), `breadth matrix` and its breadth curve."""
    cells = summarise(stored)
    _whole(_printed(tables.cells_table(cells[:6], "cells")))
    rows = stored_rows(cells)
    _whole(_printed(tables.matrix_table(rows, "held-out success; * trained on", WIDTH)))
    points = budget(cells)
    if points:
        _whole(_printed(tables.budget_table(points, "the cost of mixing")))
    curve = breadth_points([r for r in rows if "add_3x2" not in r.trained], ["add_3x2"])
    _whole(_printed(tables.breadth_table(curve, "the breadth curve")))


def test_eval_at_80_columns(stored):
    """`breadth eval`: one row per family with its failure kinds."""
    run = max(stored, key=lambda r: sum(len(s.failures) for s in r.run.scores.values())).run
    _whole(_printed(tables.scores_table(run.scores, "held-out sums of seed 0")))


def test_envs_at_80_columns(capsys, monkeypatch):
    """`breadth envs`: every environment's id whole, its demonstration folded below it, its coordinates and size."""
    from breadth.core.cli.main import main

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    assert main(["envs"]) == 0
    text = capsys.readouterr().out
    _whole(text)
    assert "breadth/2a1s2-postfix-v1" not in text and "breadth/2s1s2-postfix-v1" in text
