"""A problem: operands joined by an operation at each gap, posed in a call form, and its demonstration.

`op` is one operation's symbol for every gap (`3+4+5`), or one symbol per gap (`12+3-45`: `"+-"`). The
procedure is the same either way: call on the first two operands, then on each running result and the
next operand with that gap's operation, then answer; a `-` never takes the running result below zero
(such operands belong to no environment). `form` names the call form (`core.world.arithmetic.calculator.FORMS`):
how the prompt poses the sum and how calls are written.
"""

from __future__ import annotations

from dataclasses import dataclass

from breadth.core.world.arithmetic.calculator import FORMS, OP, SYNTAX, CallSyntax, form_named
from breadth.core.world.arithmetic.operations import OPERATIONS, Operation, operation
from breadth.core.world.text.transcript import Role, Transcript

PLATE_FORM = SYNTAX.name  # the plate's form, `23+45=` and `B23+45|`: every problem's unless it names another


# The names a problem's `environment` holds: the plate's environments were named `two_digit` and `three_digit` before
# every environment was named by its coordinates (`add_2x2`, `add_3x1`). Stores, checkpoints, mix specs, JSON
# results and scripts written then hold the old names (and the ids made of them, `breadth/two-digit-v1`): every
# reader of a name maps it here. What was made from the old names keeps them (`first_name`): the seeded orders, run
# keys and curve names, so no stored run or split moves.
OLD_NAMES = {"two_digit": "add_2x2", "three_digit": "add_3x1"}  # an old name -> the environment's name
FIRST_NAMES = {new: old for old, new in OLD_NAMES.items()}


def canonical(name: str) -> str:
    """The environment's name for a name as stored or typed: `two_digit` -> `add_2x2`; any other name as it is."""
    return OLD_NAMES.get(name, name)


def first_name(name: str) -> str:
    """The name an environment's seeded orders and run keys were first made with: `add_2x2` -> `two_digit`; any
    other name as it is."""
    return FIRST_NAMES.get(name, name)


def operations_of(op: str, gaps: int) -> tuple[Operation, ...]:
    """The operation at each of `gaps` gaps: `op` repeated, or one per gap; ValueError (one line) otherwise."""
    if not isinstance(op, str) or not op:
        raise ValueError(f"no operation {str(op)[:10]!r}; the operations are {' '.join(OPERATIONS)}")
    if len(op) == 1:
        return (operation(op),) * gaps
    if len(op) != gaps:
        raise ValueError(f"{op!r}: one operation, or one per gap ({gaps}), not {len(op)}")
    return tuple(operation(symbol) for symbol in op)


def running(operands: tuple[int, ...], ops: tuple[Operation, ...]) -> list[int]:
    """The running results of the left-to-right procedure, one per call: `12+3-5` -> [15, 10]."""
    first, *rest = operands
    out, acc = [], first
    for x, o in zip(rest, ops, strict=True):
        acc = o.apply(acc, x)
        out.append(acc)
    return out


def allowed(operands: tuple[int, ...], ops: tuple[Operation, ...]) -> bool:
    """True if no running result breaks its operation's domain rule (never below zero, after a `-`)."""
    return all(o.floor is None or r >= o.floor for r, o in zip(running(operands, ops), ops, strict=True))


@dataclass(frozen=True)
class Problem:
    """A task: its operands, the operation(s) joining them, its call form and its environment ('' for a probe)."""

    operands: tuple[int, ...]
    environment: str = ""
    op: str = "+"  # an operation's symbol, or one per gap (`+-`); a symbol without a record is refused
    form: str = PLATE_FORM  # the call form's name (FORMS); an unknown one is refused

    def __post_init__(self) -> None:
        operations_of(self.op, len(self.operands) - 1)
        if self.form not in FORMS:
            form_named(self.form)  # raises, naming the forms
        if len(set(self.op)) > 1 and OP not in self.syntax.sep:
            raise ValueError(f"the {self.form} form writes one operator for a whole sum, not {self.op!r}")

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The operation at each gap."""
        return operations_of(self.op, len(self.operands) - 1)

    @property
    def operation(self) -> Operation:
        """The operation of every gap; ValueError for a sum that mixes operations."""
        if len(set(self.op)) != 1:
            raise ValueError(f"{self.prompt} mixes operations")
        return operation(self.op[0])

    @property
    def syntax(self) -> CallSyntax:
        """The call form: how the prompt is posed and calls are written."""
        return FORMS[self.form]

    @property
    def prompt(self) -> str:
        """The task as posed, e.g. `23+45=`, `9-4-3=`, `12+3-45=` or, in the postfix form, `23,45+=`."""
        syntax = self.syntax
        if len(set(self.op)) == 1:
            return syntax.prompt(self.operands, operation(self.op[0]))
        gaps = zip(self.operations, self.operands[1:], strict=True)  # a form with the operator between numbers
        text = syntax.lead + str(self.operands[0]) + "".join(syntax.sep.replace(OP, o.symbol) + str(x) for o, x in gaps)
        return f"{syntax.frame[0]}{text + syntax.tail}{syntax.frame[1]}="

    def running(self) -> list[int]:
        """The running results of the left-to-right procedure, one per call."""
        return running(self.operands, self.operations)

    @property
    def answer(self) -> int:
        """The true result."""
        return self.running()[-1] if len(self.operands) > 1 else self.operands[0]

    def expected_calls(self, syntax: CallSyntax | None = None) -> list[str]:
        """The bodies of the left-to-right procedure's calls: `a+b`, then `result+c`, ... (in `syntax`, else the
        problem's own form)."""
        syntax = self.syntax if syntax is None else syntax
        lefts = [self.operands[0], *self.running()[:-1]]
        steps = zip(lefts, self.operations, self.operands[1:], strict=True)
        return [syntax.body(left, o, x) for left, o, x in steps]

    def demonstration(self, syntax: CallSyntax | None = None) -> Transcript:
        """The transcript a demonstrator writes: each call, the tool's result, then the answer."""
        syntax = self.syntax if syntax is None else syntax
        t = Transcript.of((Role.PROMPT, self.prompt))
        for call in self.expected_calls(syntax):
            t.add(Role.ACTION, syntax.write(call))
            t.add(Role.ENVIRONMENT, syntax.calculate(call))
        t.add(Role.ACTION, syntax.result(self.answer))
        return t
