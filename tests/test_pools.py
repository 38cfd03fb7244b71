"""Pools of environments, and the environments with a three-digit number that only a named pool holds: the grid and
every command's default pool stay as they were (a stored curve keeps its splits), the new environments fit the
calculator and the context, answer to their ids (Gymnasium's too) and are chosen by `--pool` in every command
that takes `--where`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.sweeps import sweep
from breadth.core.world.arithmetic.calculator import MAX_OPERAND_DIGITS
from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.environments.pools import POOLS, WIDE, pool
from breadth.core.world.environments.registry import (
    EnvError,
    env_id,
    environment,
    environments,
    every_environment,
    three_digit,
    where,
)
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

RESULTS = Path(__file__).resolve().parent.parent / "results"


def test_the_grid_and_its_where_pools_are_unchanged_by_the_three_digit_environments():
    """The default pool is the grid's 183 (the ten named, then 173 generated), and `--where operands=3` still names the
    40 the shipped three-number curve split: a curve run again draws the same splits."""
    assert len(environments()) == 183 and pool("grid") == environments()
    assert len(where(operands="3")) == 40 and len(where(operands="2")) == 12
    assert not {f.name for f in environments()} & set(three_digit())
    assert all(3 not in f.at.layout for f in environments())


def test_three_digit_environments_fit_the_calculator_and_the_context():
    """55 environments of two or three numbers with a three-digit number; each one's every demonstration fits the
    context, and every call's numbers are ones the calculator reads (at most 3 digits): a three-number sum whose
    first call can reach 1008 (`3a1a1`: 999+9) is left out, one whose first call stays within 999 is kept."""
    made = three_digit()
    assert len(made) == 55 and {f.at.operands for f in made.values()} == {2, 3}
    assert all(3 in f.at.layout for f in made.values())
    assert "3a1a1" not in made and not Coordinates(3, (3, 1, 1), "++").fits_calculator()
    assert "3s1a1" in made and Coordinates(3, (3, 1, 1), "-+").fits_calculator()
    for env in made.values():
        assert env.at.longest_episode() <= MAX_LENGTH
        for p in env.demonstrations(0, 20) + env.held_out(0, 20) + env.validation(0, 20):
            assert env.at.contains(p.operands) and len(p.demonstration().text) + 1 <= MAX_LENGTH
            for call in p.demonstration().text.split("B")[1:]:  # `595-8|587|`: the call, then its result
                numbers = re.findall(r"[0-9]+", call.split("|")[0])
                assert len(numbers) == 2 and all(len(x) <= MAX_OPERAND_DIGITS for x in numbers), call


def test_a_three_digit_environment_answers_to_its_id_and_lies_in_every_pool_but_the_grid():
    """`breadth/3s1s2-v1` is `987-6-54`'s environment: found by id, in `all`, never in the grid."""
    env = environment("breadth/3s1s2-v1")
    assert env.name == "3s1s2" and env.at.layout == (3, 1, 2) and env.at.op == "-"
    assert env.demonstrations(0, 1)[0].demonstration().text == "595-8-81=B595-8|587|B587-81|506|506|"
    assert env in pool("all") and env not in pool("grid")
    assert len(pool("all")) == 183 + 55 == len(every_environment())
    assert len({env_id(f) for f in pool("all")}) == 238


def test_an_unknown_pool_is_one_line():
    """A pool no one made is refused naming the pools; on the command line, exit 2 before anything runs."""
    with pytest.raises(EnvError, match="no pool 'nope'; the pools are grid, wide, all"):
        pool("nope")
    assert "grid" in POOLS


