"""Plain words on stage: every family's label reads without the README, its short label is its coordinates, and
the plate's old short labels (`2d`, `3d`) are still read wherever a person types a family."""

from __future__ import annotations

import re

import pytest

from breadth.core.results.grid import parse_budget, parse_share
from breadth.core.results.matrix import parse_environments
from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.environments.environment import REGISTERED, Environment, register
from breadth.core.world.environments.labels import brief, example, header, label, name_for
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.environments.registry import environment_named


def test_the_plate_families_say_what_their_sums_are():
    """`add_3x1` is three single digits (3+4+5), never `three-digit`, which an audience reads as 123+456."""
    assert label(REGISTERED["add_2x2"]) == "two-digit sums 23+45"
    assert label(REGISTERED["add_3x1"]) == "three single digits 3+4+5"
    assert label(REGISTERED["add_3x2"]) == "three two-digit numbers 23+45+67"
    assert not any("three-digit" in label(f) for f in REGISTERED.values())


def test_every_label_ends_with_an_example_made_from_the_family_coordinates():
    """The example in a label is a sum of that family (checked, not typed), and no two families share a label."""
    for family in REGISTERED.values():
        problem = example(family)
        assert family.contains(problem.operands) and problem.op == family.op
        assert label(family).endswith(" " + problem.prompt.removesuffix("="))
        assert len(problem.operands) == family.at.operands
    assert len({label(f) for f in REGISTERED.values()}) == len(REGISTERED)
    assert len({f.words for f in REGISTERED.values()}) == len(
        REGISTERED
    )  # words alone (a verdict's) tell them apart too
    made = Environment("probe_5x2", "p5x2", "five two-digit numbers", "", Coordinates(4, 2, "-"))
    assert made.contains(example(made).operands)  # a family not registered gets a valid example too


def test_short_labels_are_coordinates_for_every_family():
    """`a2x2` is two two-digit numbers added, `a3x1` three single digits: the plate's columns read like the grid's."""
    assert REGISTERED["add_2x2"].short == "a2x2" and REGISTERED["add_3x1"].short == "a3x1"
    for family in REGISTERED.values():
        at = family.at
        assert family.short == f"{at.operation.name[0]}{at.operands}x{at.digits}"
        assert re.fullmatch(r"[as][234]x[12]", family.short)


@pytest.mark.parametrize("old,name", [("2d", "add_2x2"), ("3D", "add_3x1"), ("a2x2", "add_2x2")])
def test_old_short_labels_still_name_the_plate_families(old, name):
    """A probe, a mix, a share, a budget and a curve written with `2d`/`3d` before still mean the same families."""
    family = environment_named(old)
    assert family is not None and family.name == name
    assert parse_environments(f"{old},add_3x2") == [name, "add_3x2"]
    assert Mix.parse(f"{old}=35") == Mix.of(**{name: 35}) == Mix.of(**{old: 35})


def test_old_short_labels_in_probes_mixes_shares_and_budgets():
    """`2d: 23+45` is a two-digit probe, `2d: 3+4+5` is refused naming the new short; `2d=35,3d=35` is the plate's
    mix; a share or budget between `2d` and `3d` is the one between the plate's families."""
    assert parse_sum("2d: 23+45").environment == "add_2x2"
    with pytest.raises(SumError, match="a2x2 takes 2 numbers, not 3"):
        parse_sum("2d: 3+4+5")
    assert Mix.parse("2d=35,3d=35") == Mix.of(add_2x2=35, add_3x1=35)
    assert parse_share("2d/3d=70:35") == parse_share("add_2x2/add_3x1=70:35")
    assert parse_budget("2d/3d=10") == parse_budget("add_2x2/add_3x1=10")
    with pytest.raises(MixError, match="'add_2x2' appears twice"):
        Mix.parse("2d=3,add_2x2=4")
    with pytest.raises(MixError, match="'add_2x2' appears twice"):
        Mix.of(**{"2d": 3, "add_2x2": 4})


def test_a_family_whose_short_or_alias_is_taken_is_refused():
    """A new family cannot be called by a name, short label or alias another family answers to."""
    with pytest.raises(ValueError, match="would share a name with 'add_2x2'"):
        register(Environment("twin", "t5x5", "twins", "", Coordinates(4, 2, "+"), aliases=("2d",)))
    with pytest.raises(ValueError, match="would share a name with 'add_3x1'"):
        register(Environment("trio", "a3x1", "trio", "", Coordinates(4, 2, "+")))
    assert "twin" not in REGISTERED and "trio" not in REGISTERED


