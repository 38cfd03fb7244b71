"""Every list flag of every command (comma-separated values, a repeatable flag, a pair) refuses a value given twice:
one line naming it, exit 2, before anything is stored or trained. A repeated seed trained one run and counted it as
two pairs; the flags are found in the parser, so a list flag added later must be given a case here."""

from __future__ import annotations

import argparse
import re

import pytest

from breadth.core.cli import grids
from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.cli.parser import build_parser
from breadth.core.world.runs.recipes import mix_recipes
from breadth.core.world.runs.settings import swept

LISTED = re.compile(r"\w,\w|,\.\.\.|comma-separated")  # how a flag's help or metavar shows that it takes a list
MIX = "two_digit=35"
NOT_HERE = {"--where"}  # a coordinate repeated along one dimension: refused by the environments' own check


def _list_flags() -> list[tuple[str, str]]:
    """(command, flag) for every flag that takes a list: its help or metavar shows one, it is repeatable, or it
    takes several values."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    out = []
    for name, command in commands.items():
        for action in command._actions:
            flag = action.option_strings[-1] if action.option_strings else None
            if flag is None or action.nargs == 0 or flag in NOT_HERE:
                continue
            shows = f"{action.help} {action.metavar} {action.default}"
            if isinstance(action, argparse._AppendAction) or action.nargs is not None or LISTED.search(shows):
                out.append((name, flag))
    return out


def _setting_cases() -> dict[tuple[str, str], list[str]]:
    """`sweep --FLAG v,v` for every setting a sweep varies, under a recipe that has it."""
    out = {}
    for made_by in mix_recipes():
        for s in swept(made_by.settings):
            v = s.show(s.default)
            out.setdefault(
                ("sweep", f"--{s.flag}"), ["--mix", MIX, "--recipe", made_by.name, f"--{s.flag}", f"{v},{v}"]
            )
    return out


CASES: dict[tuple[str, str], list[str]] = {
    ("train", "--mix"): ["--mix", "two_digit=35,two_digit=35", "--out", "OUT"],
    ("rl", "--mix"): ["--mix", "three_digit=100,three_digit=100", "--out", "OUT"],
    ("eval", "--envs"): ["base", "--envs", "breadth/two-digit-v1,breadth/two-digit-v1"],
    ("curve", "--n"): ["--where", "operands=3", "--n", "1,2,1"],
    ("curve", "--seeds"): ["--where", "operands=3", "--seeds", "0,0"],
    ("curve", "--hold"): ["--where", "operands=3", "--hold", "form=postfix", "--hold", "form=postfix"],
    ("curve", "--vary"): ["--where", "operands=3", "--hold", "form=postfix", "--vary", "op", "--vary", "op"],
    ("plate", "--seeds"): ["--seeds", "0-2,1"],
    ("transfer", "--hold"): ["--where", "operands=3", "--hold", "form=postfix", "--hold", "form=postfix"],
    ("transfer", "--vary"): ["--where", "operands=3", "--hold", "form=postfix", "--vary", "op", "--vary", "op"],
    ("transfer", "--seeds"): ["--where", "operands=3", "--hold", "form=postfix", "--seeds", "0,0"],
    ("sweep", "--mix"): ["--mix", MIX, "--mix", MIX],
    ("sweep", "--budget"): ["--budget", "two_digit/three_digit=10,20,10"],
    ("sweep", "--seeds"): ["--mix", MIX, "--seeds", "0,0"],
    ("matrix", "--mix"): ["--mix", MIX, "--mix", MIX],
    ("matrix", "--curve"): ["--mix", MIX, "--curve", "a3x2,a3x2"],
    ("matrix", "--seeds"): ["--mix", MIX, "--seeds", "0,0"],
    ("runs", "--mix"): ["--mix", MIX, "--mix", MIX],
    ("runs", "--seeds"): ["--seeds", "0,0"],
    ("report", "--mix"): ["--mix", MIX, "--mix", MIX],
    ("report", "--seeds"): ["--seeds", "0,0"],
    ("report", "--compare"): ["--compare", "1", "1"],
    **_setting_cases(),
}


def test_every_list_flag_the_parser_holds_has_a_case():
    """A list flag added to the parser without a case here fails, so its repeats are checked too."""
    assert sorted(_list_flags()) == sorted(CASES)


def _no_runs(*args, **kwargs):
    raise AssertionError("runs were started")


@pytest.mark.parametrize(("command", "flag"), sorted(CASES))
def test_a_value_given_twice_is_one_line_and_nothing_runs(command, flag, tmp_path, private_home, monkeypatch, capsys):
    """The flag given one value twice: exit 2, one line saying it appears twice, and no store or checkpoint made."""
    monkeypatch.setattr(grids, "run_with_progress", _no_runs)  # a repeat let through must not train here
    argv = [command, *(str(tmp_path / "out.safetensors") if a == "OUT" else a for a in CASES[command, flag])]
    assert main(argv) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert "twice" in err and "\n" not in err, err
    assert not [p for p in (*private_home.rglob("*"), *tmp_path.rglob("*")) if p.is_file()]
