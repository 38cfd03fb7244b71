"""The store against what users' files and disks do: other programs' databases, full disks, held locks, odd rows."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from breadth.core.cli.main import main
from breadth.core.storage import store as store_module
from breadth.core.storage.store import Store, StoreError
from breadth.core.storage.store_file import _MIGRATIONS

sys.path.insert(0, os.path.dirname(__file__))
from test_results_store import _run  # noqa: E402

ROWS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def _folder(path: Path) -> dict[str, bytes]:
    """Every file in `path`'s folder with its bytes: what 'left untouched' compares."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if p.is_file()}


def _users_database(path: Path, journal: str = "delete", version: int = 0, application: int = 0) -> None:
    """Another program's SQLite database: its own table, rows, journal mode, schema version and application id."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    db.execute("INSERT INTO contacts VALUES ('Ada', '555')")
    db.execute(f"PRAGMA user_version = {version}")
    db.execute(f"PRAGMA application_id = {application}")
    db.commit()
    db.execute(f"PRAGMA journal_mode = {journal}")
    db.close()


@pytest.mark.parametrize(
    "journal, version, application",
    [("delete", 0, 0), ("wal", 0, 0), ("delete", 2, 0), ("delete", 1, 0), ("delete", 0, 1234), ("delete", -1, 0)],
)
def test_another_programs_database_is_refused_untouched_by_readers_and_writers(tmp_path, journal, version, application):
    """A user's own SQLite database given as the store is refused by every opener, and no byte in its folder
    changes (no breadth tables, no schema version, no WAL mode, no journal files beside it)."""
    path = tmp_path / "mine.db"
    _users_database(path, journal, version, application)
    before = _folder(path)
    for read_only in (True, False):
        with pytest.raises(StoreError, match="not a breadth results store|another program|no breadth writes"):
            Store(path, read_only=read_only)
        assert _folder(path) == before
    for argv in (["runs"], ["report"], ["sweep", "--plate", "--seeds", "0"]):
        assert main([*argv, "--store", str(path)]) == 2
        assert _folder(path) == before


def test_a_negative_schema_version_is_refused_untouched(tmp_path):
    """A store whose schema version is below zero (no breadth writes one) is refused in one line, unchanged."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.add(_run(0, 3))
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = -1")
    db.close()
    before = _folder(path)
    for read_only in (True, False):
        with pytest.raises(StoreError, match="schema -1") as info:
            Store(path, read_only=read_only)
        assert "\n" not in str(info.value)
    assert _folder(path) == before


def test_a_read_only_open_of_a_missing_store_creates_nothing(tmp_path):
    """`breadth runs` with no store yet lists nothing and creates neither the store nor its folder."""
    path = tmp_path / "not" / "yet" / "runs.sqlite"
    with Store(path, read_only=True) as store:
        assert store.runs() == []
        with pytest.raises(StoreError, match="read-only"):
            store.add(_run(0, 1))
    assert main(["runs", "--store", str(path)]) == 0
    assert main(["report", "--store", str(path)]) == 0
    assert not (tmp_path / "not").exists()


def test_the_default_store_is_not_created_by_a_read_only_command(private_home):
    """With no --store and no store yet, `breadth runs` and `breadth report` leave the user's folder empty."""
    assert main(["runs"]) == 0 and main(["report"]) == 0
    assert not any(Path(private_home).rglob("*.sqlite*"))


def test_a_read_only_open_of_an_older_store_migrates_in_memory_and_leaves_the_file(tmp_path):
    """A schema-1 store read by `runs` shows its runs under today's keys; its file keeps every byte."""
    path = tmp_path / "v1.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_MIGRATIONS[1])
    run = _run(3, 20)
    _insert(db, "0123456789abcdef0123", run.run.to_dict())
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    before = _folder(path)
    with Store(path, read_only=True) as store:
        (back,) = store.runs()
        assert back.run.scores["add_2x2"].solved == 20 and back.key != "0123456789abcdef0123"
    assert _folder(path) == before