def test_the_presets_are_named_in_the_families_plain_words():
    """The train form's presets and `breadth models` say `two-digit sums 70` and `three single digits 70`."""
    from breadth.core.storage.presets import PRESETS

    labels = [p.label for p in PRESETS.values()]
    assert labels == ["two-digit sums 70", "three single digits 70", "mix 35+35"]
    assert labels[0].startswith(REGISTERED["add_2x2"].words) and labels[1].startswith(REGISTERED["add_3x1"].words)


CODE = re.compile(r"\b[as][234]x[12]\b")  # a family's coordinate code


def test_every_family_has_brief_words_and_a_two_line_header_a_listener_reads():
    """`two-digit`, `3 singles`, `4 two-digit minus`: no code, no two alike; a column header of two lines of at most
    five characters (`add 3` over `0-9`), no two alike; with codes asked for, the short label."""
    briefs = {name: brief(f) for name, f in REGISTERED.items()}
    assert briefs["add_2x2"] == "two-digit" and briefs["add_3x1"] == "3 singles"
    assert briefs["sub_4x1"] == "4 singles minus" and briefs["add_3x2"] == "3 two-digit"
    assert len(set(briefs.values())) == len(REGISTERED) and not any(CODE.search(b) for b in briefs.values())
    headers = [header(f) for f in REGISTERED.values()]
    assert header(REGISTERED["add_3x1"]) == ("add 3", "0-9") and header(REGISTERED["sub_2x2"]) == ("sub 2", "10-99")
    assert len(set(headers)) == len(REGISTERED) and all(len(line) <= 5 for h in headers for line in h)
    assert all(name_for(f, codes=True) == f.short and name_for(f) == brief(f) for f in REGISTERED.values())


def test_the_environment_class_is_the_task_and_its_labels_are_functions_of_it():
    """No label, brief, header, name_for, column or example on `Environment`: they live in `labels`, which labels a
    generated environment too (its id, having no words short enough)."""
    from breadth.core.world.environments import labels
    from breadth.core.world.environments.registry import generated

    moved = ("label", "brief", "header", "name_for", "column", "example")
    assert not [n for n in moved if hasattr(Environment, n)] and all(callable(getattr(labels, n)) for n in moved)
    made = generated()["2a1s2"]
    assert (brief(made), header(made), labels.column(made, codes=True)) == ("2a1s2", ("", "2a1s2"), "2a1s2")


def test_a_mix_is_named_in_words_and_in_codes_where_asked():
    """The plate's models are `two-digit 70`, `3 singles 70` and `mix 35+35` (codes: `a2x2 70`...); a mix of many
    families keeps `N families T`; a spec that does not parse is shown as it is."""
    from breadth.core.storage.presets import PRESETS
    from breadth.core.world.environments.mix import spec_name

    assert [p.mix.words() for p in PRESETS.values()] == ["two-digit 70", "3 singles 70", "mix 35+35"]
    assert [p.mix.name_for(codes=True) for p in PRESETS.values()] == ["a2x2 70", "a3x1 70", "a2x2 35+a3x1 35"]
    assert spec_name("add_3x1=36,sub_2x2=36") == "3 singles 36+two-digit minus 36"
    assert spec_name("@all=10") == "10 envs 100" == spec_name("@all=10", codes=True)
    assert spec_name("nonsense=3") == "nonsense=3"
    for family in REGISTERED:
        assert not CODE.search(spec_name(f"{family}=20"))


def test_a_family_is_named_in_words_by_its_name_and_by_code_where_asked_and_an_environment_keeps_its_id():
    """`name_label`: `add_2x2` is `two-digit` (`a2x2` with codes), `sub_3x1` `3 singles minus` (`s3x1`); a generated
    environment's id (`2a1`) has no words and stays as it is (the reward key and the pooled matrix detail use it)."""
    from breadth.core.world.environments.environment import name_label

    assert [name_label(n) for n in ("add_2x2", "sub_3x1", "2a1")] == ["two-digit", "3 singles minus", "2a1"]
    assert [name_label(n, codes=True) for n in ("add_2x2", "sub_3x1", "2a1")] == ["a2x2", "s3x1", "2a1"]
