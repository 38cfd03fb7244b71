"""The variables that say where breadth's files are (BREADTH_HOME, BREADTH_RUNS, BREADTH_STORE) against odd values,
and the installed package against every writer: an odd value is one line before anything runs, never a traceback
and never a file in an unexpected place; nothing is ever written inside the installed package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from breadth.core.cli.main import main
from breadth.core.storage.files import UserFileError, write_atomic
from breadth.core.storage.paths import BASE, SHIPPED_RESULTS, installed_folders
from breadth.core.storage.store import Store, StoreError

FOLDERS = ("BREADTH_HOME", "BREADTH_RUNS")


def _odd_values(tmp_path: Path) -> dict[str, str]:
    """Each kind of odd value, as a variable would hold it."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return {
        "blank": "   ",
        "relative": "breadth-here",
        "not UTF-8": os.fsdecode(b"/tmp/caf\xe9"),  # a byte that is not UTF-8, as Python reads it from the system
        "a file": str(a_file),
        "inside the package": str(BASE.parent),
        "a folder": str(tmp_path),
    }


def _cases():
    for name in (*FOLDERS, "BREADTH_STORE"):
        for kind in ("blank", "relative", "not UTF-8"):
            yield name, kind
        yield name, "a file" if name in FOLDERS else "a folder"
        if name in FOLDERS:
            yield name, "inside the package"


def _listing(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.parametrize("name, kind", list(_cases()))
def test_an_odd_location_is_one_line_from_the_command_line_and_the_app(tmp_path, monkeypatch, capsys, name, kind):
    """BREADTH_HOME, BREADTH_RUNS or BREADTH_STORE blank, relative, not UTF-8, a file where a folder is meant (or a
    folder where the store's file is), or inside the installed package: `breadth` and `breadth-tui` each say so in
    one line naming the variable and exit 2, before anything runs; no file appears in the current folder or the
    package."""
    from breadth.tui.__main__ import main as app_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, _odd_values(tmp_path)[kind])
    before, installed = _listing(tmp_path), {p for folder in installed_folders() for p in _listing(folder)}
    capsys.readouterr()
    assert main(["runs"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and name in err, err
    with pytest.raises(SystemExit) as ended:
        app_main([])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and len(err.splitlines()) == 1 and name in err, err
    assert _listing(tmp_path) == before
    assert {p for folder in installed_folders() for p in _listing(folder)} == installed


def test_pretrain_with_the_breadth_folder_inside_the_package_never_replaces_the_shipped_base(
    monkeypatch, capsys, base_path
):
    """BREADTH_HOME naming the shipped checkpoints' folder: `breadth pretrain` (whose default output is the
    breadth folder's base.safetensors, the shipped base's name) is refused in one line, the base untouched."""
    monkeypatch.setenv("BREADTH_HOME", str(base_path.parent))
    before = (base_path.read_bytes(), base_path.stat().st_mtime_ns)
    assert main(["pretrain", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "installed breadth package" in err
    assert (base_path.read_bytes(), base_path.stat().st_mtime_ns) == before


def test_a_store_inside_the_package_is_read_but_never_written(tmp_path, monkeypatch, capsys):
    """BREADTH_STORE naming the shipped results: `breadth runs` lists them (reading is fine), while a command
    that adds runs (`sweep`) is refused in one line before any run, and the shipped store keeps every byte."""
    monkeypatch.setenv("BREADTH_STORE", str(SHIPPED_RESULTS))
    before = (SHIPPED_RESULTS.read_bytes(), SHIPPED_RESULTS.stat().st_mtime_ns)
    assert main(["runs"]) == 0
    capsys.readouterr()
    assert main(["sweep", "--mix", "two_digit=1", "--steps", "1", "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "installed breadth package" in err
    assert (SHIPPED_RESULTS.read_bytes(), SHIPPED_RESULTS.stat().st_mtime_ns) == before


@pytest.mark.parametrize("command", [["pretrain", "--steps", "1"], ["sweep", "--plate", "--seeds", "0"]])
def test_a_breadth_folder_that_cannot_be_made_is_one_line(tmp_path, monkeypatch, capsys, command):
    """BREADTH_HOME under a regular file (a folder that cannot be made): a command writing there (pretrain's
    default output, the default store) says so in one line, exit 2, before any training."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BREADTH_HOME", str(blocker / "breadth"))
    assert main(command) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "a-file" in err, err
    assert blocker.read_text() == "not a folder"


def test_the_one_writer_and_the_store_refuse_the_installed_package_by_any_name(tmp_path):
    """Whatever calls them (the app, the engine, the command line): the atomic writer refuses a file inside the
    installed package, and a store opened to add runs refuses a shipped store, by its name, through `..`, a
    symlink or a hard link; the shipped store still opens to be read."""
    before = (SHIPPED_RESULTS.read_bytes(), SHIPPED_RESULTS.stat().st_mtime_ns)
    symlink, hard_link = tmp_path / "sym.sqlite", tmp_path / "hard.sqlite"
    symlink.symlink_to(SHIPPED_RESULTS)
    os.link(SHIPPED_RESULTS, hard_link)
    dotted = SHIPPED_RESULTS.parent / ".." / SHIPPED_RESULTS.parent.name / SHIPPED_RESULTS.name
    for path in (SHIPPED_RESULTS, dotted, symlink, hard_link):
        with pytest.raises(StoreError, match="installed breadth package"):
            Store(path)
    with pytest.raises(UserFileError, match="installed breadth package"):
        write_atomic(SHIPPED_RESULTS.parent / "new.json", b"{}")
    with pytest.raises(UserFileError, match="installed breadth package"):
        write_atomic(hard_link, b"{}")
    with Store(SHIPPED_RESULTS, read_only=True) as store:
        assert store.runs()
    assert (SHIPPED_RESULTS.read_bytes(), SHIPPED_RESULTS.stat().st_mtime_ns) == before
    assert not (SHIPPED_RESULTS.parent / "new.json").exists()
