"""Environments: a grid of environments along named dimensions, in a registry that refuses duplicates.

An environment is a finite space of sums and the procedure that solves them with a binary calculator:
call on the first two operands, then on each running result and the next operand, then answer.
Every environment sits at coordinates on three dimensions: how many operands (2, 3, 4: one, two, three
calls), how many digits each operand has (1 or 2) and the operation (a record of `operations`: `+`,
or `-` with a running result that never goes below zero). `add_2x2` (2 operands x 2 digits, +) and `add_3x1`
(3 x 1, +) are the plate's and keep its demonstrations and held-out sums; their old names, `two_digit` and
`three_digit`, are read wherever a name is read (`OLD_NAMES`), and their seeded orders are still made with them.

For a seed, an environment's space is put in a seeded order, cut into three splits that never meet: the
demonstrations at its front, then the test split (every held-out score breadth reports), then the
validation split (for choosing recipes and settings; a quarter of the rest of a small space). How the order is
made is the environment's ordering (`core.world.environments.orders`): small spaces are shuffled whole; larger ones
(3 or 4 two-digit operands: 729,000 and 65.6 million sums) are sampled index by index without replacement (and
without the sums a `-` environment excludes), which gives the same prefix for any length asked. What the rest of
breadth draws and scores an environment by is its `Task` (`core.world.environments.task`); what people read of it
(its label, brief words and column headers) is `core.world.environments.labels`.

Adding an environment is one definition and one `register` call (see the bottom of this file).
"""

from __future__ import annotations

import math
from functools import cached_property

from breadth.core.world.arithmetic.calculator import FORMS, CallSyntax
from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.arithmetic.operations import operation
from breadth.core.world.arithmetic.problem import Problem, canonical
from breadth.core.world.environments.labels import digits_word, label, name_for, numbers_words
from breadth.core.world.environments.orders import Order, Ordering, plate_order
from breadth.core.world.environments.orders import sampled as is_sampled
from breadth.core.world.environments.orders import space as listed_space
from breadth.core.world.episodes.scores import HELD_OUT

DEMO_POOL = 200  # demonstrations come from the first DEMO_POOL of an environment's seeded order (or half a small one)
SAMPLED_ALL = 10_000  # `held_out=None` ("all") on a sampled environment scores this many held-out sums, not millions
VALIDATION_POOL = 200  # problems kept for validation at the end of a listed space (a quarter of a small one)


