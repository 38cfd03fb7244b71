"""Environments, mixes and typed sums: the plate's two environments, reproducible, held-out sums never leaked."""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest

from breadth.core.storage.presets import PRESETS
from breadth.core.world.arithmetic.calculator import SYNTAX
from breadth.core.world.arithmetic.coordinates import DIMENSIONS, Coordinates
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import (
    DEMO_POOL,
    REGISTERED,
    SAMPLED_ALL,
    Environment,
    dimension_values,
    environment_of,
    register,
)
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.text.vocab import ERROR


def test_registry_refuses_a_duplicate_name_or_coordinates():
    """Registering a second family under an existing name, or at taken coordinates, raises and keeps the original."""
    original = dict(REGISTERED)
    with pytest.raises(ValueError, match="add_2x2"):
        register(Environment("add_2x2", "2d", "two-digit", "an impostor", Coordinates(4, 2, "-")))
    with pytest.raises(ValueError, match="same coordinates"):
        register(Environment("twin", "tw", "twin", "the plate's two-digit family again", Coordinates(2, 2, "+")))
    assert REGISTERED == original
    assert REGISTERED["add_2x2"] is original["add_2x2"]


def test_the_grid_holds_the_plates_families_first_and_varies_along_three_dimensions():
    """The plate's two families come first; at least 8 families vary along operands, digits and operation."""
    assert list(REGISTERED)[:2] == ["add_2x2", "add_3x1"]
    assert REGISTERED["add_2x2"].at == Coordinates(2, 2, "+") and REGISTERED["add_3x1"].at == Coordinates(3, 1, "+")
    assert len(REGISTERED) >= 8
    for dimension in DIMENSIONS:
        assert len(dimension_values(dimension)) >= 2, dimension
    assert dimension_values("operands") == ["2", "3", "4"] and dimension_values("op") == ["add", "sub"]
    registered = list(REGISTERED.values())
    assert [e.name for e in where(registered, operands="2")] == ["add_2x2", "add_2x1", "sub_2x2"]
    assert {e.name for e in where(registered, op="sub", digits="1")} == {"sub_3x1", "sub_4x1"}
    with pytest.raises(ValueError, match="dimension"):
        where(registered, colour="blue")


def test_the_plates_families_keep_their_demonstrations_and_held_out_sums():
    """add_2x2 and add_3x1 give the same demonstrations and held-out sums as before the grid (pinned hashes
    of seeds 0, 1 and 7, recorded from the two-family registry), so the plate's results still apply. The held-out
    sums are the test split followed by the validation split: every sum stays where it was, only the cut is new."""
    pinned = {
        ("add_2x2", 0): "470bbf8373e10eb6",
        ("add_2x2", 1): "19c395d17e5282c2",
        ("add_2x2", 7): "7d7b3a66f43845ac",
        ("add_3x1", 0): "34496b9565982799",
        ("add_3x1", 1): "9e7a6e2a8c1d5564",
        ("add_3x1", 7): "4debbb06450f6712",
    }
    for (name, seed), digest in pinned.items():
        fam = REGISTERED[name]
        demos = [list(p.operands) for p in fam.demonstrations(seed, 200)]
        held = [list(p.operands) for p in fam.held_out(seed, None) + fam.validation(seed, None)]
        assert hashlib.sha256(json.dumps([demos, held]).encode()).hexdigest()[:16] == digest, (name, seed)
    assert REGISTERED["add_2x2"].size() == 8100 and REGISTERED["add_3x1"].size() == 1000


# The contract every registered family keeps (a new family is checked by these without a line of test).


@pytest.mark.parametrize("name", list(REGISTERED))
def test_problems_reproducible_from_seed_and_index(name):
    """The same (seed, index) always gives the same problem; another seed gives another order."""
    fam = REGISTERED[name]
    first = [fam.problem(3, i) for i in range(50)]
    assert [fam.problem(3, i) for i in range(50)] == first
    assert [fam.problem(4, i) for i in range(50)] != first
    assert all(p.environment == name and p.op == fam.op and fam.contains(p.operands) for p in first)
    assert all(environment_of(p.operands, p.op) == name for p in first)  # coordinates name one family
    assert len(set(first)) == 50  # an order, not draws with replacement
    assert fam.demonstrations(3, 50) == first


