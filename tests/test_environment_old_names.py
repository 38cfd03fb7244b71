"""The plate's environments are named by their coordinates (`add_2x2`, `add_3x1`) in all breadth writes and shows,
and their old names (`two_digit`, `three_digit`, `breadth/two-digit-v1`) are read wherever a name is read: typed,
in mix specs, in stores, checkpoints and curves written before, without moving a stored key or a seeded split."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import gymnasium
import pytest

from breadth.core.cli.main import main
from breadth.core.results.breadth_curve import StoredCurve
from breadth.core.results.report import summarise
from breadth.core.storage.header import read_header
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.snapshot_file import read_snapshot_header, sidecar_of
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world import gym_envs  # noqa: F401 -- registers breadth's ids with Gymnasium
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.registry import by_name, env_id, environment, environment_named, environments
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

REPO = Path(__file__).resolve().parent.parent


def test_breadth_envs_lists_the_plates_environments_by_their_coordinate_ids_first(capsys, tmp_path):
    """`breadth envs` lists breadth/add-2x2-v1 then breadth/add-3x1-v1 first, as before, and no old id."""
    out = tmp_path / "envs.json"
    assert main(["envs", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "breadth/add-2x2-v1" in printed and "two-digit-v1" not in printed and "three-digit-v1" not in printed
    assert printed.index("breadth/add-2x2-v1") < printed.index("breadth/add-3x1-v1") < printed.index("add-2x1-v1")
    written = json.loads(out.read_text())
    ids = [e["id"] for e in (written if isinstance(written, list) else written["environments"])]
    assert ids[:3] == ["breadth/add-2x2-v1", "breadth/add-3x1-v1", "breadth/add-2x1-v1"]
    assert [env_id(f) for f in environments()][:2] == ids[:2]


def test_gymnasium_makes_the_canonical_ids_and_the_old_ids_as_aliases_of_them():
    """`gymnasium.make("breadth/add-2x2-v1")` makes the plate's two-digit environment; the old id makes the same
    environment (its id the canonical one, the same problems)."""
    for new, old in (("breadth/add-2x2-v1", "breadth/two-digit-v1"), ("breadth/add-3x1-v1", "breadth/three-digit-v1")):
        made, aliased = gymnasium.make(new).unwrapped, gymnasium.make(old).unwrapped
        assert made.id == aliased.id == new and made.environment is aliased.environment is environment(new)
        assert made.reset(seed=3)[0] == aliased.reset(seed=3)[0]
    assert gymnasium.make("breadth/add-2x2-v1").unwrapped.environment.name == "add_2x2"


def test_old_names_and_ids_read_as_the_environment_in_every_lookup():
    """By name, by id, in a mix spec and in keyword counts, `two_digit` and `three_digit` are add_2x2 and add_3x1;
    an unknown name is still refused in one line naming the environments as they are called now."""
    two, three = REGISTERED["add_2x2"], REGISTERED["add_3x1"]
    assert environment_named("two_digit") is environment_named("TWO_DIGIT") is two
    assert by_name("three_digit") is three and by_name("add_3x1") is three
    assert environment("breadth/two-digit-v1") is environment("two-digit-v1") is two
    assert environment("breadth/three-digit-v1") is three
    assert (
        Mix.parse("two_digit=35,three_digit=35")
        == Mix.parse("add_2x2=35,add_3x1=35")
        == Mix.of(two_digit=35, add_3x1=35)
    )
    assert Mix.parse("three_digit=35,two_digit=35").spec() == "add_2x2=35,add_3x1=35"
    with pytest.raises(MixError, match=r"appears twice"):
        Mix.parse("two_digit=35,add_2x2=35")
    with pytest.raises(MixError, match=r"unknown environment 'two_digt'; known: add_2x2, add_3x1, "):
        Mix.parse("two_digt=35")
    with pytest.raises(ValueError, match="use breadth/add-2x2-v1"):
        environment("breadth/two-digit-v2")


def test_the_plates_splits_and_run_keys_are_the_ones_made_under_the_old_names():
    """The renamed environments keep their seeded orders and a run keeps its key under either name (the committed
    stores' runs are found, never run again)."""
    settings = FinetuneSettings(seed=3)
    assert run_key("add_2x2=35,add_3x1=35", settings, 30, "b") == run_key(
        "two_digit=35,three_digit=35", settings, 30, "b"
    )
    assert run_key("add_2x2=70", settings, 30, "b", ["add_2x2"]) == run_key(
        "two_digit=70", settings, 30, "b", ["two_digit"]
    )
    first_failed = read_header(PRESETS["three_digit_70"].shipped).run.scores["add_2x2"].examples[0]
    assert first_failed.segments[0].text == REGISTERED["add_2x2"].held_out(0, 1)[0].prompt == "63+77="  # as scored then


@pytest.mark.parametrize("spelled", ["two_digit=70", "add_2x2=70", "2d=70"])
def test_the_cli_reads_a_mix_by_any_of_its_names_and_finds_runs_stored_under_the_old_one(capsys, tmp_path, spelled):
    """`breadth runs --mix two_digit=70` and `--mix add_2x2=70` find the same runs of the committed recipe search
    (stored as two_digit=70), and show and write their mix by the name it has now."""
    out = tmp_path / "runs.json"
    store = REPO / "results" / "recipe-search.sqlite"
    assert main(["runs", "--mix", spelled, "--store", str(store), "--json", str(out)]) == 0
    capsys.readouterr()
    runs = json.loads(out.read_text())
    rows = runs if isinstance(runs, list) else runs["runs"]
    assert len(rows) >= 10 and {r["mix"] for r in rows} == {"add_2x2=70"}
    with closing(sqlite3.connect(f"{store.as_uri()}?immutable=1", uri=True)) as db:
        assert db.execute("SELECT COUNT(*) FROM runs WHERE mix = 'two_digit=70'").fetchone()[0] == len(rows)


def test_a_shipped_checkpoints_metadata_and_snapshots_read_by_the_names_they_have_now():
    """The shipped models keep their file names and stored metadata (`two_digit=70`); read, their mix and scores
    name add_2x2 and add_3x1, and their snapshots' scores too."""
    header = read_header(PRESETS["two_digit_70"].shipped)
    assert header.meta["mix"] == "two_digit=70"  # the file is not rewritten
    assert header.run.mix == "add_2x2=70" and header.run.mix_name() == "two-digit 70"
    assert {"add_2x2", "add_3x1"} <= set(header.run.scores) and "two_digit" not in header.run.scores
    assert header.run.scores["add_3x1"].environment == "add_3x1"
    assert (
        read_header(PRESETS["mix_35_35"].shipped).run.mix == PRESETS["mix_35_35"].mix.spec() == "add_2x2=35,add_3x1=35"
    )
    steps = read_snapshot_header(sidecar_of(PRESETS["three_digit_70"].shipped)).steps
    assert steps and all({"add_2x2", "add_3x1"} <= set(step.scores) for step in steps)


def _stored(seed: int, mix: str, solved: int) -> StoredRun:
    settings = FinetuneSettings(seed=seed)
    scores = {"add_2x2": HeldOutScore("add_2x2", solved, 30, {"no call": 30 - solved} if solved < 30 else {})}
    run = RunMeta("finetune", settings, mix, seed, 30, scores, (2.0, 1.0), 4.0, 0.1)
    return StoredRun(run_key(mix, settings, 30, "b"), run, "b", "test")


def _store_as_before(path: Path, seed: int) -> None:
    """A store holding one run as breadth wrote it before the rename: mix, record and scores under `two_digit`."""
    with Store(path) as store:
        store.add(_stored(seed, "add_2x2=70", 27))
        store.db.execute("UPDATE runs SET mix = 'two_digit=70', record = replace(record, 'add_2x2', 'two_digit')")
        store.db.execute("UPDATE scores SET family = 'two_digit'")
        store.db.commit()


def test_a_run_stored_under_the_old_name_is_one_cell_with_a_new_one_and_is_never_stored_twice(tmp_path):
    """A run stored as `two_digit=70` reads as add_2x2=70: filtered by either spelling, grouped with a new run of
    add_2x2=70 in one cell, and a new run of its seed has its key (already stored, not added)."""
    path = tmp_path / "s.sqlite"
    _store_as_before(path, 0)
    with Store(path) as store:
        (old,) = store.runs(mixes=["add_2x2=70"])
        assert store.runs(mixes=["two_digit=70"]) == [old]
        assert old.run.mix == "add_2x2=70" and set(old.run.scores) == {"add_2x2"}
        assert not store.add(_stored(0, "add_2x2=70", 27))  # the same run under its new name: its key is stored
        assert store.add(_stored(1, "add_2x2=70", 24))
        runs = store.runs()
        assert store.db.execute("SELECT mix FROM runs ORDER BY created").fetchall() == [
            ("two_digit=70",),
            ("add_2x2=70",),
        ]
    (cell,) = summarise(runs)
    assert cell.key.mix == "add_2x2=70" and sorted(cell.seeds) == [0, 1]


def test_a_curve_stored_with_old_names_reads_with_the_new_ones_and_keeps_its_name():
    """Every curve in the committed curve store reads back with its pool by the names it has now and still has the
    name it is stored under (its runs' keys unchanged)."""
    store = REPO / "results" / "curve.sqlite"
    with Store(store, read_only=True) as opened:
        curves = opened.curves()
    assert any("two_digit" in plan["plan"]["pool"] or "three_digit" in plan["plan"]["pool"] for _, plan, _ in curves)
    for name, data, _ in curves:
        curve = StoredCurve.from_dict(data)
        assert curve.name == name and not {"two_digit", "three_digit"} & set(curve.plan.pool)


def test_a_copy_of_the_committed_recipe_search_runs_nothing_again(tmp_path):
    """Every run of the committed recipe search (stored under the old names) has the key its record now gives."""
    path = tmp_path / "r.sqlite"
    shutil.copy(REPO / "results" / "recipe-search.sqlite", path)
    with Store(path, read_only=True) as store:
        runs = store.runs()
    assert len(runs) > 900 and {r.run.mix for r in runs} >= {"add_2x2=70", "add_3x1=70", "add_2x2=35,add_3x1=35"}
    for r in runs:
        assert run_key(r.run.mix, r.run.settings, r.run.held_out, r.base_hash, r.run.scores) == r.key
