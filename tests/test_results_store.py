"""The results store: runs keyed by what determines them, kept across crashes, refused when not ours."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from breadth.core.results.grid import Grid, GridError, parse_budget, parse_seeds, parse_share, parse_values
from breadth.core.results.report import budget, compare, summarise
from breadth.core.storage.store import SCHEMA, Store, StoredRun, StoreError, run_key
from breadth.core.storage.store_file import _MIGRATIONS
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _run(seed: int, solved: int, mix: str = "add_2x2=70", lr: float = 2e-3, other: int = 0) -> StoredRun:
    settings = FinetuneSettings(seed=seed, lr=lr)
    scores = {"add_2x2": HeldOutScore("add_2x2", solved, 30, {"no call": 30 - solved} if solved < 30 else {})}
    scores["add_3x1"] = HeldOutScore("add_3x1", other, 30, {"no call": 30 - other} if other < 30 else {})
    run = RunMeta("finetune", settings, mix, seed, 30, scores, (2.0, 1.0), 4.0, 0.1)
    return StoredRun(run_key(mix, settings, 30, "base0"), run, "base0", "test", versions={"torch": "x"})


def test_a_run_round_trips_and_a_stored_key_is_never_stored_twice(tmp_path):
    """A stored run reads back equal; adding its key again changes nothing and says so."""
    with Store(tmp_path / "s.sqlite") as store:
        run = _run(0, 27)
        assert store.add(run) and not store.add(_run(0, 3))  # same key, other scores: the first stays
        (back,) = store.runs()
        assert back.run == run.run and back.key == run.key and back.versions == {"torch": "x"}
        assert store.has(run.key) and store.keys() == {run.key}
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_runs_filter_by_mix_seed_and_setting(tmp_path):
    """Filters narrow the runs by mix, seeds and a setting's value."""
    with Store(tmp_path / "s.sqlite") as store:
        for seed in range(3):
            store.add(_run(seed, 20 + seed))
            store.add(_run(seed, 10, lr=1e-3))
            store.add(_run(seed, 5, mix="add_3x1=70"))
        assert len(store.runs()) == 9
        assert len(store.runs(mixes=["add_3x1=70"])) == 3
        assert [r.run.seed for r in store.runs(mixes=["add_2x2=70"], seeds=[1], lr=1e-3)] == [1]


def test_the_key_depends_on_everything_that_determines_a_run():
    """Mix, every setting, the seed, the held-out size and the base each change the key; nothing else does."""
    s = FinetuneSettings()
    key = run_key("add_2x2=70", s, 30, "b")
    assert key == run_key("add_2x2=70", FinetuneSettings(), 30, "b")
    others = [
        run_key("add_2x2=69", s, 30, "b"),
        run_key("add_2x2=70", s, 200, "b"),
        run_key("add_2x2=70", s, None, "b"),
        run_key("add_2x2=70", s, 30, "c"),
    ]
    others += [
        run_key("add_2x2=70", FinetuneSettings(**{name: value}), 30, "b")
        for name, value in (
            ("seed", 1),
            ("lr", 1e-3),
            ("steps", 10),
            ("batch_size", 9),
            ("dropout", 0.1),
            ("weight_decay", 0.1),
        )
    ]
    assert len({key, *others}) == len(others) + 1


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    """A text file given as the store is refused in one line and not modified; so is a directory."""
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n")
    with pytest.raises(StoreError, match="not an SQLite file"):
        Store(path)
    assert path.read_text() == "my notes\n"
    with pytest.raises(StoreError, match="not a regular file"):
        Store(tmp_path)


def test_a_store_of_a_newer_schema_is_refused_and_left_untouched(tmp_path):
    """A store written by a newer breadth (higher user_version) is refused, byte for byte unchanged."""
    path = tmp_path / "new.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE future (x)")
    db.execute(f"PRAGMA user_version = {SCHEMA + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer"):
        Store(path)
    assert path.read_bytes() == before


