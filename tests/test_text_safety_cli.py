"""Hostile strings in a results store or a record reach the command line's tables and figures as text: `breadth
runs` and `report` (and `--figure`) exit 0 or in one line, write no ESC byte and show the markup literally."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from test_results_store import _run

from breadth.core.cli.tables import (
    breadth_table,
    budget_table,
    cells_table,
    differences_table,
    episode_lines,
    matrix_table,
    runs_table,
    scores_table,
)
from breadth.core.results.figures import breadth_figure, budget_figure, matrix_figure, model_figure, sweep_figure
from breadth.core.results.matrix import TRAINED, BreadthPoint, MatrixRow
from breadth.core.results.report import BudgetPoint, PairedDifference, summarise
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.shown import episode_text, shown
from breadth.core.world.text.transcript import Role, Segment, Transcript

BREADTH = Path(sys.executable).parent / "breadth"
MIX = "\x1b]0;pwned\x07\x1b[2J[/x][link=file:///etc/passwd]mix[/link] $\\foo$ \u202eevil"  # title, clear, markup
FAMILY = "[/y]\x1b[31mfam $\\bar$ :smile:"  # a family this version does not know
KIND = "[/z]\x1b[5mkind\u2066"  # a failure kind
SOURCE = "[/s]\x1b]0;src\x07"


def hostile(stored: StoredRun, mix: str = MIX) -> StoredRun:
    """`stored` with a hostile mix, source, and a score of a hostile family that failed in a hostile way."""
    scores = stored.run.scores | {FAMILY: HeldOutScore(FAMILY, 1, 2, {KIND: 1})}
    run = replace(stored.run, mix=mix, scores=scores)
    key = run_key(mix, run.settings, run.held_out, stored.base_hash, scores)
    return replace(stored, key=key, run=run, source=SOURCE)


@pytest.fixture
def store(tmp_path) -> Path:
    """A store of four hostile runs: one mix on seeds 0 and 1 at two learning rates (so `report` draws a curve)."""
    path = tmp_path / "hostile.sqlite"
    with Store(path) as s:
        for seed in (0, 1):
            for lr in (2e-3, 1e-3):
                assert s.add(hostile(_run(seed, 20 + seed, lr=lr)))
    return path


def _breadth(*argv) -> subprocess.CompletedProcess:
    """`breadth ARGV` in a wide terminal-less console (a cell never wraps), its stdout and stderr as bytes."""
    env = os.environ | {"COLUMNS": "2000"}
    return subprocess.run([BREADTH, *map(str, argv)], capture_output=True, timeout=60, env=env)


def _clean(result: subprocess.CompletedProcess) -> str:
    """stdout, after checking the command ended well: exit 0, nothing on stderr, no ESC byte anywhere."""
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert result.stderr == b""
    assert b"\x1b" not in result.stdout
    return result.stdout.decode()


def test_runs_lists_hostile_runs_as_text(store):
    """`breadth runs`: the mix, source and family name show as written (markup literal, ESC as `\\x1b`)."""
    out = _clean(_breadth("runs", "--store", store))
    for text in (MIX, SOURCE, FAMILY):
        assert shown(text) in out
    assert "[link=file:///etc/passwd]" in out and "[/x]" in out


def test_report_compares_and_draws_hostile_cells_as_text(store, tmp_path):
    """`breadth report --compare 1 2 --figure F`: cells, differences and the curve of a hostile family, exit 0."""
    figure = tmp_path / "curve"
    out = _clean(_breadth("report", "--store", store, "--compare", "1", "2", "--figure", figure))
    assert shown(MIX) in out and shown(FAMILY) in out and "cell 2 minus cell 1" in out
    assert figure.with_suffix(".png").stat().st_size > 1000
    assert shown(f"{FAMILY} held-out") in figure.with_suffix(".svg").read_text()  # the legend entry, as text


def test_a_record_edited_by_hand_with_a_lone_surrogate_is_shown_escaped(store):
    """A record whose JSON holds a lone surrogate (valid JSON, not UTF-8): runs and report show `\\ud800`."""
    db = sqlite3.connect(store)
    with db:
        for key, record in db.execute("SELECT key, record FROM runs").fetchall():
            data = json.loads(record) | {"mix": "add_2x2=70\ud800"}
            db.execute("UPDATE runs SET record = ? WHERE key = ?", (json.dumps(data), key))
    db.close()
    assert "add_2x2=70\\ud800" in _clean(_breadth("runs", "--store", store))
    assert "add_2x2=70\\ud800" in _clean(_breadth("report", "--store", store))


def test_a_row_skipped_for_a_hostile_family_is_named_without_its_escapes(store):
    """A record whose hostile family's score is not a mapping: runs skips it with one note on stderr, written out."""
    db = sqlite3.connect(store)
    with db:
        key, record = db.execute("SELECT key, record FROM runs").fetchone()
        data = json.loads(record)
        data["scores"][FAMILY] = [1, 2]
        db.execute("UPDATE runs SET record = ? WHERE key = ?", (json.dumps(data), key))
    db.close()
    result = _breadth("runs", "--store", store)
    assert result.returncode == 0 and b"\x1b" not in result.stdout + result.stderr
    (note,) = result.stderr.decode().splitlines()
    assert note.startswith("note: skipped 1 stored rows") and shown(FAMILY) in note


