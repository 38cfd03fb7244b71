"""Task families, mixes and typed sums: the plate's two families, reproducible, held-out sums never leaked."""

from __future__ import annotations

import itertools

import pytest

from core.world.episode import MAX_LENGTH
from core.world.families import DEMO_POOL, FAMILIES, Family, Problem, register
from core.world.mix import Mix, MixError
from core.world.presets import PRESETS
from core.world.probe import SumError, parse_sum


def test_registry_refuses_a_duplicate_name():
    """Registering a second family under an existing name raises ValueError and keeps the original."""
    original = dict(FAMILIES)
    impostor = Family("two_digit", "2d", "two-digit", "an impostor", lambda: [(1, 1)])
    with pytest.raises(ValueError, match="two_digit"):
        register(impostor)
    assert FAMILIES == original
    assert FAMILIES["two_digit"] is original["two_digit"]


def test_registry_holds_exactly_the_plates_families():
    """The registry holds the plate's two families, two-digit first."""
    assert list(FAMILIES) == ["two_digit", "three_digit"]


def test_two_digit_family_space():
    """two_digit is every a+b with a, b in 10..99: 8100 sums."""
    fam = FAMILIES["two_digit"]
    assert fam.size() == 8100
    assert set(fam.space) == set(itertools.product(range(10, 100), repeat=2))


def test_three_digit_family_space():
    """three_digit is every a+b+c of single digits: 1000 sums."""
    fam = FAMILIES["three_digit"]
    assert fam.size() == 1000
    assert set(fam.space) == set(itertools.product(range(10), repeat=3))


@pytest.mark.parametrize("name", list(FAMILIES))
def test_problems_reproducible_from_seed_and_index(name):
    """The same (seed, index) always gives the same problem; another seed gives another order."""
    fam = FAMILIES[name]
    first = [fam.problem(3, i) for i in range(50)]
    assert [fam.problem(3, i) for i in range(50)] == first
    assert [fam.problem(4, i) for i in range(50)] != first
    assert all(p.family == name for p in first)
    assert len(set(first)) == 50  # an order, not draws with replacement
    assert fam.demonstrations(3, 50) == first


@pytest.mark.parametrize("name", list(FAMILIES))
def test_seeded_order_is_a_permutation_of_the_space(name):
    """A seed's order holds every sum of the family exactly once."""
    fam = FAMILIES[name]
    order = [fam.problem(1, i).operands for i in range(fam.size())]
    assert sorted(order) == sorted(fam.space)


def test_two_digit_demonstration_makes_one_call():
    """A two-digit sum is solved with one call on its two operands."""
    p = Problem((23, 45), "two_digit")
    assert p.expected_calls() == ["23+45"]
    assert p.prompt == "23+45=" and p.answer == 68


def test_three_digit_demonstration_second_call_uses_first_result():
    """A three-digit sum takes two calls, the second on the first call's result and the third operand."""
    p = Problem((3, 4, 5), "three_digit")
    assert p.expected_calls() == ["3+4", "7+5"]
    assert p.demonstration().text == "3+4+5=B3+4|7|B7+5|12|12|"


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_demonstration_fits_vocabulary_and_context(name):
    """Every sum of every family has a demonstration written in the vocabulary that fits the model's context."""
    longest = 0
    for operands in FAMILIES[name].space:
        t = Problem(operands, name).demonstration()
        ids, _ = t.render()  # raises on a character outside the vocabulary
        longest = max(longest, len(ids))
    assert longest <= MAX_LENGTH


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("seed", range(5))
def test_held_out_never_among_demonstrations(name, seed):
    """No held-out sum, even with held-out 'all', is among the largest demonstration pool of the same seed."""
    fam = FAMILIES[name]
    demos = {p.operands for p in fam.demonstrations(seed, DEMO_POOL)}
    held = [p.operands for p in fam.held_out(seed, None)]
    assert len(demos) == DEMO_POOL
    assert len(held) == fam.size() - DEMO_POOL
    assert not demos & set(held)
    assert [p.operands for p in fam.held_out(seed, 30)] == held[:30]


def test_held_out_count_is_capped_by_the_family():
    """Asking for more held-out sums than a family has gives every held-out sum, no more."""
    fam = FAMILIES["three_digit"]
    assert len(fam.held_out(0, 10_000)) == fam.size() - DEMO_POOL


@pytest.mark.parametrize("count", [-1, DEMO_POOL + 1])
def test_demonstrations_beyond_the_pool_are_refused(count):
    """Demonstrations come only from the pool: a count outside 0..DEMO_POOL raises ValueError."""
    with pytest.raises(ValueError):
        FAMILIES["two_digit"].demonstrations(0, count)


def test_presets_are_the_plates_mixes():
    """The three presets are 70 two-digit, 70 three-digit, and 35 + 35."""
    assert PRESETS["two_digit_70"].mix.counts == (("two_digit", 70),)
    assert PRESETS["three_digit_70"].mix.counts == (("three_digit", 70),)
    assert PRESETS["mix_35_35"].mix.counts == (("two_digit", 35), ("three_digit", 35))
    assert all(p.mix.total == 70 for p in PRESETS.values())


def test_mix_demonstrations_come_family_by_family():
    """A mix's demonstrations are each family's first demonstrations for the seed, in registry order."""
    demos = PRESETS["mix_35_35"].mix.demonstrations(2)
    assert demos == FAMILIES["two_digit"].demonstrations(2, 35) + FAMILIES["three_digit"].demonstrations(2, 35)


def test_mix_parse_round_trips_and_orders_by_registry():
    """Parsing accepts spaces and any order, and spec() gives text that parses back to the same mix."""
    m = Mix.parse(" three_digit = 20 , two_digit=10 ,")
    assert m.counts == (("two_digit", 10), ("three_digit", 20))
    assert Mix.parse(m.spec()) == m
    assert m.label() == "two_digit 10 + three_digit 20"
    assert Mix.parse("two_digit=5,three_digit=0").counts == (("two_digit", 5),)


@pytest.mark.parametrize(
    "text",
    [
        "nope=70",  # unknown family
        "two_digit=35,nope=35",
        "two_digit",  # no count
        "two_digit=",
        "two_digit=abc",
        "two_digit=-3",
        "two_digit=3.5",
        "two_digit=500",  # more than the demonstration pool
        "two_digit=0",  # no demonstrations at all
        "two_digit=0,three_digit=0",
        "two_digit=35,two_digit=35",  # duplicate
        "two_digit=35, two_digit =1",
        "",  # empty
        " , ,",
        "=35",
        "two_digit=\u00b2",  # superscript two: isdigit() but not a number
        "two_digit=\u0663\u0665",  # Arabic-Indic digits
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
    """A typed sum is tagged with the family whose space holds it, or '' outside both."""
    assert parse_sum("23+45").family == "two_digit"
    assert parse_sum("3+4+5").family == "three_digit"
    assert parse_sum("123+4").family == ""
    assert parse_sum("3+4").family == ""  # single digits: neither family


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
        "23-4",
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
