"""`breadth report` prints its intervals with one decimal, like its means, and its tables stay whole at 80 columns."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from breadth.core.cli import tables
from breadth.core.results.report import budget, summarise
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

STORE = Path(__file__).resolve().parent.parent / "results" / "grid.sqlite"
ONE_DECIMAL = re.compile(r"^\d+\.\d-\d+\.\d$")


def _printed(table, width: int = 80) -> list[list[str]]:
    """The table's body rows at `width` columns, split into cells (whole text checked for cuts and width)."""
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the console
    console.print(table)
    text = console.export_text()
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= width, text
    return [[c.strip() for c in line.split("│")] for line in text.splitlines() if line.startswith("│")]


def _run(seed: int, mix: str, solved: int, other: int) -> StoredRun:
    settings = FinetuneSettings(seed=seed)
    scores = {
        "add_2x2": HeldOutScore("add_2x2", solved, 30, {"no call": 30 - solved} if solved < 30 else {}),
        "add_3x1": HeldOutScore("add_3x1", other, 30, {"no call": 30 - other} if other < 30 else {}),
    }
    run = RunMeta("finetune", settings, mix, seed, 30, scores, (2.0, 1.0), 4.0, 0.1)
    return StoredRun(run_key(mix, settings, 30, "b"), run, "b", "test")


def test_every_cell_of_the_committed_store_prints_one_decimal_intervals_whole_at_80_columns():
    """All 27 cells: mean and both intervals have one decimal (99.8 | 99.5-100.0, not 100-100); nothing is cut."""
    with Store(STORE, read_only=True) as store:
        cells = summarise(store.runs())
    rows = [row for row in _printed(tables.cells_table(cells, "cells")) if row[5]]  # rows naming a mean
    assert len(rows) >= 100
    for row in rows:
        assert re.fullmatch(r"\d+\.\d", row[5]) and ONE_DECIMAL.match(row[6]) and ONE_DECIMAL.match(row[7]), row


def test_the_cost_of_mixing_prints_one_decimal_intervals():
    """The budget table's intervals have one decimal (the paired one too), whole at 80 columns even at their widest
    (100.0-100.0, and a paired interval past -100 from seeds that disagree)."""
    runs = []
    for s in range(3):
        runs += [_run(s, "add_2x2=10", 30, 0), _run(s, "add_3x1=10", 0, 27)]
        runs.append(_run(s, "add_2x2=5,add_3x1=5", (0, 30, 0)[s], 25 - s))
    printed = _printed(tables.budget_table(budget(summarise(runs)), "the cost of mixing", 80))
    rows = [row for row in printed if row[1]]  # a family's first line; its paired interval folds below it
    assert [(row[3], row[5]) for row in rows] == [("100.0", "33.3"), ("90.0", "80.0")]
    for row in rows:
        assert ONE_DECIMAL.match(row[4]) and ONE_DECIMAL.match(row[6]), row
    paired = " ".join(" ".join(row[8] for row in printed).split())
    assert re.fullmatch(r"(-\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\] ?){2}", paired), paired