@pytest.mark.parametrize("name", list(REGISTERED))
def test_seeded_order_is_a_permutation_of_the_space(name):
    """A seed's order holds every sum of a listed family exactly once; a sampled family's never repeats one."""
    fam = REGISTERED[name]
    if fam.sampled:
        drawn = [fam.problem(1, i).operands for i in range(5000)]
        assert len(set(drawn)) == 5000 and all(fam.contains(t) for t in drawn)
        return
    order = [fam.problem(1, i).operands for i in range(fam.size())]
    assert sorted(order) == sorted(fam.space)
    every = itertools.product(range(fam.at.low, fam.at.high + 1), repeat=fam.at.operands)
    assert set(fam.space) == {t for t in every if fam.contains(t)}


def _extremes(fam) -> list[tuple[int, ...]]:
    """The family's largest and smallest operand tuples that it holds (its longest episodes are among them)."""
    high, low = (fam.at.high,) * fam.at.operands, (fam.at.low,) * fam.at.operands
    first_high = (fam.at.high, *(fam.at.low,) * (fam.at.operands - 1))
    return [t for t in (high, low, first_high) if fam.contains(t)]


@pytest.mark.parametrize("name", list(REGISTERED))
def test_every_demonstration_is_accepted_by_the_calculator_and_fits_the_context(name):
    """Demonstrations use calls the calculator answers (never `?|`), end in the true result, fit the vocabulary and
    the context: every sum of a listed family; a sampled family's first 2000 and its extreme sums."""
    fam = REGISTERED[name]
    sums = fam.space if not fam.sampled else [fam.problem(0, i).operands for i in range(2000)] + _extremes(fam)
    longest = 0
    for operands in sums:
        p = Problem(operands, name, fam.op)
        assert len(p.expected_calls()) == fam.at.operands - 1
        assert all(SYNTAX.parse(call) is not None for call in p.expected_calls()), p
        t = p.demonstration()
        ids, _ = t.render()  # raises on a character outside the vocabulary
        assert ERROR not in t.text and t.text.endswith(f"{p.answer}|") and p.answer >= 0
        longest = max(longest, len(ids))
    assert longest <= MAX_LENGTH


@pytest.mark.parametrize("name", list(REGISTERED))
@pytest.mark.parametrize("seed", range(3))
def test_held_out_never_among_demonstrations(name, seed):
    """The three splits never meet: no test sum (held-out 'all' included) or validation sum is among the largest
    demonstration pool of the same seed, nor in the other split; a listed family's splits are its whole space."""
    fam = REGISTERED[name]
    demos = {p.operands for p in fam.demonstrations(seed, fam.demo_pool)}
    held = [p.operands for p in fam.held_out(seed, None)]
    valid = [p.operands for p in fam.validation(seed, None)]
    assert len(demos) == fam.demo_pool > 0 and len(held) == fam.test_pool > 0 and len(valid) == fam.validation_pool > 0
    assert len(demos) + len(held) + len(valid) == (SAMPLED_ALL + fam.validation_pool if fam.sampled else fam.size())
    assert len(set(held)) == len(held) and len(set(valid)) == len(valid)
    assert not demos & set(held) and not demos & set(valid) and not set(held) & set(valid)
    assert [p.operands for p in fam.held_out(seed, 30)] == held[:30]
    assert [p.operands for p in fam.validation(seed, 30)] == valid[:30]


def test_held_out_count_is_capped_by_the_family():
    """Asking for more held-out sums than a family has gives its whole test split, no more."""
    fam = REGISTERED["add_3x1"]  # 1000 sums: 200 demonstrations, 600 test, 200 validation
    assert len(fam.held_out(0, 10_000)) == fam.size() - DEMO_POOL - 200 == 600
    small = REGISTERED["add_2x1"]  # 100 sums: half kept for demonstrations; of the rest, a quarter for validation
    assert small.demo_pool == 50 and len(small.held_out(0, None)) == 38 and len(small.validation(0, None)) == 12


@pytest.mark.parametrize("count", [-1, DEMO_POOL + 1])
def test_demonstrations_beyond_the_pool_are_refused(count):
    """Demonstrations come only from the pool: a count outside 0..DEMO_POOL raises ValueError."""
    with pytest.raises(ValueError):
        REGISTERED["add_2x2"].demonstrations(0, count)
    with pytest.raises(MixError, match="from 0 to 50"):
        Mix.of(add_2x1=51)


