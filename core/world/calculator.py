"""The calculator tool and how a call to it is written: binary `a+b` and `a-b`, parsed, never eval'd.

`CallSyntax` is the one record of how a call looks (`B23+45|`), how the calculator parses it and writes
its result (`68|`, or `?|` for a call it cannot parse), and how a demonstration or a verdict reads it;
every writer and reader of calls goes through it. The operators it accepts are the records of
`core.world.operations`, so an operator without one (`*`) is a malformed call, never another operation.

It is binary on purpose: a calculator that accepted `3+4+5` in one call would let a model trained
on one call per sum solve three-operand sums and erase the plate's lesson. It never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from breadth.core.world.operations import OPERATIONS, Operation
from breadth.core.world.vocab import CALL_OPEN, CLOSE, ERROR

MAX_OPERAND_DIGITS = 3  # operands of at most this many digits; longer calls are malformed
_BINARY = re.compile(rf"([0-9]{{1,{MAX_OPERAND_DIGITS}}})([^0-9])([0-9]{{1,{MAX_OPERAND_DIGITS}}})")


@dataclass(frozen=True)
class Call:
    """A parsed call: left operand, operation, right operand."""

    left: int
    operation: Operation
    right: int

    @property
    def op(self) -> str:
        """The operator as written: `+`."""
        return self.operation.symbol

    @property
    def value(self) -> int:
        """The call's result."""
        return self.operation.apply(self.left, self.right)


@dataclass(frozen=True)
class CallSyntax:
    """How a call to the calculator is written, parsed and answered: `B` body `|`, then the result and `|`."""

    open: str = CALL_OPEN  # the model opens a call
    close: str = CLOSE  # closes a call, the tool's result and the final answer
    error: str = ERROR  # the tool's result for a call it cannot parse

    def body(self, left: int, operation: Operation, right: int) -> str:
        """What the model writes between the call's delimiters: `23+45`."""
        return f"{left}{operation.symbol}{right}"

    def write(self, body: str) -> str:
        """A call as the model writes it: `B23+45|`."""
        return f"{self.open}{body}{self.close}"

    def parse(self, body: object) -> Call | None:
        """The call written between the delimiters, or None if it is not exactly `a+b` or `a-b`."""
        if not isinstance(body, str):
            return None
        m = _BINARY.fullmatch(body)
        if m is None or m.group(2) not in OPERATIONS:  # `3*4` with no `*` operation is malformed, not another one
            return None
        return Call(int(m.group(1)), OPERATIONS[m.group(2)], int(m.group(3)))

    def result(self, value: int) -> str:
        """What the environment appends for a result (and the model writes for an answer): `68|`."""
        return f"{value}{self.close}"

    @property
    def malformed(self) -> str:
        """What the environment appends for a call it cannot parse: `?|`."""
        return self.error + self.close

    def calculate(self, body: object) -> str:
        """The text the environment appends for a call: the result and `|`, or `?|` if malformed."""
        call = self.parse(body)
        return self.malformed if call is None else self.result(call.value)


SYNTAX = CallSyntax()  # the plate's: B23+45| 68| 68|
MALFORMED = SYNTAX.malformed


def parse_call(body: object) -> Call | None:
    """The call written between `B` and `|` in the plate's syntax, or None if it is malformed."""
    return SYNTAX.parse(body)


def calculate(body: object) -> str:
    """The text the environment appends for a call in the plate's syntax: `68|`, or `?|` if malformed."""
    return SYNTAX.calculate(body)


OFF_BY_ONE = "off by one"  # a lie: every result one more than the truth


@dataclass(frozen=True)
class Lie:
    """A calculator that lies, for probing whether a model copies the tool or computes on its own.

    `off by one` answers every well-formed call with its result plus one; a number answers every
    well-formed call with that number. Malformed calls still get `?|`: only results are corrupted.
    """

    kind: str  # OFF_BY_ONE or "value"
    value: int = 0  # the number a "value" lie always answers

    @classmethod
    def parse(cls, text: str) -> Lie | None:
        """None for "" (an honest calculator), else the lie; ValueError (one line) for anything else."""
        text = text.strip()
        if not text:
            return None
        if text == OFF_BY_ONE:
            return cls(OFF_BY_ONE)
        if text.isascii() and text.isdigit() and len(text) <= MAX_OPERAND_DIGITS + 1:
            return cls("value", int(text))
        raise ValueError(
            f"a lie is {OFF_BY_ONE!r} or a number of up to {MAX_OPERAND_DIGITS + 1} digits, not {text[:20]!r}"
        )

    def tell(self, body: object, syntax: CallSyntax = SYNTAX) -> str:
        """What the lying calculator appends for a call (`?|` for a malformed one, as the honest one)."""
        call = syntax.parse(body)
        if call is None:
            return syntax.malformed
        return syntax.result(call.value + 1 if self.kind == OFF_BY_ONE else self.value)