@pytest.mark.parametrize("command", [["envs"], ["eval", "mix_35_35"], ["curve"], ["transfer", "--hold", "op=sub"]])
def test_every_command_taking_where_refuses_an_unknown_pool(command, capsys):
    """`--pool nope` is one line and exit 2 in every command that chooses environments."""
    assert main([*command, "--pool", "nope"]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert "--pool" in err and "nope" in err and len(err.splitlines()) == 1


def test_breadth_envs_lists_a_pool_filtered_and_as_json(tmp_path, capsys):
    """`breadth envs --pool all --where digits=3.1.1` lists the three three-number sums that start with a three-digit
    number and add or subtract single digits; the default lists the grid alone, as before."""
    out = tmp_path / "envs.json"
    assert main(["envs", "--pool", "all", "--where", "digits=3.1.1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 of 238 environments in the all pool" in text
    ids = [e["id"] for e in json.loads(out.read_text())]
    assert ids == ["breadth/3s1a1-v1", "breadth/3s1s1-v1", "breadth/3s1s1-postfix-v1"]
    assert main(["envs", "--where", "digits=3.1.1"]) == USAGE_ERROR  # the grid has none
    assert "no environment at digits=3.1.1" in capsys.readouterr().err


def test_a_curve_on_a_pool_plans_over_that_pool_and_says_so(tmp_path, monkeypatch, capsys):
    """`breadth curve --pool all --where operands=2` splits the 28 two-number environments (the grid's 12 and 16 with a
    three-digit number) and its header and table name the pool; without --pool, the grid's 12, said as before."""
    monkeypatch.setattr(sweep, "_run_job", lambda: _fake_job)
    argv = ["curve", "--where", "operands=2", "--n", "1", "--splits", "1", "--seeds", "0", "--workers", "1"]
    assert main([*argv, "--store", str(tmp_path / "all.sqlite"), "--pool", "all"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "runs: 28 environments (the all pool: operands=2)" in out
    assert "the breadth curve: the all pool: operands=2" in out
    assert main([*argv, "--store", str(tmp_path / "grid.sqlite")]) == 0
    assert "runs: 12 environments (operands=2)" in " ".join(capsys.readouterr().out.split())


def _fake_job(spec: dict) -> dict:
    """Stands in for a worker's run: every environment it is scored on solved 80 of 100."""
    settings = FinetuneSettings.from_dict(spec["settings"])
    scores = {name: HeldOutScore(name, 80, 100, {}) for name in spec["families"]}
    record = RunMeta("finetune", settings, spec["mix"], settings.seed, spec["held_out"], scores, (1.0,), 1.0)
    return {"record": record.to_dict(), "versions": {}}


def test_the_wide_pool_holds_128_environments_each_learned_alone():
    """The wide pool (issue 34): at least 128 environments, each named once, in registry order, from the grid and from
    the three-digit ones, with two, three and four numbers and both call forms; every name is an environment's."""
    wide = pool("wide")
    names = [f.name for f in wide]
    assert len(wide) >= 128 and len(set(names)) == len(names) == len(WIDE)
    assert names == [f.name for f in every_environment() if f.name in set(names)]
    assert set(names) & set(three_digit()) and set(names) & {f.name for f in environments()}
    assert {f.at.operands for f in wide} == {2, 3, 4} and {f.at.form for f in wide} == {"infix", "postfix"}


def test_breadth_envs_lists_the_wide_pool(capsys):
    """`breadth envs --pool wide` lists the whole pool under its name; `--where` narrows it."""
    assert main(["envs", "--pool", "wide", "--where", "operands=2"]) == 0
    title = capsys.readouterr().out.strip().splitlines()[0]
    two = [f for f in pool("wide") if f.at.operands == 2]
    assert title.startswith(f"{len(two)} of {len(WIDE)} environments in the wide pool")


def test_the_wide_pool_is_what_the_committed_screen_passed():
    """`WIDE` is exactly the environments the screen's committed results pass by its own rule (WIDE_BAR of the
    validation sums over seeds 100 and 101), grid then three-digit: a name added or dropped by hand fails here."""
    from bench.pool_screen import chosen, passing

    found = []
    for envs, file in (
        ("grid", "pool-screen-grid-2seeds-30.json"),
        ("three-digit", "pool-screen-three-digit-2seeds-30.json"),
    ):
        screen = json.loads((RESULTS / file).read_text())
        assert screen["settings"] == {"steps": 1000, "demos": 30, "sums": 30, "group": 16, "workers": 2}
        assert set(screen["runs"]) == {"100", "101"} and all(
            len(r) == len(chosen(envs)) for r in screen["runs"].values()
        )
        found += passing(chosen(envs), [100, 101], screen["runs"])
    assert tuple(found) == WIDE