def test_subtraction_runs_left_to_right_and_never_below_zero():
    """A `-` family's procedure subtracts left to right on running results; its sums never go below zero."""
    p = Problem((9, 4, 3), "sub_3x1", "-")
    assert p.prompt == "9-4-3=" and p.expected_calls() == ["9-4", "5-3"] and p.answer == 2
    assert p.demonstration().text == "9-4-3=B9-4|5|B5-3|2|2|"
    fam = REGISTERED["sub_3x1"]
    assert fam.contains((9, 4, 5)) and not fam.contains((9, 5, 5)) and fam.size() == 220


def test_presets_are_the_plates_mixes():
    """The three presets are 70 two-digit, 70 three-digit, and 35 + 35."""
    assert PRESETS["two_digit_70"].mix.counts == (("add_2x2", 70),)
    assert PRESETS["three_digit_70"].mix.counts == (("add_3x1", 70),)
    assert PRESETS["mix_35_35"].mix.counts == (("add_2x2", 35), ("add_3x1", 35))
    assert all(p.mix.total == 70 for p in PRESETS.values())


def test_mix_demonstrations_come_family_by_family():
    """A mix's demonstrations are each family's first demonstrations for the seed, in registry order."""
    demos = PRESETS["mix_35_35"].mix.demonstrations(2)
    assert demos == REGISTERED["add_2x2"].demonstrations(2, 35) + REGISTERED["add_3x1"].demonstrations(2, 35)


def test_mix_parse_round_trips_and_orders_by_registry():
    """Parsing accepts spaces and any order, and spec() gives text that parses back to the same mix."""
    m = Mix.parse(" add_3x1 = 20 , add_2x2=10 ,")
    assert m.counts == (("add_2x2", 10), ("add_3x1", 20))
    assert Mix.parse(m.spec()) == m
    assert m.label() == "add_2x2 10 + add_3x1 20"
    assert Mix.parse("add_2x2=5,add_3x1=0").counts == (("add_2x2", 5),)


@pytest.mark.parametrize(
    "text",
    [
        "nope=70",  # unknown family
        "add_2x2=35,nope=35",
        "add_2x2",  # no count
        "add_2x2=",
        "add_2x2=abc",
        "add_2x2=-3",
        "add_2x2=3.5",
        "add_2x2=500",  # more than the demonstration pool
        "add_2x2=0",  # no demonstrations at all
        "add_2x2=0,add_3x1=0",
        "add_2x2=35,add_2x2=35",  # duplicate
        "add_2x2=35, add_2x2 =1",
        "",  # empty
        " , ,",
        "=35",
        "add_2x2=\u00b2",  # superscript two: isdigit() but not a number
        "add_2x2=\u0663\u0665",  # Arabic-Indic digits
    ],
)
def test_mix_parse_errors(text):
    """A malformed mix raises MixError (never another exception) with a one-line message."""
    with pytest.raises(MixError) as info:
        Mix.parse(text)
    assert "\n" not in str(info.value) and str(info.value)


@pytest.mark.parametrize(
    "text, operands",
    [
        ("23+45", (23, 45)),
        ("3+4+5", (3, 4, 5)),
        ("123+4", (123, 4)),
        (" 23 + 45 = ", (23, 45)),
        ("23+45=", (23, 45)),
        ("1+1+1+1", (1, 1, 1, 1)),
        ("999+999", (999, 999)),
        ("1+2+3+4", (1, 2, 3, 4)),  # three calls: fits the 64-character context
        ("99+99+99", (99, 99, 99)),
        ("100+100+100+100", (100, 100, 100, 100)),  # the longest episode a sum can need: 60 characters
    ],
)
def test_parse_sum_accepts(text, operands):
    """A typed sum of up to four numbers of up to three digits becomes a Problem; spaces and a final `=` are fine."""
    assert parse_sum(text).operands == operands


def test_parse_sum_names_the_family():
    """A typed sum is tagged with the family whose space holds it, or '' outside every family."""
    assert parse_sum("23+45").environment == "add_2x2"
    assert parse_sum("3+4+5").environment == "add_3x1"
    assert parse_sum("3+4").environment == "add_2x1"
    assert parse_sum("12+34+56+78").environment == "add_4x2"
    assert (parse_sum("9-4-3").environment, parse_sum("9-4-3").op) == ("sub_3x1", "-")
    assert parse_sum("123+4").environment == ""  # a three-digit number: outside every family
    assert parse_sum("23+4").environment == ""  # mixed digits
    assert parse_sum("99-10-10-10").environment == ""  # four two-digit numbers subtracted: not in the grid


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "",
        "   ",
        "=",
        "2++3",
        "+3",
        "3+",
        "23",
        "4-23",  # below zero
        "3+4-1",  # two operations
        "3*4",
        "23+45==",
        "1" * 21,
        "1+1+1+1+1",
        "1234+1",
        "\u0663+4",
        "2\t+3",
        "1+2=3",
        "999+999+9",  # the episode would not fit the context / the calculator
    ],
)
def test_parse_sum_refuses(text):
    """Anything that is not numbers joined by single `+` signs, within the limits, raises SumError in one line."""
    with pytest.raises(SumError) as info:
        parse_sum(text)
    assert "\n" not in str(info.value) and str(info.value)