def test_an_empty_store_of_schema_zero_is_migrated(tmp_path):
    """An existing SQLite file without breadth's tables (schema 0) is brought up to the current schema."""
    path = tmp_path / "old.sqlite"
    sqlite3.connect(path).close()
    with Store(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA
        assert store.add(_run(0, 1))


def test_a_schema_1_store_is_rekeyed_by_the_families_its_runs_were_scored_on(tmp_path):
    """Schema 1 keys did not name the families scored; migrating keeps every run and score under the key of the
    families it was scored on, so the same run scored on every family today is a new run, not a duplicate."""
    path = tmp_path / "v1.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_MIGRATIONS[1])
    run = _run(3, 20).run  # scored on add_2x2 and add_3x1
    old_key = "0123456789abcdef0123"
    db.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            old_key,
            run.mix,
            3,
            400,
            2e-3,
            8,
            0.0,
            0.0,
            30,
            "base0",
            "test",
            None,
            None,
            None,
            4.0,
            0.1,
            1.0,
            json.dumps(run.to_dict()),
        ),
    )
    for name, sc in run.scores.items():
        db.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?)", (old_key, name, sc.solved, sc.total, "{}"))
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with Store(path) as store:
        (stored,) = store.runs()
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA
        assert stored.key == run_key(run.mix, run.settings, 30, "base0", ["add_2x2", "add_3x1"])
        assert stored.run.scores["add_2x2"].solved == 20
        assert not store.has(run_key(run.mix, run.settings, 30, "base0"))  # scored on every family: not stored yet


