"""Reading a sum typed by a person (`23+45`, `3+4+5`, `9-4-3`, `123+4`) into a Problem, with one-line refusals.

Probes may lie outside every environment, so people can test how far a procedure reaches; they must
only fit what the calculator and the context can hold: one operation, every call of the
left-to-right procedure parses (no running result below zero), and the solved episode fits the
model's context. The Problem names the environment that holds the sum, or '' for none.

A probe may name its environment first (`a3x2: 12+34+56`, by name or short label): then a sum outside
that environment (another operation, another count of numbers, an operand outside its range) is refused
in one line, so a prober checking one environment cannot pose another by a slip of the finger.
"""

from __future__ import annotations

import re

from breadth.core.world.arithmetic.calculator import MAX_OPERAND_DIGITS, SYNTAX
from breadth.core.world.arithmetic.operations import OPERATIONS
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED, environment_of
from breadth.core.world.environments.registry import environment_named
from breadth.core.world.episodes.episode import MAX_LENGTH

MAX_OPERANDS = 4  # a+b+c+d: three calls
_SUM = re.compile(r"[0-9]+(?:([^0-9])[0-9]+)(?:\1[0-9]+)*")  # one sign throughout (an operation's: checked first)


class SumError(ValueError):
    """Text that is not a sum the playground can pose."""


def parse_sum(text: str) -> Problem:
    """The Problem for a typed sum such as `23+45` or `a3x2: 12+34+56` (a trailing `=` and spaces are ignored)."""
    named, colon, rest = text.partition(":")
    if not colon:
        return _parse(text)
    env = environment_named(named)
    if env is None:
        shorts = ", ".join(f.short for f in REGISTERED.values())
        raise SumError(f"no environment {named.strip()[:20]!r} before the ':'; name one of {shorts}")
    problem = _parse(rest)
    why = env.refusal(problem.operands, problem.op)
    if why:
        raise SumError(why)
    return problem


def _parse(text: str) -> Problem:
    s = text.replace(" ", "").removesuffix("=")
    if not s:
        raise SumError("type a sum such as 23+45, 3+4+5 or 9-4-3")
    if len(s) > 20:
        raise SumError(
            f"too long ({len(s)} characters): at most {MAX_OPERANDS} numbers of up to {MAX_OPERAND_DIGITS} digits"
        )
    bad = next((c for c in s if not (c.isascii() and (c.isdigit() or c in OPERATIONS))), None)
    if bad is not None:
        first = (text.split() or [""])[0]
        if first and environment_named(first) is not None:
            raise SumError(f"put a ':' after the environment's name, e.g. {first}: followed by its sum")
        signs = " and ".join(OPERATIONS)
        raise SumError(f"{bad!r} is not allowed: only digits, {signs} (e.g. 23+45 or 9-4)")
    m = _SUM.fullmatch(s)
    if m is None:
        used = [sign for sign in OPERATIONS if sign in s]
        if len(used) > 1 and s[0].isdigit():
            raise SumError(f"{text.strip()!r} mixes {' and '.join(used)}: one operation per sum, e.g. 3+4+5 or 9-4-3")
        raise SumError(f"{text.strip()!r} is not a sum: write numbers joined by single + or - signs, e.g. 3+4+5")
    op = m.group(1)
    parts = s.split(op)
    operands = tuple(int(x) for x in parts)
    if len(operands) > MAX_OPERANDS:
        raise SumError(f"at most {MAX_OPERANDS} numbers, got {len(operands)}")
    if any(len(x) > MAX_OPERAND_DIGITS for x in parts):
        raise SumError(f"numbers of at most {MAX_OPERAND_DIGITS} digits (the calculator's limit)")
    problem = Problem(operands, environment_of(operands, op), op)
    if min(problem.running()) < 0:
        raise SumError(f"{text.strip()!r} goes below zero; the calculator works with numbers from 0 up")
    if any(SYNTAX.parse(call) is None for call in problem.expected_calls()):
        raise SumError(f"a running total passes {MAX_OPERAND_DIGITS} digits, more than the calculator takes")
    needed = len(problem.demonstration().text) + 1  # and the start token
    if needed > MAX_LENGTH:
        raise SumError(
            f"solving it takes {needed} characters, more than the model's {MAX_LENGTH}-character "
            "context; try fewer or shorter numbers"
        )
    return problem
