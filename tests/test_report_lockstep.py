"""`breadth report` (and the app's matrix and means over seeds) keep runs trained in lockstep apart from runs trained
alone: a cell never holds two runs of one seed, and a lockstep cell says `lockstep K` in its label."""

from __future__ import annotations

import json

from rich.console import Console

from breadth.core.cli import tables
from breadth.core.cli.main import main
from breadth.core.results.matrix import stored_rows
from breadth.core.results.report import budget, summarise, varied
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import Lockstep, RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

MIX = "add_2x2=70"


def _run(seed: int, solved: int, group: tuple[str, ...] = (), mix: str = MIX) -> StoredRun:
    """A stored run of `mix` on `seed` solving `solved` of 30 two-digit sums; trained in the lockstep group `group`
    (its members' keys alone) when one is given, else alone."""
    settings = FinetuneSettings(seed=seed)
    scores = {"add_2x2": HeldOutScore("add_2x2", solved, 30, {"no call": 30 - solved} if solved < 30 else {})}
    alone = run_key(mix, settings, 30, "b")
    marker = Lockstep(group, group.index(alone)) if group else None
    run = RunMeta("finetune", settings, mix, seed, 30, scores, (2.0, 1.0), 4.0, 0.1, lockstep=marker)
    key = run_key(mix, settings, 30, "b", lockstep=group) if group else alone
    return StoredRun(key, run, "b", "test")


def _group(*seeds: int, mix: str = MIX) -> tuple[str, ...]:
    """The lockstep group of these seeds of `mix`: their keys as runs alone, in this order."""
    return tuple(run_key(mix, FinetuneSettings(seed=s), 30, "b") for s in seeds)


def _rates(cell) -> dict[int, float]:
    return {s: round(30 * r) for s, r in cell.environments["add_2x2"].rates.items()}


def _printed(cells, width: int = 80) -> str:
    """The cells table as `breadth report` prints it at `width` columns (checked whole: nothing cut or too wide)."""
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the console
    console.print(tables.cells_table(cells, "cells"))
    text = console.export_text()
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= width, text
    return text


def _labels(text: str) -> list[str]:
    """Each numbered cell's label as printed, its folded lines joined."""
    labels: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("│"):
            number, label = (c.strip() for c in line.split("│")[1:3])
            if number:
                labels.append([])
            labels[-1] += [label] if label else []
    return [" ".join(parts) for parts in labels]


def test_a_lockstep_run_and_a_run_alone_of_one_seed_are_two_cells_each_keeping_its_own_score():
    """Seeds 0 and 1 trained alone (10, 12 of 30) and in one lockstep group (20, 22 of 30): two cells, neither
    replacing the other's runs, the lockstep one saying `lockstep 2` and the one alone saying nothing of it."""
    group = _group(0, 1)
    runs = [_run(0, 10), _run(1, 12), _run(0, 20, group), _run(1, 22, group)]
    cells = summarise(runs)
    assert [(c.key.lockstep, _rates(c)) for c in cells] == [(0, {0: 10, 1: 12}), (2, {0: 20, 1: 22})]
    assert [c.key.note for c in cells] == ["", "lockstep 2"]
    assert varied(cells) == ("lockstep",)
    assert summarise(runs[2:] + runs[:2])[0].key.lockstep == 2  # cells in the order they first come, as before
    assert [tables.cell_label(c, varied(cells)) for c in cells] == ["a2x2 70", "a2x2 70 lockstep 2"]
    assert _labels(_printed(cells)) == ["a2x2 70", "a2x2 70 lockstep 2"]


def test_lockstep_groups_of_one_recipe_pool_by_seed_the_last_smaller_group_with_them():
    """Two groups of 2 and the group of 1 that `--lockstep 2` over seeds 0-4 forms are one cell of five seeds,
    named by its largest group; another mix's groups are its own cell."""
    runs = [_run(0, 1, _group(0, 1)), _run(1, 2, _group(0, 1)), _run(2, 3, _group(2, 3)), _run(3, 4, _group(2, 3))]
    runs += [_run(4, 5, _group(4)), _run(0, 9, _group(0, mix="add_3x1=70"), mix="add_3x1=70")]
    cells = summarise(runs)
    assert [(c.key.mix, c.key.note, _rates(c)) for c in cells] == [
        (MIX, "lockstep 2", {0: 1, 1: 2, 2: 3, 3: 4, 4: 5}),
        ("add_3x1=70", "lockstep 1", {0: 9}),
    ]