def test_kill_9_while_writing_loses_no_finished_run_and_corrupts_nothing(tmp_path):
    """A writer killed with SIGKILL in the middle of storing runs leaves a sound store with every committed run."""
    path = tmp_path / "s.sqlite"
    writer = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(os.path.dirname(__file__))!r})
        from test_results_store import _run
        from breadth.core.storage.store import Store
        store = Store({str(path)!r})
        for seed in range(100000):
            store.add(_run(seed, seed % 31))
            print(seed, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
    committed = -1
    deadline = time.monotonic() + 60
    while committed < 30 and time.monotonic() < deadline:
        committed = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    with Store(path) as store:
        seeds = {r.run.seed for r in store.runs()}
    assert set(range(committed + 1)) <= seeds  # everything reported as stored is there
    assert seeds == set(range(len(seeds)))  # and nothing half-written


def test_seeds_values_and_shares_parse_or_refuse_in_one_line():
    """Seeds, swept values and shares parse from what people type; bad ones raise one GridError line."""
    assert parse_seeds("0-3,7") == (0, 1, 2, 3, 7)
    assert parse_values("lr", "1e-3, 2e-3") == (1e-3, 2e-3)
    mixes = parse_share("add_2x2/add_3x1=70:35")
    assert [m.spec() for m in mixes] == ["add_3x1=70", "add_2x2=35,add_3x1=35", "add_2x2=70"]
    for bad in (
        lambda: parse_seeds("3-1"),
        lambda: parse_seeds(""),
        lambda: parse_seeds("x"),
        lambda: parse_values("lr", "0"),
        lambda: parse_values("seed", "1"),
        lambda: parse_values("lr", "1,1"),
        lambda: parse_share("add_2x2=70"),
        lambda: parse_share("add_2x2/nope=70:7"),
        lambda: parse_share("add_2x2/add_2x2=70:7"),
    ):
        with pytest.raises(GridError) as info:
            bad()
        assert "\n" not in str(info.value)


def test_every_cell_of_a_grid_uses_the_same_seeds_and_held_out_size():
    """Jobs pair cells: each cell runs on every seed, with the grid's held-out size, under distinct keys."""
    grid = Grid(
        (Mix.parse("add_2x2=70"), Mix.parse("add_3x1=70")),
        FinetuneSettings(),
        (("lr", (1e-3, 2e-3)),),
        (0, 1, 2),
        200,
    )
    jobs = grid.jobs("b")
    assert len(jobs) == grid.size == 12 and len({j.key for j in jobs}) == 12
    for cell in grid.cells():
        assert sorted(j.seed for j in jobs if j.cell == cell) == [0, 1, 2]
    assert {j.held_out for j in jobs} == {200} and grid.varied == ("mix", "lr")
    with pytest.raises(GridError):
        Grid((), FinetuneSettings(), (), (0,), 30)


def test_report_pairs_cells_by_seed():
    """The paired difference between two cells is the mean of per-seed differences, with a t interval."""
    runs = [_run(s, 15 + s, lr=1e-3) for s in range(4)] + [_run(s, 20 + s) for s in range(4)]
    a, b = sorted(summarise(runs), key=lambda c: c.key.settings.lr)
    assert a.seeds == b.seeds == (0, 1, 2, 3)
    diff, same = compare(a, b)
    assert same.environment == "add_3x1" and same.mean == 0  # both solve none of it on every seed
    assert diff.seeds == 4 and diff.mean == pytest.approx(5 / 30)
    assert diff.low == pytest.approx(5 / 30) and diff.high == pytest.approx(5 / 30)  # the same gap on every seed
    assert a.environments["add_2x2"].mean == pytest.approx(sum(15 + s for s in range(4)) / 120)


def test_a_budget_is_each_family_alone_and_an_even_mix_at_every_total():
    """`a/b=10,35`: at each total, a alone, b alone and an even mix (an odd total gives a the extra one)."""
    mixes = [m.spec() for m in parse_budget("add_2x2/add_3x1=10,35")]
    assert mixes == [
        "add_2x2=10",
        "add_3x1=10",
        "add_2x2=5,add_3x1=5",
        "add_2x2=35",
        "add_3x1=35",
        "add_2x2=18,add_3x1=17",
    ]
    for bad in ("add_2x2=10", "add_2x2/add_2x2=10", "add_2x2/add_3x1=1", "add_2x2/nope=10", "a/b=x"):
        with pytest.raises(GridError) as info:
            parse_budget(bad)
        assert "\n" not in str(info.value)


def test_the_cost_of_mixing_pairs_each_family_alone_with_its_share_of_the_mix():
    """A budget's point for a family at a total: alone vs in the mix, and their difference paired by seed."""
    runs = []
    for s in range(3):
        runs.append(_run(s, 28, "add_2x2=10", other=0))
        runs.append(_run(s, 0, "add_3x1=10", other=27))
        runs.append(_run(s, 20 + s, "add_2x2=5,add_3x1=5", other=25))
    points = budget(summarise(runs))
    assert [(p.environment, p.total, p.mixed_count) for p in points] == [("add_2x2", 10, 5), ("add_3x1", 10, 5)]
    two, three = points
    assert three.alone.mean == pytest.approx(27 / 30) and three.mixed.mean == pytest.approx(25 / 30)
    n, mean, low, high = two.paired()
    assert n == 3 and mean == pytest.approx((-8 - 7 - 6) / 3 / 30) and low < mean < high
    assert budget(summarise(runs[:1])) == []  # a single-family run alone makes no budget
    other_lr = [_run(s, 20, "add_2x2=5,add_3x1=5", lr=1e-3) for s in range(3)]
    assert budget(summarise(runs + other_lr)) == []  # cells that differ by more than the mix are not one budget
    uneven = [_run(s, 25, "add_2x2=7,add_3x1=3", other=20) for s in range(3)]
    assert budget(summarise(runs + uneven)) == []  # a share sweep's uneven mix: not a budget


def test_a_schema_2_store_keeps_every_run_and_score_with_its_settings_as_one_json_column(tmp_path):
    """Schema 2 kept a column per setting; migrating to schema 3 keeps every run under its key, every score (the
    table is rebuilt without cascading deletes), and filters by a setting's value as before."""
    path = tmp_path / "v2.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_MIGRATIONS[1])
    runs = [_run(0, 20), _run(1, 25, lr=1e-3), _run(2, 5, mix="add_3x1=70")]
    for stored in runs:
        r, s = stored.run, stored.run.settings
        db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (stored.key, r.mix, r.seed, s.steps, s.lr, s.batch_size, s.dropout, s.weight_decay, r.held_out)
            + (stored.base_hash, "test", None, None, "x", 4.0, 0.1, 1.0 + r.seed, json.dumps(r.to_dict())),
        )
        for name, sc in r.scores.items():
            db.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?)", (stored.key, name, sc.solved, sc.total, "{}"))
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == 5
        assert [(r.key, r.run) for r in store.runs()] == [(x.key, x.run) for x in runs]
        assert store.db.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 6
        assert [r.run.seed for r in store.runs(lr=1e-3)] == [1]
        assert json.loads(store.db.execute("SELECT settings FROM runs WHERE seed = 1").fetchone()[0]) == (
            runs[1].run.settings.to_dict()
        )
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_budget_over_a_mix_this_program_cannot_read_is_no_budget():
    """Cells whose stored mix names a family no longer registered are not a budget (the report still prints)."""
    runs = [_run(s, 20, "add_2x2=10") for s in range(2)] + [_run(s, 20, "gone_family=10") for s in range(2)]
    runs += [_run(s, 20, "add_2x2=5,gone_family=5") for s in range(2)]
    assert budget(summarise(runs)) == []
