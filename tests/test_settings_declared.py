"""A setting is declared once: a new field on FinetuneSettings reaches the command line, the store and the report."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import pytest
from textual.widgets import Input
from tui_helpers import fake_app, unfold  # imports the app's modules before the fixture patches them

from breadth.core.cli import grids as results_frontend
from breadth.core.cli import stored
from breadth.core.cli.parser import build_parser, recipe_settings
from breadth.core.cli.tables import cells_table, runs_table
from breadth.core.results.grid import GridError
from breadth.core.results.report import summarise, varied
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.recipes import FINETUNE, RECIPES
from breadth.core.world.runs.records import RunMeta, settings_note
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError, setting


@dataclass(frozen=True)
class WithAccumulate(FinetuneSettings):
    """The fine-tuning settings with one more: the only edit a new setting should need."""

    accumulate: int = setting(0, 0, 1000, short="acc", help="batches a step accumulates", sweep=True)


@pytest.fixture
def one_more_setting(monkeypatch):
    """Every module that uses FinetuneSettings sees the class with the new field, as does the recipe registry."""
    for module in list(sys.modules.values()):
        if getattr(module, "FinetuneSettings", None) is FinetuneSettings:
            monkeypatch.setattr(module, "FinetuneSettings", WithAccumulate)
    monkeypatch.setitem(RECIPES, FINETUNE, replace(RECIPES[FINETUNE], settings=WithAccumulate))
    return WithAccumulate


def _stored(settings: WithAccumulate, solved: int) -> StoredRun:
    scores = {"two_digit": HeldOutScore("two_digit", solved, 30, {"no call": 30 - solved})}
    run = RunMeta("finetune", settings, "two_digit=70", settings.seed, 30, scores, (1.0,), 1.0, 0.1)
    return StoredRun(run_key("two_digit=70", settings, 30, "b"), run, "b", "test")


def test_a_new_setting_is_checked_typed_and_shown_from_its_declaration(one_more_setting):
    """Its limits refuse bad values in one line, it reads from text, and run titles name it off its default."""
    with pytest.raises(SettingsError, match="accumulate must be from 0 to 1,000"):
        WithAccumulate(accumulate=5000)
    assert WithAccumulate.from_text(accumulate="7").accumulate == 7
    assert settings_note(WithAccumulate(accumulate=7)) == "acc 7"


def test_a_new_setting_gets_its_flags_on_every_command(one_more_setting):
    """`train`, `plate`, `sweep`, `matrix`, `runs` and `report` take `--accumulate`; a sweep can vary it."""
    parser = build_parser()
    args = parser.parse_args(["train", "--mix", "two_digit=7", "--out", "x", "--accumulate", "9"])
    assert recipe_settings(args).accumulate == 9
    for argv in (["plate"], ["matrix", "--plate"], ["runs"], ["report"]):
        assert parser.parse_args([*argv, "--accumulate", "3"]).accumulate == "3"
    grid = results_frontend._grid(parser.parse_args(["sweep", "--mix", "two_digit=7", "--accumulate", "0,5"]))
    assert [c.settings.accumulate for c in grid.cells()] == [0, 5] and grid.varied == ("accumulate",)


def test_a_new_setting_is_stored_filtered_and_reported(one_more_setting, tmp_path):
    """The store keeps it (settings are one JSON column), filters by it, and the report and tables show it."""
    runs = [_stored(WithAccumulate(seed=s, accumulate=w), 10 + w) for s in (0, 1) for w in (0, 5)]
    with Store(tmp_path / "s.sqlite") as store:
        for run in runs:
            store.add(run)
        back = store.runs(accumulate=5)
    assert [(r.run.settings.accumulate, r.run.seed) for r in back] == [(5, 0), (5, 1)]
    cells = summarise(runs)
    assert varied(cells) == ("accumulate",)
    assert "accumulate 5" in _text(cells_table(cells, "t"))
    assert "acc" in _text(runs_table(back, "t"))
    assert "accumulate" in stored.csv_columns()


def _text(table) -> str:
    """What a Rich table prints, as plain text."""
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


async def test_a_new_setting_appears_in_the_train_form(one_more_setting):
    """The app's train form shows the new setting under `advanced` (once opened), and a value typed there reaches the
    request."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await unfold(pilot, "advanced")
        box = app.train_panel.query_one("#acc", Input)
        assert box.value == "0"
        box.value = "12"
        _, settings, _ = app.train_panel.request()
        assert isinstance(settings, WithAccumulate) and settings.accumulate == 12


def test_a_new_setting_is_refused_in_lockstep_until_lockstep_trains_with_it(one_more_setting, tmp_path):
    """A lockstep sweep never trains as if a new setting were not there: `--lockstep` with it says so in one line,
    before any store is made; a sweep or curve that chooses lockstep itself (the default) trains each run alone
    (with the setting) where it would otherwise group the seeds, and without `--lockstep` the sweep plans its runs."""
    parser = build_parser()
    argv = [
        "sweep",
        "--mix",
        "two_digit=7",
        "--seeds",
        "0,1",
        "--accumulate",
        "5",
        "--store",
        str(tmp_path / "s.sqlite"),
    ]
    with pytest.raises(GridError, match=r"^--lockstep does not train with accumulate yet: run without --lockstep$"):
        results_frontend._in_lockstep(results_frontend._grid(parser.parse_args(argv)).jobs("b"), 2, "b")
    assert not (tmp_path / "s.sqlite").exists()
    jobs = results_frontend._grid(parser.parse_args(argv)).jobs("b")
    assert len(jobs) == 2
    # without the new setting these seeds would train as one group (tests/test_lockstep_runs.py); with it, alone
    assert results_frontend._group(parser.parse_args([*argv, "--workers", "1"]), jobs) is None  # each alone
