"""Where an environment sits: how many operands, the digits of each operand position, the operation at each gap,
and the call form. The arithmetic of its space lives here: each position's range, how many sums the rules allow,
the index-th candidate tuple, and a bound on its longest episode.

A grid environment has one digit count and one operation throughout (`Coordinates(3, 2, "+")`: `12+34+56`); a
generated environment may vary both by position (`Coordinates(3, (2, 1, 2), "+-")`: `12+3-45`). Uniform
coordinates are kept in the short form, so the grid's environments compare, hash and print as they always did.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from breadth.core.world.arithmetic.calculator import FORMS, MAX_OPERAND_DIGITS, OP, form_named
from breadth.core.world.arithmetic.operations import OPERATIONS, Operation
from breadth.core.world.arithmetic.problem import PLATE_FORM, allowed, operations_of

DIMENSIONS = ("operands", "digits", "op")  # the grid's named dimensions, in display order
ENV_DIMENSIONS = (*DIMENSIONS, "form")  # an environment's: the grid's, and how its calls are written
MAX_DIGITS = 3  # digits an operand position may have (three only in registry.three_digit's environments)


@dataclass(frozen=True)
class Coordinates:
    """Where an environment sits on the named dimensions."""

    operands: int  # numbers in the sum: calls = operands - 1
    digits: int | tuple[int, ...]  # digits of every operand (1: 0..9, 2: 10..99), or of each position
    op: str  # an operation's symbol for every gap, or one symbol per gap (`+-`)
    form: str = PLATE_FORM  # how calls are written and the sum posed (a name in calculator.FORMS)

    def __post_init__(self) -> None:
        if not isinstance(self.operands, int) or not 2 <= self.operands <= 9:
            raise ValueError(f"from 2 to 9 operands, not {self.operands!r}")
        layout = self.digits if isinstance(self.digits, tuple) else (self.digits,) * self.operands
        if len(layout) != self.operands or not all(isinstance(d, int) and 1 <= d <= MAX_DIGITS for d in layout):
            raise ValueError(f"digits: 1 to {MAX_DIGITS} for each of {self.operands} operands, not {self.digits!r}")
        ops = operations_of(self.op, self.operands - 1)
        form = form_named(self.form)
        if len(set(ops)) > 1 and OP not in form.sep:
            raise ValueError(f"the {self.form} form writes one operator for a whole sum, not {self.op!r}")
        if len(set(layout)) == 1:  # uniform: the short form, as the grid's environments have always been written
            object.__setattr__(self, "digits", layout[0])
        if len({o.symbol for o in ops}) == 1:
            object.__setattr__(self, "op", ops[0].symbol)

    @property
    def layout(self) -> tuple[int, ...]:
        """The digits of each operand position."""
        return self.digits if isinstance(self.digits, tuple) else (self.digits,) * self.operands

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The operation at each gap."""
        return operations_of(self.op, self.operands - 1)

    @property
    def uniform(self) -> bool:
        """One digit count and one operation throughout (a grid environment's coordinates)."""
        return isinstance(self.digits, int) and len(self.op) == 1

    @property
    def operation(self) -> Operation:
        """The operation of every gap (ValueError if they differ)."""
        if len(self.op) != 1:
            raise ValueError(f"{self.op!r} mixes operations")
        return OPERATIONS[self.op]

    @property
    def low(self) -> int:
        """The smallest operand (uniform digits only)."""
        return bounds(self._digits())[0]

    @property
    def high(self) -> int:
        """The largest operand (uniform digits only)."""
        return bounds(self._digits())[1]

    def _digits(self) -> int:
        if not isinstance(self.digits, int):
            raise ValueError(f"digits differ by position: {self.digits}")
        return self.digits

    def value(self, dimension: str) -> str:
        """The value on a dimension as text: `2`, `1`, `add`, `infix`; by position `2.1.2`, `add.sub`."""
        if dimension == "op":
            return ".".join(o.name for o in self.operations) if len(self.op) > 1 else self.operation.name
        if dimension == "digits":
            return ".".join(map(str, self.layout)) if isinstance(self.digits, tuple) else str(self.digits)
        if dimension == "form":
            return self.form
        return str(getattr(self, dimension))

    def example(self) -> tuple[int, ...]:
        """A sum at these coordinates an audience reads at a glance, made from them (never typed by hand).

        `+`: numbers of consecutive digits, `3+4+5`, `23+45+67`; `-`: the largest number first, then numbers whose
        digits count down, `9-3-2`, `99-32-21`, small enough that the running result never goes below zero.
        Coordinates that vary by position have no such pattern: ValueError.
        """
        if not self.uniform:
            raise ValueError("coordinates that vary by position have no made-up example")
        if self.op == "+":
            first = 3 if self.digits == 1 else 2  # 3+4+5 and 23+45, the sums the plate and its probes use
            digits = (1 + (first - 1 + i) % 9 for i in itertools.count())  # 1..9, then 1 again
            return tuple(int("".join(str(next(digits)) for _ in range(self.digits))) for _ in range(self.operands))
        low = 2 if self.digits == 1 else 1  # the last number's last digit: 9-3-2, 99-32-21
        rest = [
            int("".join(str(low + k + j) for j in range(self.digits - 1, -1, -1))) for k in range(self.operands - 1)
        ]
        return (self.high, *sorted(rest, reverse=True))

    # the space of sums at these coordinates

    @property
    def radices(self) -> tuple[int, ...]:
        """How many values each position takes."""
        return tuple(bounds(d)[1] - bounds(d)[0] + 1 for d in self.layout)

    @property
    def candidates(self) -> int:
        """Operand tuples before the domain rule (the whole space for `+`)."""
        return math.prod(self.radices)

    def candidate(self, index: int) -> tuple[int, ...]:
        """The index-th candidate tuple in lexicographic order (as itertools.product lists them)."""
        out = []
        for d, radix in zip(reversed(self.layout), reversed(self.radices), strict=True):
            index, r = divmod(index, radix)
            out.append(bounds(d)[0] + r)
        return tuple(reversed(out))

    def every(self):
        """Every candidate tuple in lexicographic order."""
        return itertools.product(*(range(bounds(d)[0], bounds(d)[1] + 1) for d in self.layout))

    def contains(self, operands: tuple[int, ...]) -> bool:
        """True if these operands are a sum at these coordinates (each in its range, the domain rules kept)."""
        ops = tuple(operands)
        if len(ops) != self.operands:
            return False
        if not all(bounds(d)[0] <= x <= bounds(d)[1] for x, d in zip(ops, self.layout, strict=True)):
            return False
        return allowed(ops, self.operations)

    def count(self) -> int:
        """How many sums the space holds, counted without listing it."""
        if self.uniform:
            return self.operation.count(self.low, self.high, self.operands)
        ways: dict[int, int] = {}  # running result -> how many prefixes reach it
        low, high = bounds(self.layout[0])
        ways = dict.fromkeys(range(low, high + 1), 1)
        for d, o in zip(self.layout[1:], self.operations, strict=True):
            nxt: dict[int, int] = {}
            for value, k in ways.items():
                for x in range(bounds(d)[0], bounds(d)[1] + 1):
                    r = o.apply(value, x)
                    if o.floor is None or r >= o.floor:
                        nxt[r] = nxt.get(r, 0) + k
            ways = nxt
        return sum(ways.values())

    def running_ranges(self) -> list[tuple[int, int]]:
        """The range of the running result after each call, carried gap by gap: an operation monotone in each
        argument (`+`, `-`) takes its extremes at the ends of its arguments' ranges; a floor lifts the low end."""
        low, high = bounds(self.layout[0])
        out = []
        for d, o in zip(self.layout[1:], self.operations, strict=True):
            ends = [o.apply(a, x) for a in (low, high) for x in bounds(d)]
            low, high = max(min(ends), o.floor) if o.floor is not None else min(ends), max(ends)
            out.append((low, high))
        return out

    def fits_calculator(self) -> bool:
        """True if every call's left number, the running result, can be written in a call: at most
        MAX_OPERAND_DIGITS digits (999+999+5 would ask a call of 1998, which the calculator cannot read)."""
        return all(high < 10**MAX_OPERAND_DIGITS for _, high in self.running_ranges()[:-1])

    def longest_episode(self) -> int:
        """An upper bound on a solved episode's length in characters, its start token included.

        The running result's range is carried gap by gap (an operation that is monotone in each argument, as `+`,
        `-` and `*` are, takes its extremes at the ends of its arguments' ranges; a floor lifts the low end), and
        each call and result is counted at the longest number its range holds: `*` is bounded by products, not
        sums (99*99 is 9801, which a bound by sums, 198, undercounted).
        """
        form = FORMS[self.form]
        highs = tuple(bounds(d)[1] for d in self.layout)
        length = 1 + len(form.prompt(highs, self.operations[0]))
        low, high = bounds(self.layout[0])
        for d, o, after in zip(self.layout[1:], self.operations, self.running_ranges(), strict=True):
            left = max((low, high), key=lambda v: len(str(v)))  # the longest number the call's left side can be
            length += len(form.write(form.body(left, o, bounds(d)[1])))
            low, high = after
            length += max(len(form.result(low)), len(form.result(high)))
        return length + max(len(form.result(low)), len(form.result(high)))


def bounds(digits: int) -> tuple[int, int]:
    """The smallest and largest operand of this many digits: (0, 9), (10, 99), (100, 999)."""
    return (0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1)