class Environment:
    """An environment (a kind of sum): its coordinates, names, its space of sums, its seeded orders and splits.

    It owns its data and never looks itself up by name, so it works registered or not. `version`
    changes whenever its problems or transcripts would (its id names it: `core.world.environments.registry`).
    `ordering` makes its seeded orders (the plate's Python-random ones unless given another: the generated
    environments' are numpy's); `sampled_test` is a sampled space's test split (None: SAMPLED_ALL less the
    demonstrations). It satisfies `Task`; its labels for people are functions of it (`labels`).
    """

    def __init__(
        self,
        name: str,
        short: str,
        words: str,
        description: str,
        at: Coordinates,
        aliases: tuple[str, ...] = (),
        version: int = 1,
        ordering: Ordering = plate_order,
        sampled_test: int | None = None,
    ) -> None:
        self.name = name  # registry key and the name in mixes, stores and checkpoints, e.g. `add_2x2`
        self.short = short  # a column header, its coordinates: `a2x2` is two two-digit numbers added
        self.words = words  # what its sums are, in plain words, e.g. `two-digit sums`
        self.description = description
        self.at = at
        self.aliases = aliases  # other short names a person may type (the plate's old `2d`, `3d`)
        self.version = version
        self.ordering = ordering
        self.sampled_test = sampled_test
        self._orders: dict[int, Order] = {}  # seed -> seeded order (the last few seeds)

    def __repr__(self) -> str:
        return f"Environment({self.name!r})"

    def names(self) -> tuple[str, ...]:
        """Every name a person may call it by, lower case: its name, its short label, its aliases."""
        return tuple(dict.fromkeys(n.lower() for n in (self.name, self.short, *self.aliases)))

    @property
    def op(self) -> str:
        return self.at.op

    @property
    def syntax(self) -> CallSyntax:
        """How its calls are written and its sums posed."""
        return FORMS[self.at.form]

    @property
    def sampled(self) -> bool:
        """True if the space is too large to list and is sampled instead."""
        return is_sampled(self.at)

    def contains(self, operands: tuple[int, ...]) -> bool:
        """True if these operands are a sum of this environment (operation aside)."""
        return self.at.contains(operands)  # a `-` never takes the running result below zero

    def refusal(self, operands: tuple[int, ...], op: str) -> str:
        """Why a sum is not one of this environment's, in one line ('' if it is)."""
        if not self.at.uniform:
            return "" if op == self.op and self.contains(operands) else f"not a sum of {self.short} ({label(self)})"
        numbers = digits_word(self.at.digits)
        if op != self.op:
            return f"{self.short} {self.at.operation.verb}: use {self.op}, not {op}"
        if len(operands) != self.at.operands:
            return f"{self.short} takes {self.at.operands} numbers, not {len(operands)}"
        outside = next((x for x in operands if not self.at.low <= x <= self.at.high), None)
        if outside is not None:
            return f"{outside} is outside {self.short}'s range: {numbers} numbers, {self.at.low} to {self.at.high}"
        if not self.contains(operands):
            return f"{self.short} never goes below zero: the first number must be at least the others' total"
        return ""

    @property
    def space(self) -> tuple[tuple[int, ...], ...]:
        """Every operand tuple of a listed environment, in lexicographic order (built once per coordinates)."""
        if self.sampled:
            raise ValueError(f"{self.name} has {self.at.candidates:,} sums: too many to list")
        return listed_space(self.at)

    @cached_property
    def _size(self) -> int:
        return self.at.count()  # counted, never listed: the same as the listed space's length (the contract test)

    def size(self) -> int:
        """How many distinct sums the environment holds."""
        return self._size

    @property
    def demo_pool(self) -> int:
        """How many problems at the front of each seeded order are kept for demonstrations."""
        return min(DEMO_POOL, self.size() // 2)

    @property
    def test_pool(self) -> int:
        """How many problems follow the demonstrations as the test split (every score breadth reports)."""
        if self.sampled:
            return SAMPLED_ALL - self.demo_pool if self.sampled_test is None else self.sampled_test
        return self.size() - self.demo_pool - self.validation_pool

    @property
    def validation_pool(self) -> int:
        """How many problems the validation split holds (for choosing recipes and settings), after the test split."""
        return VALIDATION_POOL if self.sampled else min(VALIDATION_POOL, (self.size() - self.demo_pool) // 4)

    def order(self, seed: int) -> Order:
        """The space in the order `seed` gives it, made by its ordering (the last few seeds' orders are kept)."""
        if seed not in self._orders:
            if len(self._orders) >= _ORDERS_KEPT:
                self._orders.pop(next(iter(self._orders)))
            self._orders[seed] = self.ordering(self.at, self.name, seed)
        return self._orders[seed]

    def problem(self, seed: int, index: int) -> Problem:
        """The index-th problem of the environment's order for `seed`."""
        return Problem(self.order(seed)[index], self.name, self.op, self.at.form)

    def demonstrations(self, seed: int, count: int) -> list[Problem]:
        """The first `count` problems of the seeded order (count at most the demonstration pool)."""
        if not 0 <= count <= self.demo_pool:
            raise ValueError(f"{self.name}: between 0 and {self.demo_pool} demonstrations, not {count}")
        return [self.problem(seed, i) for i in range(count)]

    def held_out(self, seed: int, count: int | None = HELD_OUT) -> list[Problem]:
        """`count` problems of the test split (None: all of it), the same first ones for any count asked."""
        count = self.test_pool if count is None else min(count, self.test_pool)
        return [self.problem(seed, self.demo_pool + i) for i in range(count)]

    def validation(self, seed: int, count: int | None = HELD_OUT) -> list[Problem]:
        """`count` problems of the validation split (None: all of it): never demonstrated, never in the test split."""
        count = self.validation_pool if count is None else min(count, self.validation_pool)
        start = self.demo_pool + self.test_pool
        return [self.problem(seed, start + i) for i in range(count)]


_ORDERS_KEPT = 16  # seeded orders cached per environment

REGISTERED: dict[str, Environment] = {}  # the named environments, by name, in registry order


def register(env: Environment) -> Environment:
    """Add an environment to the registry; one of the same name (an old one too), short label, alias or coordinates
    is refused."""
    if env.name in REGISTERED or canonical(env.name) in REGISTERED:
        raise ValueError(f"an environment named {env.name!r} is already registered")
    taken = next((f for f in REGISTERED.values() for n in env.names() if n in f.names()), None)
    if taken is not None:
        raise ValueError(f"{env.name!r} would share a name with {taken.name!r}: {', '.join(taken.names())}")
    same = next((f.name for f in REGISTERED.values() if f.at == env.at), None)
    if same is not None:
        raise ValueError(f"{env.name!r} sits at the same coordinates as {same!r}")
    REGISTERED[env.name] = env
    return env


def environment_of(operands: tuple[int, ...], op: str = "+") -> str:
    """The name of the registered environment holding this sum, or '' for a sum outside all of them."""
    return next((f.name for f in REGISTERED.values() if f.op == op and f.contains(operands)), "")


def short_label(name: str) -> str:
    """An environment's short label (`a2x2`) by name (an old name too); the name itself for one not registered."""
    env = REGISTERED.get(canonical(name))
    return env.short if env else name


def name_label(name: str, codes: bool = False) -> str:
    """An environment's brief words by name (`two-digit`), or with `codes` its short label (`a2x2`); the name itself for
    one not registered (a generated environment's id, which has no words); an old name reads as its environment's."""
    env = REGISTERED.get(canonical(name))
    return name_for(env, codes) if env else name


def grid_short(operands: int, digits: int, op: str) -> str:
    """The short label of the environment at these coordinates: `a3x2` is three two-digit numbers added."""
    return f"{operation(op).name[0]}{operands}x{digits}"  # no sign in it: mixes join shorts with `+`


def grid_environment(operands: int, digits: int, op: str) -> Environment:
    """An environment named by its coordinates: `add_3x2` (short `a3x2`) adds three two-digit operands (two calls)."""
    name, numbers, calls = operation(op).name, digits_word(digits), operands - 1
    return Environment(
        f"{name}_{operands}x{digits}",
        grid_short(operands, digits, op),
        numbers_words(operands, digits) + ("" if op == "+" else " subtracted"),  # words that tell environments apart
        f"{operands} {numbers} numbers {operation(op).done}: {calls} call{'s' if calls > 1 else ''}",
        Coordinates(operands, digits, op),
    )


# The plate's two environments are named by their coordinates like every other (`add_2x2`, `add_3x1`); their old
# names are read as aliases (`OLD_NAMES`), and the plate's old `2d` and `3d` are still read wherever typed.
register(
    Environment(
        "add_2x2",
        grid_short(2, 2, "+"),
        "two-digit sums",
        "a+b with a, b in 10..99: one call",
        Coordinates(2, 2, "+"),
        aliases=("2d",),
    )
)
register(
    Environment(
        "add_3x1",
        grid_short(3, 1, "+"),
        "three single digits",
        "a+b+c with single digits: two calls",
        Coordinates(3, 1, "+"),
        aliases=("3d",),
    )
)
# The rest of the grid: operands x digits x operation.
for _operands, _digits, _op in (
    (2, 1, "+"),
    (4, 1, "+"),
    (3, 2, "+"),
    (4, 2, "+"),
    (2, 2, "-"),
    (3, 1, "-"),
    (4, 1, "-"),
    (3, 2, "-"),
):
    register(grid_environment(_operands, _digits, _op))


def dimension_values(dimension: str) -> list[str]:
    """The values a dimension takes over the registered environments, in order."""
    seen = {f.at.value(dimension): None for f in REGISTERED.values()}
    return sorted(seen, key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else math.inf, v))
