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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from .calculator import calculate
from .settings import HELD_OUT
from .transcript import Role, Transcript
from .vocab import CALL_OPEN, CLOSE

DEMO_POOL = 200  # demonstrations of a family come from the first DEMO_POOL of its seeded order


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


class Family:
    """A task family: a finite, ordered space of operand tuples, its labels, and its seeded orders.

    The family owns its data: the space is built once and kept on the instance, and nothing here
    looks the family up by name, so a family works whether or not it is registered.
    """

    def __init__(
        self, name: str, short: str, label: str, description: str, space: Callable[[], Iterable[tuple[int, ...]]]
    ) -> None:
        self.name = name  # registry key and the name in mixes, e.g. `two_digit`
        self.short = short  # a column header, e.g. `2d`
        self.label = label  # for people, e.g. `two-digit`
        self.description = description
        self._make_space = space  # every problem of the family, in a fixed order
        self._orders: dict[int, tuple[tuple[int, ...], ...]] = {}  # seed -> shuffled space (a few seeds)

    def __repr__(self) -> str:
        return f"Family({self.name!r})"

    @cached_property
    def space(self) -> tuple[tuple[int, ...], ...]:
        """Every operand tuple of the family, in its fixed order (built once)."""
        return tuple(tuple(ops) for ops in self._make_space())

    @cached_property
    def _members(self) -> frozenset[tuple[int, ...]]:
        return frozenset(self.space)

    def contains(self, operands: tuple[int, ...]) -> bool:
        """True if these operands are a sum of this family."""
        return tuple(operands) in self._members

    def size(self) -> int:
        """How many distinct sums the family holds."""
        return len(self.space)

    def order(self, seed: int) -> tuple[tuple[int, ...], ...]:
        """The space shuffled by `seed` (the last few seeds' orders are kept)."""
        if seed not in self._orders:
            if len(self._orders) >= _ORDERS_KEPT:
                self._orders.pop(next(iter(self._orders)))
            space = list(self.space)
            random.Random(f"{self.name}/{seed}").shuffle(space)
            self._orders[seed] = tuple(space)
        return self._orders[seed]

    def problem(self, seed: int, index: int) -> Problem:
        """The index-th problem of the family's order for `seed`."""
        return Problem(self.order(seed)[index], self.name)

    def demonstrations(self, seed: int, count: int) -> list[Problem]:
        """The first `count` problems of the seeded order (count at most DEMO_POOL)."""
        if not 0 <= count <= DEMO_POOL:
            raise ValueError(f"{self.name}: between 0 and {DEMO_POOL} demonstrations, not {count}")
        return [self.problem(seed, i) for i in range(count)]

    def held_out(self, seed: int, count: int | None = HELD_OUT) -> list[Problem]:
        """`count` held-out problems (None: every problem outside the demonstration pool)."""
        n = self.size() - DEMO_POOL
        count = n if count is None else min(count, n)
        return [self.problem(seed, DEMO_POOL + i) for i in range(count)]


_ORDERS_KEPT = 16  # seeded orders cached per family

FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add a family to the registry; a second family of the same name is refused."""
    if family.name in FAMILIES:
        raise ValueError(f"a family named {family.name!r} is already registered")
    FAMILIES[family.name] = family
    return family


def family_of(operands: tuple[int, ...]) -> str:
    """The name of the registered family holding these operands, or '' for a sum outside all of them."""
    return next((f.name for f in FAMILIES.values() if f.contains(operands)), "")


def short_label(name: str) -> str:
    """A family's short label (`2d`) by name; the name itself for a family not registered."""
    family = FAMILIES.get(name)
    return family.short if family else name


register(
    Family(
        "two_digit",
        "2d",
        "two-digit",
        "a+b with a, b in 10..99: one call",
        lambda: itertools.product(range(10, 100), repeat=2),
    )
)
register(
    Family(
        "three_digit",
        "3d",
        "three-digit",
        "a+b+c with single digits: two calls",
        lambda: itertools.product(range(10), repeat=3),
    )
)
