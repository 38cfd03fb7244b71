"""The `breadth` command line: user errors are one stderr line with status 2; play, train and eval work."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.storage.header import read_header, read_metadata
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.text.vocab import CHARS

BREADTH = Path(sys.executable).parent / "breadth"


@pytest.fixture
def garbage(tmp_path) -> Path:
    """A file of garbage where a checkpoint should be."""
    path = tmp_path / "garbage.safetensors"
    path.write_bytes(b"not a checkpoint, just bytes \x00\xff" * 40)
    return path


def test_console_script_is_installed():
    """The venv has a `breadth` console script that runs breadth.core.cli.main's main."""
    assert BREADTH.is_file() and os.access(BREADTH, os.X_OK)
    assert "breadth.core.cli.main" in BREADTH.read_text()


def test_console_script_bad_sum_is_one_line(base_path, tmp_path):
    """`breadth play BASE abc` exits 2 with exactly one line on stderr, nothing on stdout and no traceback, before
    torch is imported (it took 15 s under load to refuse a typo)."""
    (tmp_path / "torch").mkdir()  # a torch ahead of the real one on the path: importing it ends the process
    (tmp_path / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    out = subprocess.run(
        [str(BREADTH), "play", str(base_path), "abc"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "40", "PYTHONPATH": str(tmp_path)},
    )  # a narrow terminal must not wrap the line
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr.startswith("error: bad sum:")
    assert out.stdout == ""


def _usage_error(capsys, argv: list[str]) -> str:
    """Run the CLI in-process, check it failed as a user error, and return its one stderr line."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code == USAGE_ERROR == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in captured.err
    assert captured.out == ""
    return lines[0]


def test_play_bad_sum(capsys, base_path):
    """`play BASE abc` is refused as a bad sum in one line."""
    assert "bad sum" in _usage_error(capsys, ["play", base_path, "abc"])


@pytest.mark.parametrize("text", ["", "2++3", "1+2+3+4+5", "1234+1", "3*4", "4-23", "3+4-1"])
def test_play_other_bad_sums(capsys, base_path, text):
    """Every kind of sum the playground cannot pose is refused in one line."""
    assert "bad sum" in _usage_error(capsys, ["play", base_path, text])


@pytest.mark.parametrize("command", [["play", "{ckpt}", "23+45"], ["eval", "{ckpt}"]])
def test_missing_checkpoint(capsys, tmp_path, command):
    """A checkpoint path that does not exist is reported in one line naming it."""
    path = tmp_path / "missing.safetensors"
    line = _usage_error(capsys, [str(a).replace("{ckpt}", str(path)) for a in command])
    assert str(path) in line and "no such checkpoint" in line


@pytest.mark.parametrize(
    "command",
    [
        ["play", "{ckpt}", "23+45"],
        ["eval", "{ckpt}"],
        ["train", "--mix", "add_2x2=8", "--base", "{ckpt}", "--out", "{out}"],
    ],
)
def test_corrupt_checkpoint(capsys, tmp_path, garbage, command):
    """A file of garbage given as a checkpoint or a base is reported in one line naming it."""
    out = tmp_path / "out.safetensors"
    line = _usage_error(capsys, [a.replace("{ckpt}", str(garbage)).replace("{out}", str(out)) for a in command])
    assert str(garbage) in line
    assert not out.exists()


@pytest.mark.parametrize(
    "mix",
    [
        "nope=70",
        "add_2x2=35,add_2x2=35",
        "add_2x2=500",
        "add_2x2=0",
        "",
        "add_2x2=\u00b2",
        "add_2x2",
    ],
)
def test_train_bad_mix(capsys, tmp_path, mix):
    """A bad --mix is refused in one line before anything is trained or written."""
    out = tmp_path / "X.safetensors"
    _usage_error(capsys, ["train", "--mix", mix, "--out", out])
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "{base}", "--held-out", "zero"],
        ["eval", "{base}", "--held-out", "0"],
        ["eval", "{base}", "--seed", "-1"],
        ["train", "--mix", "add_2x2=8", "--out", "{out}", "--lr", "0"],
        ["train", "--mix", "add_2x2=8", "--out", "{out}", "--dropout", "1"],
        ["train", "--mix", "add_2x2=8", "--out", "{out}", "--steps", "many"],
        ["train", "--mix", "add_2x2=8"],
        ["plate", "--seeds", ","],
        ["frobnicate"],
        [],
        ["play", "{base}"],
    ],
)
def test_bad_flags(capsys, tmp_path, base_path, argv):
    """A bad or missing flag, value or command is reported in one line with status 2."""
    out = tmp_path / "out.safetensors"
    _usage_error(capsys, [a.replace("{base}", str(base_path)).replace("{out}", str(out)) for a in argv])
    assert not out.exists()


def test_train_into_a_directory(capsys, tmp_path):
    """Asking train to write its checkpoint over a directory is refused in one line."""
    assert "directory" in _usage_error(capsys, ["train", "--mix", "add_2x2=8", "--out", tmp_path])


def test_eval_json_into_a_directory(capsys, tmp_path, base_path):
    """Asking eval to write its JSON over a directory is refused in one line, before evaluating."""
    assert "directory" in _usage_error(capsys, ["eval", base_path, "--held-out", "1", "--json", tmp_path])


def test_play_on_the_base(capsys, base_path):
    """`play BASE 23+45` exits 0, shows the episode from its prompt and ends with a verdict line."""
    assert main(["play", str(base_path), "23+45"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith("23+45=")
    verdicts = [line for line in captured.out.splitlines() if line.startswith("verdict: ")]
    assert len(verdicts) == 1
    assert re.fullmatch(r"verdict: (correct|wrong: [a-z' ]+)  \(true result 68; add_2x2\)", verdicts[0])


def test_play_outside_both_families(capsys, base_path):
    """A sum outside every family is played and labelled as such."""
    assert main(["play", str(base_path), "123+4"]) == 0
    assert "(true result 127; outside every environment)" in capsys.readouterr().out


@pytest.mark.slow
def test_train_then_eval(capsys, tmp_path, base_path):
    """`train --mix add_2x2=8 --steps 5` writes a checkpoint that `eval --json` scores per family."""
    ckpt, report = tmp_path / "ft.safetensors", tmp_path / "out.json"
    assert main(["train", "--mix", "add_2x2=8", "--steps", "5", "--out", str(ckpt)]) == 0
    assert f"wrote {ckpt}" in capsys.readouterr().out.replace("\n", "")
    run = read_metadata(ckpt)
    assert run.recipe == "finetune" and run.mix == "add_2x2=8" and run.seed == 0
    assert run.settings.steps == 5 and len(run.losses) == 5 and run.completed is True
    assert run.base == str(base_path)

    assert main(["eval", str(ckpt), "--held-out", "5", "--json", str(report)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    data = json.loads(report.read_text())
    assert data["seed"] == 0 and data["held_out"] == 5
    assert set(data["scores"]) == set(REGISTERED)  # every environment of the grid is scored
    for score in data["scores"].values():
        assert score["total"] == 5
        assert 0 <= score["solved"] <= 5
        assert sum(score["failures"].values()) == 5 - score["solved"]
    assert len(data["episodes"]) == 5 * len(REGISTERED)
    assert [e["family"] for e in data["episodes"]].count("add_3x1") == 5
    for e in data["episodes"]:
        text = "".join(t for _, t in e["segments"])
        assert text.startswith(e["prompt"]) and e["segments"][0] == ["prompt", e["prompt"]]
        assert e["solved"] == (e["failure"] is None)
    assert sum(e["solved"] for e in data["episodes"]) == sum(s["solved"] for s in data["scores"].values())


@pytest.mark.slow
def test_plate_runs_every_mix_and_seed_with_the_settings_given(capsys, tmp_path, base_path):
    """`breadth plate` fine-tunes the three presets per seed with the flags' settings and records each run."""
    out = tmp_path / "plate.json"
    argv = ["plate", "--seeds", "0,1", "--steps", "3", "--batch-size", "5", "--held-out", "4", "--json", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    assert data["settings"]["batch_size"] == 5 and data["settings"]["steps"] == 3
    runs = data["runs"]
    assert sorted((r["preset"], r["seed"]) for r in runs) == sorted(
        (p, s) for p in ("two_digit_70", "three_digit_70", "mix_35_35") for s in (0, 1)
    )
    for r in runs:
        assert r["settings"]["batch_size"] == 5 and r["settings"]["seed"] == r["seed"]
        assert r["steps_taken"] == 3
        assert {f: v["total"] for f, v in r["scores"].items()} == {name: 4 for name in REGISTERED}
    printed = capsys.readouterr().out
    assert "mix 35+35" in printed and "batch_size 5" in printed


def test_play_marks_who_wrote_each_segment_without_colour(capsys):
    """`breadth play` lists each segment under its writer, so the roles survive a pipe with no colour."""
    from breadth.core.storage.presets import PRESETS

    assert main(["play", str(PRESETS["mix_35_35"].shipped), "3+4+5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[1:] if line.startswith("  ")]
    assert [r[0] for r in rows][:3] == ["prompt", "model", "calculator"]
    assert rows[0][1] == "3+4+5=" and rows[1][1].startswith("B") and rows[2][1].endswith("|")
    assert "".join(r[1] for r in rows) == lines[0]


def test_pretrain_writes_to_the_users_folder_never_into_the_package(capsys, tmp_path, monkeypatch, base_path):
    """`breadth pretrain` with no --out writes under the user's breadth folder and leaves the shipped base alone."""
    monkeypatch.setenv("BREADTH_HOME", str(tmp_path / "home"))
    shipped = base_path.read_bytes()
    assert main(["pretrain", "--steps", "3"]) == 0
    written = tmp_path / "home" / "base.safetensors"
    assert f"wrote {written}" in capsys.readouterr().out.replace("\n", "")
    assert read_metadata(written).recipe == "pretrain" and read_metadata(written).settings.steps == 3
    assert base_path.read_bytes() == shipped
    out = tmp_path / "elsewhere.safetensors"
    assert main(["pretrain", "--steps", "2", "--out", str(out)]) == 0
    assert read_metadata(out).settings.steps == 2


def test_pretrain_makes_the_shape_it_is_given_and_refuses_one_that_cannot_hold_an_episode(capsys, tmp_path):
    """`pretrain --position rope --layers 1 --heads 2 --width 16` writes that model; a short context is one line."""
    out = tmp_path / "rope.safetensors"
    argv = ["pretrain", "--steps", "2", "--position", "rope", "--layers", "1", "--heads", "2", "--width", "16"]
    assert main([*argv, "--lr", "1e-3", "--batch-size", "4", "--warmup", "1", "--out", str(out)]) == 0
    header = read_header(out)
    assert header.model | {"dropout": 0} == {
        "vocab_size": len(CHARS),
        "block_size": 64,
        "n_layer": 1,
        "n_head": 2,
        "n_embd": 16,
        "position": "rope",
        "dropout": 0,
    }
    assert "wpe.weight" not in header.tensors  # rotary positions have no table
    assert (header.run.settings.lr, header.run.settings.batch_size) == (1e-3, 4)
    capsys.readouterr()
    assert "context must be from 64" in _usage_error(capsys, ["pretrain", "--context", "20", "--out", tmp_path / "c"])
    assert "not a multiple" in _usage_error(capsys, ["pretrain", "--width", "97", "--out", tmp_path / "w"])
    assert "layers must be a whole" in _usage_error(capsys, ["pretrain", "--layers", "x", "--out", tmp_path / "l"])
    assert not (tmp_path / "c").exists() and not (tmp_path / "w").exists()


def test_path_flags_expand_the_home_folder_and_refuse_an_unknown_user(capsys, tmp_path, monkeypatch):
    """`--out ~/b` writes in the home folder, never a literal `~` folder here; `~nosuchuser/b` is one line."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["pretrain", "--steps", "1", "--out", "~/b.safetensors"]) == 0
    assert (tmp_path / "home" / "b.safetensors").is_file() and not (tmp_path / "~").exists()
    capsys.readouterr()
    line = _usage_error(capsys, ["pretrain", "--steps", "1", "--out", "~nosuchuser-breadth/b.safetensors"])
    assert "no such user" in line and not list(tmp_path.glob("~*"))