def test_lockstep_groups_that_share_a_seed_are_never_one_cell():
    """`--lockstep 4` and `--lockstep 2` over seeds 0-3 store each seed twice (other groups, other keys): the groups
    of 4 make one cell, those of 2 another, every run kept; a group of 4 over seeds 2-5 beside the first group of 4
    makes a second cell of that size, numbered."""
    four, two_a, two_b = _group(0, 1, 2, 3), _group(0, 1), _group(2, 3)
    runs = [_run(s, 10 + s, two_a if s < 2 else two_b) for s in range(4)] + [_run(s, 20 + s, four) for s in range(4)]
    cells = summarise(runs)
    assert sorted((c.key.note, tuple(_rates(c).values())) for c in cells) == [
        ("lockstep 2", (10, 11, 12, 13)),
        ("lockstep 4", (20, 21, 22, 23)),
    ]
    later = _group(2, 3, 4, 5)
    cells = summarise([_run(s, 20 + s, four) for s in range(4)] + [_run(s, s, later) for s in range(2, 6)])
    assert [(c.key.note, _rates(c)) for c in cells] == [
        ("lockstep 4", {0: 20, 1: 21, 2: 22, 3: 23}),
        ("lockstep 4 #2", {2: 2, 3: 3, 4: 4, 5: 5}),
    ]
    assert [tables.cell_label(c, varied(cells)) for c in cells] == ["a2x2 70 lockstep 4", "a2x2 70 lockstep 4 #2"]
    assert _labels(_printed(cells)) == ["a2x2 70 lockstep 4", "a2x2 70 lockstep 4 #2"]


def test_the_cost_of_mixing_is_not_read_from_lockstep_and_alone_cells_together():
    """A budget whose cells differ in how they trained as well as the mix is not one budget (each (family, total)
    would keep one of the two cells, silently)."""
    alone = [_run(s, 10, mix=m) for s in range(2) for m in (MIX, "add_2x2=35,add_3x1=35")]
    together = [_run(s, 20, _group(0, 1, mix=m), mix=m) for s in range(2) for m in (MIX, "add_2x2=35,add_3x1=35")]
    assert budget(summarise(alone)) and budget(summarise(together))
    assert budget(summarise(alone + together)) == []


def test_breadth_report_on_a_store_of_both_prints_two_cells_and_says_which_trained_in_lockstep(tmp_path, capsys):
    """Through the command: a store of seeds 0, 1 alone and in lockstep prints 2 cells of 4 runs, the lockstep one
    labelled, and its --json says `lockstep` for that cell only."""
    store = tmp_path / "s.sqlite"
    group = _group(0, 1)
    with Store(store) as s:
        for stored in [_run(0, 10, group), _run(1, 12, group), _run(0, 20), _run(1, 22)]:
            s.add(stored)
    out = tmp_path / "cells.json"
    assert main(["report", "--store", str(store), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 cells of 4 stored runs" in text and _labels(text) == ["a2x2 70", "a2x2 70 lockstep 2"], text
    cells = json.loads(out.read_text())
    assert [c.get("lockstep") for c in cells] == [None, 2]  # runs alone first, as the cells are ordered
    assert [c["families"]["add_2x2"]["per_seed"] for c in cells] == [
        {"0": 20 / 30, "1": 22 / 30},
        {"0": 10 / 30, "1": 12 / 30},
    ]


def test_the_app_matrix_shows_a_mix_by_its_runs_trained_alone_and_a_lockstep_cell_says_so():
    """The app's matrix view (stored rows of every cell) shows the runs trained alone of a mix that has both, the
    lockstep cell counted as not shown; a mix trained only in lockstep shows that cell, its detail saying so."""
    from breadth.tui.screens.matrix_view import cell_detail

    other = "add_2x2=35,add_3x1=35"
    runs = [_run(s, 25, _group(0, 1, 2)) for s in range(3)] + [_run(s, 5) for s in range(2)]
    runs += [_run(s, 7, _group(0, 1, mix=other), mix=other) for s in range(2)]
    first, second = stored_rows(summarise(runs))
    assert (first.key.note, first.seeds, first.hidden) == ("", (0, 1), 1)
    assert (second.key.note, second.seeds, second.hidden) == ("lockstep 2", (0, 1), 0)
    assert "default settings, held-out 30" in cell_detail(first, "add_2x2").plain
    assert "lockstep 2, held-out 30" in cell_detail(second, "add_2x2").plain


def test_the_score_panel_means_over_seeds_keep_lockstep_runs_apart_and_say_so():
    """The app's line of means over seeds: seeds 0-1 alone (6, 9 of 30) and in a lockstep group (24, 27 of 30) are
    two lines, each over its own two runs; the current model's line is the one of its cell."""
    from breadth.tui.catalog import ModelEntry
    from breadth.tui.widgets.score_lines import across_seeds

    runs = [_run(0, 6), _run(1, 9), _run(0, 24, _group(0, 1)), _run(1, 27, _group(0, 1))]
    entries = [ModelEntry(r.key, "t", "/p", r.run, "stored", scores_only=True) for r in runs]
    lines = across_seeds(entries).plain.splitlines()
    assert [line.split(":")[0] for line in lines] == ["two-digit 70 ×2", "two-digit 70 lockstep 2 ×2"], lines
    assert lines[0].startswith("two-digit 70 ×2: two-digit 25 ")
    assert lines[1].startswith("two-digit 70 lockstep 2 ×2: two-digit 85 ")
    assert across_seeds(entries, current=entries[3]).plain == lines[1]
    assert across_seeds(entries, current=entries[0]).plain == lines[0]
    again = ModelEntry("k", "t", "/p", _run(0, 12).run, "trained")  # a later run of seed 0 alone: its line is kept
    assert across_seeds([*entries, again], current=entries[0]).plain.startswith("two-digit 70 ×2: two-digit 35 ")
