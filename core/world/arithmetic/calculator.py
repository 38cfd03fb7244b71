"""The calculator tool and how a call to it is written: binary calls such as `a+b`, parsed, never eval'd.

`CallSyntax` is the one record of a call's form: how a call looks (`B23+45|`), how the calculator parses
it and writes its result (`68|`, or `?|` for a call it cannot parse), how the task is posed so that the
prompt says which form this environment wants, and how a demonstration or a verdict reads it; every
writer and reader of calls goes through it. The operators it accepts are the records of
`core.world.arithmetic.operations`, so an operator without one (`*`) is a malformed call, never another operation.

`FORMS` names the forms an environment may ask for, the plate's first (`form_named` refuses any other
name in one line). A form is kept only after measuring that a model fine-tuned on several forms uses it
correctly (`python -m bench.forms_trial`; numbers in the README); `DROPPED` holds those measured and not kept.

It is binary on purpose: a calculator that accepted `3+4+5` in one call would let a model trained
on one call per sum solve three-operand sums and erase the plate's lesson. It never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from breadth.core.world.arithmetic.operations import OPERATIONS, Operation
from breadth.core.world.text.vocab import BOS, CALL_OPEN, CHARS, CLOSE, ERROR, PAD

MAX_OPERAND_DIGITS = 3  # operands of at most this many digits; longer calls are malformed
OP = "{op}"  # where a form's layout writes the operator
_WRITTEN = set(CHARS) - {PAD, BOS}  # what a form may write besides digits (never padding or the start of a line)
_OPERAND = f"[0-9]{{1,{MAX_OPERAND_DIGITS}}}"  # an operand in a call: 1-3 ASCII digits


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


class FormError(ValueError):
    """A call form that is unknown or cannot work; the message is one line for people."""


@dataclass(frozen=True)
class CallSyntax:
    """A form of calling the calculator: `open` body `call_close`, then the result and `close`.

    The body lays out the arguments and the operator: `lead`, the arguments joined by `sep`, then `tail`,
    with `{op}` standing for the operator (exactly once): `23+45`, `+(23,45)`, `23,45+`. The prompt lays out
    the whole sum the same way inside `frame` and ends with `=`, so it shows the form it wants.
    """

    name: str = "infix"  # the form's name in FORMS
    open: str = CALL_OPEN  # the model opens a call
    call_close: str = CLOSE  # the model closes a call
    close: str = CLOSE  # closes the tool's result and the final answer
    error: str = ERROR  # the tool's result for a call it cannot parse
    lead: str = ""  # written before the arguments
    sep: str = OP  # written between the arguments
    tail: str = ""  # written after the arguments
    frame: tuple[str, str] = ("", "")  # written around the sum in the prompt, before its `=`
    about: str = field(default="the operator between the numbers: B23+45|", compare=False)  # the form in words

    def __post_init__(self) -> None:
        layout = self.lead + self.sep + self.tail
        if layout.count(OP) != 1:
            raise FormError(f"form {self.name!r}: the operator is written once in a call, not {layout.count(OP)}")
        written = layout.replace(OP, "") + self.open + self.call_close + self.close + self.error + "".join(self.frame)
        outside = next((c for c in written if c not in _WRITTEN or c.isdigit()), None)
        if outside is not None:
            raise FormError(f"form {self.name!r}: {outside!r} is a digit or outside the vocabulary")
        if not all(len(c) == 1 for c in (self.open, self.call_close, self.close)) or self.open == self.close:
            raise FormError(f"form {self.name!r}: calls open and close on one character each, not on the answer's")
        if self.call_close in layout:
            raise FormError(f"form {self.name!r}: a call would close early on the {self.call_close!r} it writes")

    def lay_out(self, operands: tuple[int, ...], operation: Operation) -> str:
        """Numbers and their operator as this form writes them, in a call or a prompt: `3+4+5`, `+(3,4,5)`."""
        text = self.lead + self.sep.join(map(str, operands)) + self.tail
        return text.replace(OP, operation.symbol)

    def prompt(self, operands: tuple[int, ...], operation: Operation) -> str:
        """The task as posed in this form: `23+45=`, `+(23,45)=`, `(3+4+5)=`."""
        return f"{self.frame[0]}{self.lay_out(operands, operation)}{self.frame[1]}="

    def body(self, left: int, operation: Operation, right: int) -> str:
        """What the model writes between the call's delimiters: `23+45`, `+(23,45)`."""
        return self.lay_out((left, right), operation)

    def write(self, body: str) -> str:
        """A call as the model writes it: `B23+45|`."""
        return f"{self.open}{body}{self.call_close}"

    @cached_property
    def _pattern(self) -> re.Pattern:
        """A binary body: the layout with two operands and the operator as groups `a`, `op`, `b`."""
        text = f"{re.escape(self.lead)}(?P<a>{_OPERAND}){re.escape(self.sep)}(?P<b>{_OPERAND}){re.escape(self.tail)}"
        return re.compile(text.replace(re.escape(OP), "(?P<op>[^0-9])"))

    def parse(self, body: object) -> Call | None:
        """The call written between the delimiters, or None if it is not exactly this form's `a+b` or `a-b`."""
        if not isinstance(body, str):
            return None
        m = self._pattern.fullmatch(body)
        if m is None or m.group("op") not in OPERATIONS:  # `3*4` with no `*` operation is malformed, not another one
            return None
        return Call(int(m.group("a")), OPERATIONS[m.group("op")], int(m.group("b")))

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


SYNTAX = CallSyntax()  # the plate's: 23+45= B23+45| 68| 68|
MALFORMED = SYNTAX.malformed

FORMS: dict[str, CallSyntax] = {}  # name -> form, the plate's first


def register_form(form: CallSyntax) -> CallSyntax:
    """Add a form; one whose name is taken, or whose prompts or calls read as another's, is refused."""
    if form.name in FORMS:
        raise FormError(f"a call form named {form.name!r} is already registered")
    add = OPERATIONS["+"]
    same = next(
        (
            f.name
            for f in FORMS.values()
            if f.prompt((23, 45), add) == form.prompt((23, 45), add)
            or f.write(f.body(23, add, 45)) == form.write(form.body(23, add, 45))
        ),
        None,
    )
    if same is not None:
        raise FormError(f"form {form.name!r} writes its prompts or calls as {same!r} does")
    FORMS[form.name] = form
    return form


def form_named(name: str) -> CallSyntax:
    """The registered form called `name`; FormError (one line) naming the forms for any other."""
    form = FORMS.get(name.strip().lower() if isinstance(name, str) else name)
    if form is None:
        raise FormError(f"no call form {str(name)[:20]!r}; the forms are {', '.join(FORMS)}")
    return form


register_form(SYNTAX)
# Kept after measuring (`python -m bench.forms_trial`, numbers in the README): fine-tuned on every candidate form, and
# then on the forms that passed, a model solved at least 90% of each of the plate's kinds in it (mean over seeds).
register_form(CallSyntax("postfix", sep=",", tail=OP, about="the numbers first, then the operator: B23,45+|"))
DROPPED = (  # measured beside them and not kept: read as well (calls in form), solved less often
    # 85% and 84% of two-digit and three-digit sums trained on all four candidates (seeds 0-5)
    CallSyntax("call", lead=OP + "(", sep=",", tail=")", about="the operator as the tool's name: B+(23,45)|"),
    # 94% / 97% on all four, then 57% of two-digit sums (67 5 100) trained on the three that passed
    CallSyntax("paren", open="(", call_close=")", frame=("(", ")"), about="calls in parentheses: (23+45)"),
)


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
