"""Operations and the call syntax are records: an operator without one cannot exist, and adding one is one record."""

from __future__ import annotations

import operator

import pytest

from breadth.core.world.arithmetic import operations
from breadth.core.world.arithmetic.calculator import SYNTAX, calculate
from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.arithmetic.operations import ADD, SUB, Operation
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import grid_environment
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.verdict import judge

MUL = Operation("*", "mul", "multiplies", "multiplied", operator.mul)


def test_an_operator_without_a_record_cannot_exist():
    """`*` is not an operation: a Problem, a family's coordinates or a call with it is refused, never taken as `-`."""
    with pytest.raises(ValueError, match="no operation"):
        Problem((3, 4), op="*")
    with pytest.raises(ValueError, match="no operation"):
        Coordinates(2, 1, "*")
    assert SYNTAX.parse("3*4") is None and calculate("3*4") == "?|"
    with pytest.raises(SumError, match="not allowed"):
        parse_sum("3*4")


def allows(op, operands: tuple[int, ...]) -> bool:
    """True if no running result of `operands` under `op` breaks its domain rule (never below zero, for `-`)."""
    return op.floor is None or all(r >= op.floor for r in op.running(operands))


def test_each_operation_applies_left_to_right_and_keeps_its_domain_rule():
    """`+` adds; `-` subtracts left to right and never allows a running result below zero."""
    assert ADD.running((3, 4, 5)) == [7, 12] and allows(ADD, (0, 0, 0))
    assert SUB.running((9, 4, 3)) == [5, 2] and allows(SUB, (9, 4, 3)) and not allows(SUB, (5, 4, 3))
    for op in (ADD, SUB):  # the count of a sampled space agrees with listing a small one
        listed = sum(allows(op, (a, b, c)) for a in range(10) for b in range(10) for c in range(10))
        assert op.count(0, 9, 3) == listed


def test_the_call_syntax_writes_parses_and_answers_calls():
    """One record writes `B23+45|`, parses its body, appends `68|` (or `?|`), and an episode and a verdict read it."""
    body = SYNTAX.body(23, ADD, 45)
    assert SYNTAX.write(body) == "B23+45|" and SYNTAX.calculate(body) == "68|" and SYNTAX.malformed == "?|"
    problem = Problem((23, 45), "two_digit")
    ep = Episode(problem.prompt)
    while ep.next_forced():
        pass
    for c in "B23+45|":
        ep.act(c)
    while ep.next_forced():
        pass
    for c in "68|":
        ep.act(c)
    assert ep.transcript.text == problem.demonstration().text == "23+45=B23+45|68|68|"
    assert judge(ep, problem).solved


def test_adding_an_operation_is_one_record(monkeypatch):
    """With a `*` record added (the vocabulary already holds `*`), the calculator, probes, problems and a grid
    family all take it, with no other edit."""
    monkeypatch.setitem(operations.OPERATIONS, "*", MUL)
    assert SYNTAX.parse("3*4").value == 12
    assert Problem((3, 4, 2), op="*").demonstration().text == "3*4*2=B3*4|12|B12*2|24|24|"
    assert parse_sum("3*4").answer == 12
    family = grid_environment(2, 1, "*")
    assert family.name == "mul_2x1" and "multiplied" in family.description
    assert all(calculate(call) != "?|" for p in family.demonstrations(0, 10) for call in p.expected_calls())


@pytest.mark.parametrize(
    "at, tight",
    [
        ((2, 2, "*"), True),
        ((3, 1, "*"), True),
        ((2, 2, "+"), True),
        ((4, 1, "+"), True),
        ((3, (2, 1, 1), "-"), False),
        ((3, (1, 2, 1), "+-"), False),
        ((3, 1, "-*"), False),
        ((2, 2, "*", "postfix"), True),
    ],
)
def test_the_longest_episode_bounds_every_solved_episode_whatever_the_operation(monkeypatch, at, tight):
    """`longest_episode()` is at least the length of every solved episode at those coordinates (start token
    included), and exactly the longest where the largest operands make it: 24 for two-digit products (it said 23,
    bounding products by sums)."""
    monkeypatch.setitem(operations.OPERATIONS, "*", MUL)
    where = Coordinates(*at)
    longest = max(
        len(Problem(sum_, op=where.op, form=where.form).demonstration().text) + 1
        for sum_ in where.every()
        if where.contains(sum_)
    )
    assert where.longest_episode() == longest if tight else where.longest_episode() >= longest
    if at == (2, 2, "*"):
        assert longest == 24