def test_report_of_cells_differing_by_hostile_mixes_is_a_table_or_one_line(tmp_path):
    """Cells that differ only by hostile mixes: the table as text, then exit 0 or one error line without ESC."""
    path = tmp_path / "mixes.sqlite"
    with Store(path) as s:
        s.add(hostile(_run(0, 20), MIX))
        s.add(hostile(_run(0, 20), MIX + "[/other]"))
    result = _breadth("report", "--store", path)
    assert b"\x1b" not in result.stdout + result.stderr and b"Traceback" not in result.stderr
    assert shown(MIX + "[/other]") in result.stdout.decode()
    assert result.returncode == 0 or (result.returncode == 2 and len(result.stderr.decode().splitlines()) == 1)


def test_an_error_naming_a_hostile_path_is_one_line_without_escapes(tmp_path):
    """A `--store` path holding ESC, markup and an emoji code that is not a store: one line, exit 2, the path
    written out (`\\x1b`, `:smile:`)."""
    path = tmp_path / "\x1b]0;pwned\x07[b]x:smile:.sqlite"  # no "/": a name, not a folder
    path.write_text("not a store")
    result = _breadth("runs", "--store", path)
    assert result.returncode == 2 and result.stdout == b""
    (line,) = result.stderr.decode().splitlines()
    assert "\x1b" not in line and shown(path) in line and "not an SQLite file" in line


def _printed(renderable) -> str:
    """What Rich prints for `renderable` on a wide, uncoloured console (wrapping no cell)."""
    console = Console(file=io.StringIO(), width=2000, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def test_every_table_shows_hostile_names_as_text():
    """Each table of the command line given hostile mixes, families, kinds and transcripts: no ESC, markup literal."""
    cells = summarise([hostile(_run(seed, 20)) for seed in (0, 1)])
    summary = cells[0].environments[FAMILY]
    tables = {
        "runs": runs_table([hostile(_run(0, 20))], MIX),
        "cells": cells_table(cells, MIX),
        "eval": scores_table({FAMILY: HeldOutScore(FAMILY, 1, 2, {KIND: 1})}, MIX),
        "differences": differences_table([PairedDifference(FAMILY, 2, 0.1, 0.0, 0.2)], MIX),
        "budget": budget_table([BudgetPoint(FAMILY, 20, summary, summary, 10)], MIX),
        "matrix": matrix_table([MatrixRow(MIX, frozenset(), {}, (0,))], MIX),
        "breadth": breadth_table([BreadthPoint(MIX, 1, 20, TRAINED, 0.5, 0.4, 0.6)], MIX),
    }
    for name, table in tables.items():  # MIX is each title (which wraps to the table's width) and a cell of some
        out = _printed(table)
        assert "\x1b" not in out and "[link=file:///etc/passwd]mix[/link]" in out, name
    for name in ("runs", "cells", "matrix", "breadth"):
        assert shown(MIX) in _printed(tables[name]), name
    for name in ("runs", "cells", "eval", "differences", "budget"):
        assert shown(FAMILY) in _printed(tables[name]), name
    assert shown(KIND) in _printed(tables["eval"])
    episode = Transcript([Segment(Role.PROMPT, MIX), Segment(Role.ACTION, "B\n\x1b[2J|")])
    for line in [episode_text(episode), *episode_lines(episode)]:
        assert "\x1b" not in _printed(line)
    assert shown(MIX) + "B⏎" + shown("\x1b[2J|") in _printed(episode_text(episode))


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
def test_every_figure_draws_hostile_names_as_text(tmp_path):
    """Slide, curve, budget, matrix and breadth figures of hostile names are written, each name drawn literally."""
    cells = summarise([hostile(_run(seed, 20, lr=lr)) for seed in (0, 1) for lr in (1e-3, 2e-3)])
    summary = cells[0].environments[FAMILY]
    run = RunMeta("finetune", FinetuneSettings(), MIX, 0, 2, {FAMILY: HeldOutScore(FAMILY, 1, 2, {KIND: 1})})
    drawn = {
        "slide": model_figure(run, tmp_path / "slide", name=MIX),
        "curve": sweep_figure(cells, tmp_path / "curve", title=MIX),
        "budget": budget_figure([BudgetPoint(FAMILY, n, summary, summary, n // 2) for n in (10, 20)], tmp_path / "b"),
        "matrix": matrix_figure([MatrixRow(MIX, frozenset(), {}, (0,))], tmp_path / "matrix"),
        "breadth": breadth_figure([BreadthPoint(MIX, 1, 20, TRAINED, 0.5, 0.4, 0.6)], tmp_path / "breadth", 2),
    }
    for name, written in drawn.items():
        assert [p.suffix for p in written] == [".png", ".svg"], name
        svg = written[1].read_text()
        assert "\x1b" not in svg, name
    assert shown(MIX) in drawn["slide"][1].read_text()
    assert shown(FAMILY) in drawn["slide"][1].read_text()
