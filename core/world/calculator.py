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
