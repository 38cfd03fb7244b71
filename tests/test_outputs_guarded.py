"""No output of any command replaces the user's results store, an input, or a file of the installed package.

The cases are drawn from the command line's own parser: every subcommand, every flag of an output type
(`core.cli.path_flags.OUTPUTS`, and `--store` where the command adds runs to it), so a new command or output flag is
checked without touching this file. Each refusal comes before any work (`check_paths`), so each case runs
in-process in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from breadth.core.cli import path_flags as cli
from breadth.core.cli.main import main
from breadth.core.cli.parser import build_parser
from breadth.core.storage.paths import BASE, SHIPPED_RESULTS, installed_folders
from breadth.core.storage.store import Store

sys.path.insert(0, os.path.dirname(__file__))
from test_results_store import _run  # noqa: E402

ACTIONS = cli.command_actions(build_parser())
WRITTEN = (*cli.OUTPUTS, cli.store_written)
SIDES = ("", "-wal", "-shm", "-journal")  # the store and SQLite's files beside it
NAMINGS = ("--store", "BREADTH_STORE", "BREADTH_HOME")  # how the user's store is named: flag, variable, default


def _outputs() -> list[tuple[str, argparse.Action]]:
    return [(command, a) for command, actions in ACTIONS.items() for a in actions if a.type in WRITTEN]


def _flag(action: argparse.Action) -> str:
    return action.option_strings[0] if action.option_strings else action.dest


def _cases():
    for command, action in _outputs():
        flag = _flag(action)
        has_store = any(a.type in cli.STORES for a in ACTIONS[command])
        if action.type is not cli.store_written:
            for naming in NAMINGS if has_store else NAMINGS[1:]:
                for side in ("",) if action.type is cli.figure_file else SIDES:
                    if not (
                        action.type is cli.figure_file and naming == "BREADTH_HOME"
                    ):  # FIGURE.png is never runs.sqlite
                        yield command, flag, f"the store{side}", naming
        if any(a.type in cli.INPUTS for a in ACTIONS[command]):
            yield command, flag, "an input", None
            yield command, flag, "a hard link to an input", None
        for shipped in ("the shipped base", "the shipped results", "a new file in the package", "a source file"):
            yield command, flag, shipped, None


def _value(action: argparse.Action, checkpoint: Path, folder: Path) -> str:
    """A value a required argument parses with (the check comes before the command looks at it)."""
    if action.type in cli.INPUTS:
        return str(checkpoint)
    if action.type in WRITTEN:
        return str(folder / f"{action.dest}.out")
    return "two_digit=1"


def _argv(command: str, aimed: Path, flag: str, checkpoint: Path, folder: Path) -> list[str]:
    """The command with every required argument, every input flag naming `checkpoint`, and `flag` at `aimed`."""
    argv = [command]
    for action in ACTIONS[command]:
        if _flag(action) == flag or isinstance(action, argparse._HelpAction):
            continue
        if action.required or action.type in cli.INPUTS:
            value = _value(action, checkpoint, folder)
            argv += [value] if not action.option_strings else [action.option_strings[0], value]
    return [*argv, flag, str(aimed)]


def _state(path: Path) -> tuple[bytes, int] | None:
    return (path.read_bytes(), path.stat().st_mtime_ns) if path.exists() else None


def _installed() -> dict[Path, int]:
    """Every file of the installed package (compiled bytecode aside, which imports write) and its time."""
    files = (p for folder in installed_folders() for p in folder.rglob("*") if "__pycache__" not in p.parts)
    return {p: p.stat().st_mtime_ns for p in files if p.is_file()}


def test_the_cases_reach_every_command_that_writes_and_no_path_flag_is_unclassified():
    """The walk finds the output flags of every writing command, and every path flag of the parser is typed as
    an output, an input or a store (never the bare `_path`), so a new one cannot be missed by the check."""
    found = {command for command, _ in _outputs()}
    assert {"pretrain", "train", "rl", "eval", "envs", "curve", "plate", "sweep", "matrix", "runs", "report"} <= found
    assert not [f"{c} {_flag(a)}" for c, actions in ACTIONS.items() for a in actions if a.type is cli.typed_path]


@pytest.mark.parametrize("command, flag, target, naming", list(_cases()))
def test_no_output_replaces_the_store_an_input_or_the_installed_package(
    tmp_path, monkeypatch, capsys, private_home, command, flag, target, naming
):
    """Every output flag of every command, aimed at the user's results store or one of its journals (named by
    --store, BREADTH_STORE or the breadth folder's default), at an input (by name or a hard link), or at a file of
    the installed package (a shipped checkpoint or store, a new file beside them, the code), exits 2 with one line
    and leaves the target's bytes and time, and every file of the package, as they were."""
    action = next(a for a in ACTIONS[command] if _flag(a) == flag)
    figure = action.type is cli.figure_file
    suffix = ".png" if figure else ".sqlite"
    checkpoint = tmp_path / f"input{'.png' if figure else '.safetensors'}"
    checkpoint.write_bytes(BASE.read_bytes())
    store = {"--store": tmp_path / f"given{suffix}", "BREADTH_STORE": tmp_path / f"env{suffix}"}.get(naming)
    store = store or private_home / "runs.sqlite"
    if naming == "BREADTH_STORE":
        monkeypatch.setenv("BREADTH_STORE", str(store))
    with Store(store) as s:
        s.add(_run(0, 1))
    for side in SIDES[1:]:
        Path(f"{store}{side}").write_bytes(b"a journal")
    aimed = {
        "an input": checkpoint,
        "the shipped base": BASE,
        "the shipped results": SHIPPED_RESULTS,
        "a new file in the package": SHIPPED_RESULTS.parent / f"new{suffix}",
        "a source file": Path(cli.__file__),
    }.get(target)
    if target.startswith("the store"):
        aimed = Path(f"{store}{target.removeprefix('the store')}")
    elif target == "a hard link to an input":
        aimed = tmp_path / f"link{checkpoint.suffix}"
        os.link(checkpoint, aimed)
    if figure:  # FIGURE writes FIGURE.png (and .svg): beside a shipped file with no picture, a new one
        aimed = aimed.with_suffix(".png")
    argv = _argv(command, aimed.with_suffix("") if figure else aimed, flag, checkpoint, tmp_path)
    if naming == "--store":
        argv += ["--store", str(store)]
    before, installed = _state(aimed), _installed()
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    whys = ("your results store",) if target.startswith("the store") else ("input", "installed breadth package")
    assert aimed.name in err and any(why in err for why in whys), err  # refused for this reason, named
    assert _state(aimed) == before
    assert _installed() == installed


@pytest.mark.parametrize("command, flag", [(c, _flag(a)) for c, a in _outputs() if a.type in cli.OUTPUTS])
@pytest.mark.parametrize("folder", [".", "..", "/"])
def test_an_output_named_like_a_folder_is_one_line(tmp_path, monkeypatch, capsys, command, flag, folder):
    """Every output flag given `.`, `..` or `/` (a folder, not a file) is refused in one line, exit 2, before any
    work: never a traceback (train --out / raised a ValueError naming the snapshots beside it)."""
    monkeypatch.chdir(tmp_path)
    checkpoint = tmp_path / "input.safetensors"
    checkpoint.write_bytes(BASE.read_bytes())
    argv = _argv(command, Path(folder), flag, checkpoint, tmp_path)
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and ("directory" in err or "folder" in err), err
