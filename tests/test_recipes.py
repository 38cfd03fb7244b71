"""A way of learning is one recipe: a record with its settings class and its trainer's entry point, and every layer
takes it.

The test registers a second recipe that trains on a mix (`toy`, with a setting of its own) and follows it
through the records, the results store, the command line, a sweep, the report, the engine session, the
learning layer and the app's form, with no other edit. The plate's fine-tunes keep the keys they had.
"""

from __future__ import annotations

import json
import queue
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.widgets import Input, Select
from tui_helpers import fake_app

from breadth.core.cli import grids
from breadth.core.cli.parser import build_parser, recipe_settings
from breadth.core.cli.tables import cells_table, runs_table
from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning import trainers
from breadth.core.results.report import summarise, varied
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore, MetadataError
from breadth.core.world.runs.recipes import RECIPES, Recipe, RecipeError, recipe, recipe_of
from breadth.core.world.runs.records import RunMeta, settings_note
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError, _Checked, setting

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ToySettings(_Checked):
    """A second recipe's settings: steps and seed as every recipe has, and one setting of its own."""

    steps: int = setting(3, 1, 1000, help="optimiser steps", sweep=True, form="main")
    temperature: float = setting(1.0, 0.0, 5.0, open_low=True, short="temp", help="sampling temperature", sweep=True)
    seed: int = setting(0, 0, 1000, help="seeds everything", form="main")


def _toy_trainer(model, mix, settings, on_step):
    """Trains as the plate's recipe does, for the toy's steps: the seam, not the method, is under test."""
    plate = FinetuneSettings(steps=settings.steps, batch_size=4, seed=settings.seed)
    return trainers.finetune(model, mix.demonstrations(settings.seed), plate, on_step)


@pytest.fixture
def toy(monkeypatch):
    """`toy` registered as a recipe that trains on a mix, with its trainer."""
    monkeypatch.setitem(RECIPES, "toy", Recipe("toy", "a toy", ToySettings, trainer=f"{__name__}:_toy_trainer"))
    return recipe("toy")


def _stored(settings, solved: int, kind: str) -> StoredRun:
    scores = {"add_2x2": HeldOutScore("add_2x2", solved, 30, {"no call": 30 - solved})}
    run = RunMeta(kind, settings, "add_2x2=70", settings.seed, 30, scores, (1.0,), 1.0, 0.1)
    return StoredRun(run_key("add_2x2=70", settings, 30, "b"), run, "b", "test")


def test_an_unknown_recipe_is_one_line_everywhere_it_can_be_named(toy):
    """A record, a recipe lookup and the engine's Train command all refuse an unknown recipe in one line."""
    with pytest.raises(RecipeError, match="no recipe 'nope'; recipes: finetune, pretrain, reward, toy"):
        recipe("nope")
    with pytest.raises(MetadataError, match="kind: no recipe 'nope'"):
        RunMeta.from_dict({"kind": "nope"})
    with pytest.raises(RecipeError):
        recipe_of(object())
    events: list = []
    Session(events.append, None, queue.Queue()).handle(p.Train(1, "add_2x2=4", {}, "/base", "/tmp", recipe="pretrain"))
    (failed,) = events
    assert isinstance(failed, p.Failed) and failed.message == "the pretrain recipe does not train on a mix"


def test_a_recipe_names_its_trainer_once_and_the_learning_layer_imports_what_it_names(toy):
    """Each mix recipe's trainer (and reward's measure before training) is the function its entry point names, the
    toy's too, registered in one place; a recipe with none or a base recipe has no measure."""
    from breadth.core.learning import reward

    assert trainers.trainer("finetune") is trainers.from_demonstrations
    assert (
        trainers.trainer("reward") is reward.from_reward and trainers.measure_before("reward") is reward.before_training
    )
    assert trainers.trainer("toy") is _toy_trainer and trainers.measure_before("toy") is None
    assert [(r.name, r.trainer) for r in RECIPES.values()][:3] == [
        ("finetune", "breadth.core.learning.trainers:from_demonstrations"),
        ("pretrain", ""),
        ("reward", "breadth.core.learning.reward:from_reward"),
    ]
    with pytest.raises(RecipeError, match="^the pretrain recipe does not train on a mix$"):
        trainers.trainer("pretrain")


