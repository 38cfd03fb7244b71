"""Environments by versioned id: found, refused in one line when unknown or of a removed version, filtered by
coordinates, drawn by seed, and listed by `breadth envs` as a table and as JSON."""

from __future__ import annotations

import json

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.registry import EnvError, draw, env_id, environment, environments, where


def test_every_environment_has_a_versioned_id_that_finds_it():
    """`breadth/add-2x2-v1` is the plate's two-digit family; every id round-trips, with or without the namespace."""
    assert env_id(REGISTERED["add_2x2"]) == "breadth/add-2x2-v1"
    assert env_id(REGISTERED["add_3x2"]) == "breadth/add-3x2-v1"
    for family in environments():
        assert environment(env_id(family)) is family
        assert environment(env_id(family).removeprefix("breadth/").upper()) is family
    assert len({env_id(f) for f in environments()}) == len(environments())


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "breadth/add-2x2-v0",
            "breadth/add-2x2-v0 does not exist (removed or never made); use breadth/add-2x2-v1",
        ),
        ("breadth/add-2x2-v2", "use breadth/add-2x2-v1"),
        ("breadth/five-digit-v1", "no environment breadth/five-digit"),
        ("add_2x2", "is not an environment id"),
        ("\x1b[2Jx-v1", "is not an environment id"),
    ],
)
def test_an_unknown_id_or_a_removed_version_is_one_line(text, says):
    """Each refusal names what was asked and what exists, on one line."""
    with pytest.raises(EnvError) as e:
        environment(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_where_filters_by_coordinates_and_refuses_what_no_environment_has():
    """Coordinates pick environments in registry order; none there, or an unknown dimension, is one line."""
    assert [f.name for f in where(operands="2", op="add", form="infix")] == ["add_2x2", "add_2x1", "1a2", "2a1"]
    by_position = where(operands="3", digits="2.1.2", op="add.sub")
    assert [f.name for f in by_position] == ["2a1s2"]  # mixed operations: the plate's form only
    with pytest.raises(EnvError, match="no environment at operands=5"):
        where(operands="5")
    with pytest.raises(EnvError, match="no dimension 'colour'"):
        where(colour="red")


def test_a_draw_is_seeded_distinct_and_bounded_by_the_pool():
    """The same seed draws the same environments; another seed others; more than the pool is one line."""
    a, b = draw(5, seed=3), draw(5, seed=3)
    assert a == b and len(set(map(env_id, a))) == 5
    assert any(draw(5, seed=s) != a for s in range(4, 10))
    with pytest.raises(EnvError, match=f"cannot draw {len(environments()) + 1} environments"):
        draw(len(environments()) + 1, seed=0)


def test_breadth_envs_lists_filters_draws_and_writes_json(tmp_path, capsys):
    """The table names every id; --where and --draw narrow it; --json holds each id, coordinates and an example."""
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    assert all(env_id(f) in out for f in environments()) and f"{len(environments())} of" in out
    path = tmp_path / "envs.json"
    assert main(["envs", "--where", "op=sub", "--draw", "2", "--seed", "1", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert len(rows) == 2 and all(r["coordinates"]["op"] == "sub" for r in rows)
    assert all(environment(r["id"]).name == r["name"] and "|" in r["example"] for r in rows)


@pytest.mark.parametrize(
    "argv",
    [["envs", "--where", "operands=5"], ["envs", "--where", "operands"], ["envs", "--draw", "999"]],
)
def test_breadth_envs_bad_input_is_one_line(argv, capsys):
    """Coordinates with no environment, a malformed condition, a draw larger than the pool: one line, exit 2."""
    assert main(argv) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err


def test_a_users_own_environment_is_a_few_lines_and_joins_everything(monkeypatch, capsys):
    """As the README shows: one Environment at its coordinates and one `register`; it gets an id, `breadth envs` lists
    it, a mix trains on it and its demonstrations are valid, evaluation can score it."""
    from breadth.core.world.arithmetic.coordinates import Coordinates
    from breadth.core.world.environments.environment import Environment, register
    from breadth.core.world.environments.mix import Mix

    monkeypatch.setattr("breadth.core.world.environments.environment.REGISTERED", dict(REGISTERED))
    monkeypatch.setattr(
        "breadth.core.world.environments.registry.REGISTERED",
        __import__("breadth").core.world.environments.environment.REGISTERED,
    )
    mine = register(
        Environment("mine", "mine", "my sums", "a two-digit number minus a one-digit one", Coordinates(2, (2, 1), "-"))
    )
    assert environment("breadth/mine-v1") is mine
    assert main(["envs", "--where", "digits=2.1", "--where", "op=sub"]) == 0
    assert "breadth/mine-v1" in capsys.readouterr().out
    mix = Mix.parse("mine=20")
    demos = mix.demonstrations(0)
    assert len(demos) == 20
    assert all(p.environment == "mine" and p.answer == p.operands[0] - p.operands[1] for p in demos)


def test_a_dimension_named_twice_in_where_is_one_line(tmp_path, capsys):
    """`breadth envs --where operands=3 --where operands=2` listed operands=2 alone, silently; now it is one line
    naming both values, exit 2, and so is the same value twice."""
    assert main(["envs", "--where", "operands=3", "--where", " operands = 2"]) == USAGE_ERROR
    assert capsys.readouterr().err.strip() == (
        "error: --where names 'operands' twice (operands=3 and operands=2); give each dimension once"
    )
    assert main(["envs", "--where", "op=sub", "--where", "op=sub", "--json", str(tmp_path / "e.json")]) == USAGE_ERROR
    assert "names 'op' twice (op=sub and op=sub)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command", [["eval", "two_digit_70"], ["curve", "--store", "{tmp}/s.sqlite"]], ids=lambda c: c[0]
)
def test_every_command_taking_where_refuses_a_dimension_named_twice(command, tmp_path, capsys):
    """`eval` and `curve` refuse a repeated dimension the same way, before any work, writing nothing (the last value
    here names no environment, so code that kept the last would say that instead)."""
    argv = [a.format(tmp=tmp_path) for a in command]
    assert main([*argv, "--where", "operands=2", "--where", "operands=9"]) == USAGE_ERROR
    assert capsys.readouterr().err.strip() == (
        "error: --where names 'operands' twice (operands=2 and operands=9); give each dimension once"
    )
    assert list(tmp_path.iterdir()) == []
