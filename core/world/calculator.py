"""The calculator tool: binary `a+b` and `a-b` on small non-negative integers, parsed, never eval'd.

It is binary on purpose: a calculator that accepted `3+4+5` in one call would let a model trained
on one call per sum solve three-operand sums and erase the plate's lesson. Anything it cannot parse
gets the error marker `?|`; it never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .vocab import CLOSE, ERROR

MAX_OPERAND_DIGITS = 3  # operands of at most this many digits; longer calls are malformed
_NUMBER = rf"([0-9]{{1,{MAX_OPERAND_DIGITS}}})"
_CALL = re.compile(rf"{_NUMBER}([+-]){_NUMBER}")
MALFORMED = ERROR + CLOSE


@dataclass(frozen=True)
class Call:
    """A parsed call: left operand, operator, right operand."""

    left: int
    op: str
    right: int

    @property
    def value(self) -> int:
        """The call's result."""
        return self.left + self.right if self.op == "+" else self.left - self.right


def parse_call(body: object) -> Call | None:
    """The call written between `B` and `|`, or None if it is not exactly `a+b` or `a-b`."""
    if not isinstance(body, str):
        return None
    m = _CALL.fullmatch(body)
    if m is None:
        return None
    return Call(int(m.group(1)), m.group(2), int(m.group(3)))


def calculate(body: object) -> str:
    """The text the environment appends for a call: the result and `|`, or `?|` if malformed."""
    call = parse_call(body)
    return MALFORMED if call is None else f"{call.value}{CLOSE}"


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

    def tell(self, body: object) -> str:
        """What the lying calculator appends for a call (`?|` for a malformed one, as the honest one)."""
        call = parse_call(body)
        if call is None:
            return MALFORMED
        return f"{call.value + 1 if self.kind == OFF_BY_ONE else self.value}{CLOSE}"

    def describe(self) -> str:
        """For people: `off by one` or `always 42`."""
        return OFF_BY_ONE if self.kind == OFF_BY_ONE else f"always {self.value}"