@pytest.mark.parametrize("name", list(REGISTERED))
def test_a_probe_naming_its_family_takes_that_familys_sums_and_refuses_the_rest(name):
    """`a3x2: 12+34+56` poses the sum as that family's; another count, operation or an operand outside the
    family's range is one line saying which, for every registered family, by name or short label."""
    family = REGISTERED[name]
    sums = family.held_out(0, 5)
    for problem in sums:
        body = problem.prompt.removesuffix("=")
        for label in (family.short, family.name, family.short.upper()):
            assert parse_sum(f"{label}: {body}") == problem
    ops = sums[0].operands
    other = "-" if family.op == "+" else "+"
    wrong = {
        "numbers": family.op.join(map(str, ops[:-1])) if len(ops) > 2 else family.op.join(map(str, (*ops, 0))),
        "range": family.op.join(map(str, (100 if family.at.digits == 2 else 10, *ops[1:]))),
        "use": other.join(map(str, (family.at.high, *[family.at.low] * (len(ops) - 1)))),
    }
    if family.at.digits == 2:
        wrong["outside"] = family.op.join(map(str, (*ops[:-1], 5)))
    for says, body in wrong.items():
        with pytest.raises(SumError) as info:
            parse_sum(f"{family.short}: {body}")
        message = str(info.value)
        assert "\n" not in message and (says in message or "outside" in message), (body, message)


@pytest.mark.parametrize(
    "text, says",
    [
        ("zz: 1+2", "no environment 'zz'"),
        (": 1+2", "no environment"),
        ("a3x2 12+34+56", "put a ':'"),
        ("2d:", "type a sum"),
    ],
)
def test_a_probe_with_a_bad_family_name_is_one_line(text, says):
    """An unknown family before the colon, or a family name without one, is refused saying what to write."""
    with pytest.raises(SumError) as info:
        parse_sum(text)
    assert says in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "text, families",
    [
        ("@operands:2=35", {"add_2x2": 35, "add_2x1": 35, "sub_2x2": 35}),
        ("@op:sub&digits:1=20,add_2x2=70", {"add_2x2": 70, "sub_3x1": 20, "sub_4x1": 20}),
        ("@all!operands:3&digits:2=10", {n: 10 for n in REGISTERED if n not in ("add_3x2", "sub_3x2")}),
        ("@all=10,add_4x2=0", {n: 10 for n in REGISTERED if n != "add_4x2"}),
        ("@all!operands:9=10", {n: 10 for n in REGISTERED}),  # excluding coordinates no environment has: none
    ],
)
def test_mixes_name_families_by_their_coordinates(text, families):
    """`@dimension:value=count` gives count to every family there; `!` excludes; later parts override."""
    assert dict(Mix.parse(text).counts) == families


@pytest.mark.parametrize("text", ["@colour:red=3", "@operands:9=3", "@all=70", "@operands=3", "@=3", "@all!=3"])
def test_bad_selectors_are_one_line(text):
    """An unknown dimension, a selector naming no family, or a count past a selected family's pool is one line."""
    with pytest.raises(MixError) as info:
        Mix.parse(text)
    assert "\n" not in str(info.value) and str(info.value)


def test_held_out_all_scores_every_held_out_sum_or_a_fixed_sample_of_a_huge_family():
    """`held_out=None` gives a listed family's whole test split (every sum neither demonstrated nor kept for
    validation) and SAMPLED_ALL less the demonstrations of a sampled one."""
    small = REGISTERED["sub_4x1"]  # 715 sums: 200 demonstrations, 387 test, 128 (a quarter of the rest) validation
    assert len(small.held_out(0, None)) == small.size() - 200 - (small.size() - 200) // 4 == 387
    huge = REGISTERED["add_4x2"]
    assert huge.sampled and huge.size() == 90**4 and len(huge.held_out(0, None)) == SAMPLED_ALL - 200
