"""The store's curves table (schema 4): a breadth curve's plan is kept once under its name, read back newest first,
an older store gains the table without losing a run (and a read-only open changes no byte), and a row breadth did
not write is skipped and named, never raised."""

from __future__ import annotations

import sqlite3

import pytest

from breadth.core.storage.store import SCHEMA, Store, StoredRun, StoreError, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _run() -> StoredRun:
    settings = FinetuneSettings()
    scores = {"two_digit": HeldOutScore("two_digit", 30, 30, {})}
    run = RunMeta("finetune", settings, "two_digit=70", 0, 30, scores, (2.0, 1.0), 4.0, 0.1)
    return StoredRun(run_key("two_digit=70", settings, 30, "base0"), run, "base0", "test")


def _schema_3(path) -> None:
    """A store as breadth wrote it before curves were kept: one run, no curves table, user_version 3."""
    with Store(path) as store:
        store.add(_run())
    db = sqlite3.connect(path)
    db.execute("DROP TABLE curves")
    db.execute("DROP TABLE study_runs")
    db.execute("DROP TABLE maps")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()


def test_a_plan_is_kept_once_under_its_name_and_read_back_newest_first(tmp_path):
    """add_curve stores a plan once (a second add of that name changes nothing); curves() lists newest first."""
    with Store(tmp_path / "s.sqlite") as store:
        assert store.add_curve("curve-a", {"n": [1, 2]})
        assert not store.add_curve("curve-a", {"n": [9]})
        store.add_curve("curve-b", {"n": [4]})
        store.db.execute("UPDATE curves SET created = 1 WHERE name = 'curve-a'")
        assert [(name, plan) for name, plan, _ in store.curves()] == [
            ("curve-b", {"n": [4]}),
            ("curve-a", {"n": [1, 2]}),
        ]
    with Store(tmp_path / "s.sqlite", read_only=True) as store, pytest.raises(StoreError, match="read-only"):
        store.add_curve("curve-c", {})


def test_an_older_store_gains_the_table_and_keeps_its_runs(tmp_path):
    """A schema-3 store opened read-only reads no curves and is byte for byte unchanged; opened to write, it is
    migrated to this program's schema with its run and an empty curves table."""
    path = tmp_path / "old.sqlite"
    _schema_3(path)
    before = path.read_bytes()
    with Store(path, read_only=True) as store:
        assert store.curves() == [] and len(store.runs()) == 1
    assert path.read_bytes() == before
    with Store(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == 5
        assert store.curves() == [] and len(store.runs()) == 1
        assert store.add_curve("curve-a", {"n": [1]})


def test_a_schema_4_file_without_the_curves_table_is_not_a_store(tmp_path):
    """The tables a store holds depend on its schema: schema 4 without `curves` is refused, the file untouched."""
    path = tmp_path / "odd.sqlite"
    _schema_3(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a breadth results store"):
        Store(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("plan", ["not json", "[1, 2]", "[" * 100_000 + "]" * 100_000, 7])
def test_a_curve_row_breadth_did_not_write_is_skipped_and_named(tmp_path, plan):
    """A plan that is not JSON, not a mapping, nested past reason or not text: skipped, named in `unreadable`."""
    with Store(tmp_path / "s.sqlite") as store:
        store.add_curve("good", {"n": 1})
        store.db.execute("INSERT INTO curves VALUES (?, ?, ?)", ("bad", plan, 0))
        assert [name for name, _, _ in store.curves()] == ["good"]
        assert len(store.unreadable) == 1 and "'bad'" in store.unreadable[0]