def test_a_mistyped_recipe_or_entry_point_is_refused_in_one_line_naming_the_nearest():
    """A recipe name, an entry point's function or its module that is not there is one line with the nearest name
    (difflib); a mix recipe without a trainer, or an entry point not written module:attr, is refused when made."""
    with pytest.raises(RecipeError, match=r"^no recipe 'finetun'; did you mean 'finetune'\?; recipes: finetune, "):
        recipe("finetun")
    with pytest.raises(RecipeError, match=r"^no function 'from_rewad' in breadth.core.learning.reward; did you mean "):
        trainers.load("breadth.core.learning.reward:from_rewad")
    with pytest.raises(RecipeError, match=r"^no module 'breadth.core.learning.rewards' .*; did you mean 'reward'\?$"):
        trainers.load("breadth.core.learning.rewards:from_reward")
    with pytest.raises(RecipeError, match="^the toy recipe trains on a mix: name its trainer, module:attr$"):
        Recipe("toy", "a toy", ToySettings)
    with pytest.raises(RecipeError, match="^an entry point is written module:attr, not 'rl.from_reward'$"):
        Recipe("toy", "a toy", ToySettings, trainer="rl.from_reward")


def test_a_recipes_record_round_trips_with_its_own_settings_and_title(toy):
    """A toy run's record reads back as a toy run with ToySettings; its title names the recipe and what differs."""
    run = _stored(ToySettings(temperature=0.5, seed=2), 20, "toy").run
    back = RunMeta.from_dict(run.to_dict())
    assert back == run and isinstance(back.settings, ToySettings) and back.recipe == "toy"
    assert back.settings_note == settings_note(back.settings) == "a toy temp 0.5"
    assert settings_note(FinetuneSettings(lr=1e-3)) == "lr 0.001"  # the plate's recipe is never named


def test_the_plates_fine_tunes_keep_their_keys_and_other_recipes_get_their_own(toy):
    """Every run in the committed stores still has the key its record gives (recipes changed no key); a toy run
    with the same field values as a fine-tune gets another key."""
    for name in ("grid.sqlite", "recipe-search.sqlite"):
        path = REPO / "results" / name
        with closing(sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)) as db:
            stored = [
                (key, RunMeta.from_dict(json.loads(record)), held_out, base, families.split(","))
                for key, record, held_out, base, families in db.execute(
                    "SELECT r.key, r.record, r.held_out, r.base_hash, group_concat(s.family) "
                    "FROM runs r JOIN scores s ON s.key = r.key GROUP BY r.key"
                )
            ]
        assert len(stored) > 100
        for key, run, held_out, base, families in stored:
            assert run_key(run.mix, run.settings, held_out, base, families) == key
    plate, toy_run = FinetuneSettings(), ToySettings(steps=400)
    assert run_key("add_2x2=70", plate, 30, "b") != run_key("add_2x2=70", toy_run, 30, "b")


def test_the_store_keeps_filters_and_reports_a_second_recipe_beside_the_first(toy, tmp_path):
    """Toy and fine-tune runs share the store; its filter takes the toy's own setting; the report and tables
    tell the recipes apart."""
    runs = [_stored(ToySettings(seed=s, temperature=t), 10, "toy") for s in (0, 1) for t in (0.5, 1.0)]
    runs += [_stored(FinetuneSettings(seed=s), 25, "finetune") for s in (0, 1)]
    with Store(tmp_path / "s.sqlite") as store:
        assert all(store.add(run) for run in runs)
        back = store.runs()
        hot = store.runs(temperature=0.5)
    assert sorted(r.run.recipe for r in back) == ["finetune"] * 2 + ["toy"] * 4
    assert [(type(r.run.settings), r.run.settings.temperature) for r in hot] == [(ToySettings, 0.5)] * 2
    cells = summarise(runs)
    assert "recipe" in varied(cells) and "temperature" in varied(cells)
    rows = _text(cells_table(cells, "t")).splitlines()
    assert any("a toy" in row and "temperature 0.5" in row for row in rows)
    assert any("demonstrations" in row and "lr 0.0015" in row for row in rows)
    table = _text(runs_table(back, "t"))
    assert "temp" in table and "drop" in table  # each recipe's columns; `-` where a run's recipe has none


