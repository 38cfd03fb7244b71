"""Task families in a registry that refuses duplicate names, each reproducible from (seed, index).

A family is a finite space of sums and the procedure that solves them with a binary calculator:
call on the first two operands, then on each running result and the next operand, then answer.
`two_digit` (a+b, 10..99, one call) and `three_digit` (a+b+c, single digits, two calls) are the
plate's. For a seed, the family's space is shuffled once; demonstrations come from the front of
that order and held-out sums from behind a fixed pool, so the two can never meet.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from .calculator import calculate
from .transcript import Role, Transcript
from .vocab import CALL_OPEN, CLOSE

DEMO_POOL = 200  # demonstrations of a family come from the first DEMO_POOL of its seeded order
MAX_HELD_OUT = 200  # the largest held-out set the app offers (the CLI takes any number, or all)


@dataclass(frozen=True)
class Problem:
    """A sum to solve: its operands and the family it was drawn from ('' for a free probe)."""

    operands: tuple[int, ...]
    family: str = ""

    @property
    def prompt(self) -> str:
        """The task as posed, e.g. `23+45=`."""
        return "+".join(map(str, self.operands)) + "="

    @property
    def answer(self) -> int:
        """The true sum."""
        return sum(self.operands)

    def expected_calls(self) -> list[str]:
        """The calls of the left-to-right procedure: `a+b`, then `result+c`, ..."""
        calls, acc = [], self.operands[0]
        for x in self.operands[1:]:
            calls.append(f"{acc}+{x}")
            acc += x
        return calls

    def demonstration(self) -> Transcript:
        """The transcript a demonstrator writes: each call, the tool's result, then the answer."""
        t = Transcript.of((Role.PROMPT, self.prompt))
        for call in self.expected_calls():
            t.add(Role.ACTION, f"{CALL_OPEN}{call}{CLOSE}")
            t.add(Role.ENVIRONMENT, calculate(call))
        t.add(Role.ACTION, f"{self.answer}{CLOSE}")
        return t


@dataclass(frozen=True)
class Family:
    """A named task family: a finite, ordered space of operand tuples."""

    name: str
    description: str
    space: Callable[[], list[tuple[int, ...]]]  # every problem of the family, in a fixed order

    def size(self) -> int:
        """How many distinct sums the family holds."""
        return len(_order(self.name, -1))

    def problem(self, seed: int, index: int) -> Problem:
        """The index-th problem of the family's order for `seed`."""
        return Problem(_order(self.name, seed)[index], self.name)

    def demonstrations(self, seed: int, count: int) -> list[Problem]:
        """The first `count` problems of the seeded order (count at most DEMO_POOL)."""
        if not 0 <= count <= DEMO_POOL:
            raise ValueError(f"{self.name}: between 0 and {DEMO_POOL} demonstrations, not {count}")
        return [self.problem(seed, i) for i in range(count)]

    def held_out(self, seed: int, count: int | None = 30) -> list[Problem]:
        """`count` held-out problems (None: every problem outside the demonstration pool)."""
        n = self.size() - DEMO_POOL
        count = n if count is None else min(count, n)
        return [self.problem(seed, DEMO_POOL + i) for i in range(count)]


FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add a family to the registry; a second family of the same name is refused."""
    if family.name in FAMILIES:
        raise ValueError(f"a family named {family.name!r} is already registered")
    FAMILIES[family.name] = family
    return family


@lru_cache(maxsize=64)
def _order(name: str, seed: int) -> tuple[tuple[int, ...], ...]:
    """The family's space shuffled by `seed` (seed -1: unshuffled)."""
    space = list(FAMILIES[name].space())
    if seed >= 0:
        random.Random(f"{name}/{seed}").shuffle(space)
    return tuple(space)


register(Family(
    "two_digit", "a+b with a, b in 10..99: one call",
    lambda: list(itertools.product(range(10, 100), repeat=2)),
))
register(Family(
    "three_digit", "a+b+c with single digits: two calls",
    lambda: list(itertools.product(range(10), repeat=3)),
))