def test_a_full_disk_names_the_disk_not_a_rollback(tmp_path):
    """When the disk fills mid-sweep, the store says the disk is full (not 'cannot rollback - no transaction is
    active'), keeps every run stored before, and stays usable."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.add(_run(0, 1))
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: a full disk
        with pytest.raises(StoreError) as info:
            for seed in range(1, 200):
                store.add(_run(seed, 1))
        assert "disk is full" in str(info.value) and "rollback" not in str(info.value)
        stored = len(store.runs())
        assert stored >= 1 and not store.db.in_transaction
    with Store(path) as store:
        assert len(store.runs()) == stored


def test_a_write_lock_held_by_another_process_is_named(tmp_path, monkeypatch):
    """A store another writer holds past the wait is refused with that reason, and the run is not half-stored."""
    monkeypatch.setattr(store_module, "BUSY_SECONDS", 0.2)
    path = tmp_path / "s.sqlite"
    Store(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with Store(path) as store:
            with pytest.raises(StoreError, match="write lock"):
                store.add(_run(0, 1))
    finally:
        other.execute("ROLLBACK")
        other.close()
    with Store(path) as store:
        assert store.runs() == []


def _insert(db: sqlite3.Connection, key, record, created=1.0, source="test", base="base0") -> None:
    """A row written straight into a store, as another program (or a bug) might."""
    text = record if isinstance(record, str | bytes) else json.dumps(record)
    if len(db.execute("PRAGMA table_info(runs)").fetchall()) == 14:  # schema 3: the settings as one JSON column
        settings = (json.dumps({"steps": 400, "lr": 2e-3, "batch_size": 8, "dropout": 0.0, "weight_decay": 0.0}),)
    else:  # schemas 1 and 2: a column each
        settings = (400, 2e-3, 8, 0.0, 0.0)
    row = (key, "add_2x2=70", 0, *settings, 30, base, source, None, None, None, 1.0, 0.1, created, text)
    db.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row)


ODD_ROWS = {
    "a NULL key": dict(key=None),
    "a record nested 100,000 deep": dict(record="[" * 100_000 + "]" * 100_000),
    "a record that is not JSON": dict(record="{not json"),
    "a record without settings": dict(record={"kind": "finetune", "mix": "add_2x2=70", "seed": 0}),
    "a record that is a number": dict(record="7"),
    "a blob for a record": dict(record=b"\x00\xff"),
    "a non-numeric created": dict(created="yesterday"),
    "a huge created": dict(created=1e300),
    "an infinite created": dict(created=float("inf")),
    "a blob for a source": dict(source=b"\x1b]0;x\x07"),
    "a number for a base": dict(base=12),
}


@pytest.mark.parametrize("odd", list(ODD_ROWS), ids=list(ODD_ROWS))
def test_odd_rows_are_skipped_and_named_by_every_reader(tmp_path, capsys, odd):
    """A store holding one row breadth never wrote still lists its good runs in every reader (`runs` as a table,
    CSV and JSON, `report`), and says how many rows it skipped; never a traceback."""
    path = tmp_path / "s.sqlite"
    good = _run(1, 25)
    with Store(path) as store:
        store.add(good)
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys = OFF")
    fields = {"key": "oddkey", "record": _run(2, 5).run.to_dict()} | ODD_ROWS[odd]
    _insert(db, **fields)
    db.commit()
    db.close()
    for read_only in (True, False):
        with Store(path, read_only=read_only) as store:
            found = store.runs()
            assert good.key in {r.key for r in found}
            assert all(r.created == 0.0 or 0 < r.created < 1e11 for r in found)
    capsys.readouterr()
    assert (
        main(["runs", "--store", str(path), "--csv", str(tmp_path / "o.csv"), "--json", str(tmp_path / "o.json")]) == 0
    )
    assert main(["report", "--store", str(path)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert len(json.loads((tmp_path / "o.json").read_text())) >= 1


text_or_junk = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=20),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def _record_like():
    """Records near what breadth writes (one field changed to anything) and records of any shape."""
    base = _run(0, 10).run.to_dict()
    near = st.builds(lambda k, v: base | {k: v}, st.sampled_from(sorted(base)), json_values)
    return st.one_of(near, json_values.map(json.dumps), st.text(max_size=40))


@ROWS
@given(
    version=st.integers(min_value=-(2**31), max_value=2**31 - 1),
    rows=st.lists(st.tuples(text_or_junk, _record_like(), text_or_junk, text_or_junk), max_size=4),
)
def test_random_rows_and_versions_pass_every_reader_without_a_traceback(tmp_path_factory, version, rows):
    """Whatever rows and schema version a store holds, every reader either reads it (skipping what it cannot) or
    refuses it in one line; a store it refuses keeps every byte."""
    folder = tmp_path_factory.mktemp("rows")
    path = folder / "s.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_MIGRATIONS[1])
    for key, record, created, source in rows:
        try:
            _insert(db, key, record, created, source)
        except (sqlite3.Error, OverflowError, TypeError):
            pass  # SQLite refused the row itself (a repeated key, an integer too large)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()
    before = _folder(path)
    for read_only in (True, False):
        try:
            with Store(path, read_only=read_only) as store:
                store.runs()
        except StoreError as e:
            assert "\n" not in str(e)
            assert _folder(path) == before
    for argv in (["runs"], ["report"]):
        assert main([*argv, "--store", str(path)]) in (0, 2)


INPUTS = {  # command -> the inputs it reads (store, base, checkpoint) and its output flags
    "runs": (("store",), ("--csv", "--json")),
    "report": (("store",), ("--json", "--figure")),
    "sweep": (("store", "base"), ("--json", "--figure")),
    "matrix": (("store", "base"), ("--json", "--figure")),
    "plate": (("store",), ("--json",)),
    "train": (("store", "base"), ("--out",)),
    "eval": (("checkpoint",), ("--json", "--figure")),
}
NAMES = ("x.sqlite", "x.png", "x.svg")  # an input's name: a figure FIGURE writes FIGURE.png and FIGURE.svg
TARGETS = ("the file", "its -wal", "its -shm", "a hard link to it", "a symlink to it", "a relative path to it")


def _cases():
    for command, (inputs, flags) in INPUTS.items():
        for flag in flags:
            for what in inputs:
                for name in NAMES[1:] if flag == "--figure" else NAMES[:1]:
                    for target in TARGETS if what == "store" else ("the file", "a hard link to it"):
                        if flag == "--figure" and target in ("its -wal", "its -shm"):
                            continue  # a figure writes only .png and .svg files
                        yield command, flag, what, name, target


def _argv(command: str, folder: Path, store: Path, base: Path, checkpoint: Path) -> list[str]:
    """A command that would run (quickly refused here) with every input named explicitly."""
    argv = {
        "runs": ["runs", "--store", store],
        "report": ["report", "--store", store],
        "sweep": ["sweep", "--mix", "add_2x2=1", "--steps", "1", "--seeds", "0", "--base", base, "--store", store],
        "matrix": ["matrix", "--mix", "add_2x2=1", "--steps", "1", "--seeds", "0", "--base", base, "--store", store],
        "plate": ["plate", "--steps", "1", "--seeds", "0", "--store", store],
        "train": ["train", "--mix", "add_2x2=1", "--steps", "1", "--base", base, "--store", store],
        "eval": ["eval", checkpoint],
    }[command]
    return [str(a) for a in argv]


@pytest.mark.parametrize("command, flag, what, name, target", list(_cases()))
def test_no_output_flag_writes_over_any_input(
    tmp_path, monkeypatch, capsys, base_path, command, flag, what, name, target
):
    """Every output flag of every command, pointed at any file the command reads (the store and its journals, the
    base, the checkpoint; by its name, a link or a relative path; for --figure, FIGURE.png or .svg), is refused
    in one line before any work, and every file in the folder keeps every byte."""
    inputs = {
        "store": tmp_path / "store.sqlite",
        "base": tmp_path / "base.safetensors",
        "checkpoint": tmp_path / "c.st",
    }
    inputs[what] = tmp_path / name
    with Store(inputs["store"]) as store:
        store.add(_run(0, 1))
    inputs["base"].write_bytes(base_path.read_bytes())
    inputs["checkpoint"].write_bytes(base_path.read_bytes())
    aimed = inputs[what]
    if target == "its -wal":
        aimed = Path(f"{aimed}-wal")
    elif target == "its -shm":
        aimed = Path(f"{aimed}-shm")
    elif target == "a hard link to it":
        aimed = tmp_path / "link.png"
        os.link(inputs[what], aimed)
    elif target == "a symlink to it":
        aimed = tmp_path / "sym.png"
        aimed.symlink_to(inputs[what])
    elif target == "a relative path to it":
        monkeypatch.chdir(tmp_path)
        aimed = Path("sub/..") / aimed.name
        (tmp_path / "sub").mkdir()
    given = aimed.with_suffix("") if flag == "--figure" else aimed
    before = _folder(inputs["store"])
    argv = _argv(command, tmp_path, inputs["store"], inputs["base"], inputs["checkpoint"])
    capsys.readouterr()
    assert main([*argv, flag, str(given)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert _folder(inputs["store"]) == before


@pytest.mark.parametrize("command", ["runs", "report", "eval", "sweep"])
def test_two_outputs_of_one_command_may_not_be_one_file(tmp_path, base_path, capsys, command):
    """`--json X --csv X` (or a JSON named like the figure's PNG) is refused before any work: one would be lost."""
    store, checkpoint = tmp_path / "s.sqlite", tmp_path / "c.st"
    checkpoint.write_bytes(base_path.read_bytes())
    out = tmp_path / "out.png"
    argv = {
        "runs": ["runs", "--store", store, "--json", out, "--csv", out],
        "report": ["report", "--store", store, "--json", out, "--figure", tmp_path / "out"],
        "eval": ["eval", checkpoint, "--json", out, "--figure", tmp_path / "out"],
        "sweep": ["sweep", "--mix", "add_2x2=1", "--seeds", "0", "--store", store, "--json", out, "--figure", out],
    }[command]
    assert main([str(a) for a in argv]) == 2
    assert "two outputs" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("figure", [".", "..", "/", "folder/", "~"])
def test_a_figure_named_like_a_folder_is_one_line(capsys, figure):
    """`--figure .` (a folder, no file name) is refused in one line, not a ValueError."""
    assert main(["report", "--figure", figure]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "folder" in err


def test_train_whose_store_fails_at_the_end_keeps_the_checkpoint_and_says_so(tmp_path, monkeypatch, capsys):
    """If the store cannot take the run once training is over (the disk filled meanwhile), `breadth train` still
    writes the checkpoint and prints the scores, then says in one line why the run was not recorded (exit 1)."""

    def full(self, stored):
        raise StoreError(f"{self.path}: cannot store the run: the disk is full")

    monkeypatch.setattr(Store, "add", full)
    out, store = tmp_path / "m.safetensors", tmp_path / "s.sqlite"
    argv = ["train", "--mix", "add_2x2=2", "--steps", "2", "--out", out, "--store", store]
    assert main([str(a) for a in argv]) == 1
    captured = capsys.readouterr()
    assert out.is_file() and "held-out" in captured.out
    assert captured.err.splitlines() == [
        f"not recorded in the results store: {store}: cannot store the run: the disk is full"
    ]
