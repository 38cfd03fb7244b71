"""The operations a sum may use, each one record: its symbol, how it applies, its domain rule and its words.

Every place that writes, parses, computes or describes an operation reads it here, so adding one is one
record in `OPERATIONS`, and a symbol that is not there (`*`) cannot become a Problem, a call's
operator or an environment's coordinate: `operation("*")` refuses it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Operation:
    """An operation on non-negative integers, applied left to right as the calculator applies it."""

    symbol: str  # how it is written in prompts and calls: `+`
    name: str  # in environment names and selectors: `add` (add_3x2, @op:add)
    verb: str  # what an environment of it does, for refusals: `adds`
    done: str  # how an environment's numbers are combined, for descriptions: `added`
    apply: Callable[[int, int], int]  # (left, right) -> the calculator's result
    floor: int | None = None  # no running result may go below this (None: no rule)

    def __repr__(self) -> str:
        return f"Operation({self.symbol!r})"

    def running(self, operands: Iterable[int]) -> list[int]:
        """The running results of the left-to-right procedure, one per call: `3+4+5` -> [7, 12]."""
        first, *rest = operands
        out, acc = [], first
        for x in rest:
            acc = self.apply(acc, x)
            out.append(acc)
        return out

    def count(self, low: int, high: int, n: int) -> int:
        """How many tuples of `n` operands in low..high the rule allows (for spaces too large to list)."""
        if self.floor is None:
            return (high - low + 1) ** n
        # a floored subtraction: the first operand at least the others' total (plus the floor); count by that total
        ways = {0: 1}
        for _ in range(n - 1):
            nxt: dict[int, int] = {}
            for total, k in ways.items():
                for x in range(low, high + 1):
                    nxt[total + x] = nxt.get(total + x, 0) + k
            ways = nxt
        return sum(k * max(0, high - max(low, t + self.floor) + 1) for t, k in ways.items())


ADD = Operation("+", "add", "adds", "added", operator.add)
SUB = Operation("-", "sub", "subtracts", "subtracted left to right, never below zero", operator.sub, floor=0)
OPERATIONS: dict[str, Operation] = {op.symbol: op for op in (ADD, SUB)}  # symbol -> operation


def operation(symbol: str) -> Operation:
    """The operation written `symbol`; ValueError (one line) for a symbol no operation has."""
    try:
        return OPERATIONS[symbol]
    except (KeyError, TypeError):
        known = " ".join(OPERATIONS)
        raise ValueError(f"no operation {str(symbol)[:10]!r}; the operations are {known}") from None