def test_the_command_line_trains_and_sweeps_by_the_recipe_named(toy):
    """`--recipe toy` gives the toy's settings from its flags; a flag of another recipe is one line; a sweep
    varies the toy's own setting."""
    parser = build_parser()
    args = parser.parse_args(["train", "--recipe", "toy", "--mix", "add_2x2=7", "--out", "x", "--temperature", "2"])
    assert recipe_settings(args, "3") == ToySettings(temperature=2.0, seed=3)
    plate = parser.parse_args(["train", "--mix", "add_2x2=7", "--out", "x", "--temperature", "2"])
    with pytest.raises(SettingsError, match="^--temperature is not a setting of the finetune recipe$"):
        recipe_settings(plate)
    sweep = parser.parse_args(["sweep", "--recipe", "toy", "--mix", "add_2x2=7", "--temperature", "0.5,2"])
    grid = grids._grid(sweep)
    assert [c.settings for c in grid.cells()] == [ToySettings(temperature=0.5), ToySettings(temperature=2.0)]
    with pytest.raises(grids.GridError, match="--lr is not a setting of the toy recipe"):
        grids._grid(parser.parse_args(["sweep", "--recipe", "toy", "--mix", "add_2x2=7", "--lr", "0.1"]))


def test_the_engine_trains_saves_and_reloads_a_run_of_another_recipe(toy, one_thread, tmp_path, base_path):
    """Train(recipe="toy") runs the toy's trainer through the learning layer: its steps stream, the model is
    saved with kind `toy`, read back with ToySettings, and recorded in the results store."""
    events: list = []
    from breadth.core.learning.experiment import TorchModels

    s = Session(events.append, TorchModels(), queue.Queue())
    settings = {"steps": 3, "temperature": 0.5, "seed": 1}
    s.handle(p.Train(7, "add_2x2=4", settings, str(base_path), str(tmp_path), held_out=2, recipe="toy"))
    steps = [e.step for e in events if isinstance(e, p.Step)]
    (trained,) = [e for e in events if isinstance(e, p.Trained)]
    assert steps == [1, 2, 3] and trained.note == ""
    assert trained.meta["kind"] == "toy" and trained.meta["settings"] == settings
    with Store() as store:
        (run,) = store.runs()
    assert run.run.settings == ToySettings(temperature=0.5, seed=1) and run.checkpoint == trained.path


async def test_the_train_form_offers_the_recipes_and_reads_the_chosen_ones_settings(toy):
    """With two recipes that train on a mix, the form asks which; the toy's request carries ToySettings."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        panel = app.train_panel
        assert panel.chosen_recipe().name == "finetune"
        _, settings, _ = panel.request()
        assert type(settings) is FinetuneSettings
        panel.query_one("#recipe", Select).value = "toy"
        await pilot.pause()
        assert panel.query_one("#steps", Input).value == "3"  # the toy's default, not the plate's 400
        panel.set_value("temp", "0.25")  # under "advanced", folded
        _, settings, _ = panel.request()
        assert settings == ToySettings(temperature=0.25)


async def test_with_only_the_plates_recipe_the_form_asks_nothing_more(monkeypatch):
    """With one recipe that trains on a mix registered, no recipe choice takes a row of the form."""
    monkeypatch.delitem(RECIPES, "reward")
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert not app.train_panel.query("#recipe")


async def test_the_shipped_form_offers_demonstrations_and_reward():
    """The shipped registry has two recipes that train on a mix: the form asks which, the plate's first, and
    reward's request carries RewardSettings with its own defaults."""
    from breadth.core.world.runs.settings import RewardSettings

    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        panel = app.train_panel
        assert panel.chosen_recipe().name == "finetune"
        panel.query_one("#recipe", Select).value = "reward"
        await pilot.pause()
        assert panel.query_one("#steps", Input).value == str(RewardSettings().steps)
        _, settings, _ = panel.request()
        assert settings == RewardSettings()


def _text(table) -> str:
    """What a Rich table prints, as plain text."""
    from rich.console import Console

    console = Console(width=250, record=True)
    console.print(table)
    return console.export_text()


def test_a_run_names_its_recipe_as_recipe_and_keeps_the_stored_key_kind():
    """`RunMeta.recipe` is the recipe's name; records keep it under "kind", so every committed file reads the same."""
    stored = RunMeta.from_dict({"kind": "pretrain", "losses": [1.0]})
    assert stored.recipe == "pretrain" and not stored.on_mix
    assert stored.to_dict()["kind"] == "pretrain" and "recipe" not in stored.to_dict()
    assert RunMeta.from_dict({"mix": "add_2x2=70", "seed": 0}).recipe == "finetune"  # a record naming none
