"""The shipped models are named anywhere a checkpoint is asked for, from any folder; `breadth models` lists them."""

from __future__ import annotations

import shutil

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.storage.paths import BASE, shipped_checkpoint
from breadth.core.storage.presets import SHIPPED, UnknownCheckpoint, checkpoint_path


@pytest.mark.parametrize("name", ["two_digit_70", "Two-Digit-70", "mix_35_35.safetensors", "base"])
def test_a_shipped_models_name_is_its_installed_file_from_any_folder(name, tmp_path, monkeypatch):
    """Any case, `-` for `_`, with or without the suffix: the installed checkpoint, whatever the working folder."""
    monkeypatch.chdir(tmp_path)
    key = name.lower().replace("-", "_").removesuffix(".safetensors")
    assert checkpoint_path(name) == shipped_checkpoint(key) and checkpoint_path(name).is_file()


def test_a_file_in_the_folder_comes_before_a_shipped_name(tmp_path, monkeypatch):
    """A typed path is a path first: a file called `base` in the folder is that file, not the shipped base."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(BASE, tmp_path / "base")
    assert checkpoint_path("base").resolve() == (tmp_path / "base").resolve()


def test_a_name_that_is_neither_is_one_line_listing_the_shipped_names(tmp_path, monkeypatch, capsys):
    """`breadth play nope 1+2` and `breadth eval two_digit_71`: one line naming every shipped model, exit 2."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownCheckpoint):
        checkpoint_path("two_digit_71")
    for argv in (
        ["play", "nope", "1+2"],
        ["eval", "two_digit_71"],
        ["train", "--mix", "two_digit=4", "--out", "o", "--base", "bsae"],
    ):
        assert main(argv) == USAGE_ERROR
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and all(name in err for name in SHIPPED), err
    assert not (tmp_path / "o").exists()


def test_play_by_name_from_another_folder(tmp_path, monkeypatch, capsys):
    """`breadth play two_digit_70 23+45`, as the README writes it, from a folder with no checkpoints in it."""
    monkeypatch.chdir(tmp_path)
    assert main(["play", "two_digit_70", "23+45"]) == 0
    assert "verdict: correct" in capsys.readouterr().out


def test_models_lists_every_shipped_model_and_fits_80_columns(capsys, monkeypatch):
    """`breadth models` names each shipped model with what it was trained on; at 80 columns no cell is cut."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in SHIPPED) and "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "single-digit worksheets" in out and "100%" in out


def test_the_apps_load_box_takes_a_shipped_name_too(tmp_path, monkeypatch):
    """Ctrl+O's prompt resolves `two_digit_70` to the installed checkpoint, and refuses a wrong name in one line."""
    from breadth.tui.screens.checkpoint_prompts import LoadPrompt

    monkeypatch.chdir(tmp_path)
    prompt = LoadPrompt()
    assert prompt.resolve("two_digit_70").path == str(shipped_checkpoint("two_digit_70"))
    with pytest.raises(UnknownCheckpoint, match="no shipped model of that name"):
        prompt.resolve("two_digit_07")
