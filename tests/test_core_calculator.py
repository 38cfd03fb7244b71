"""The calculator tool: exact binary `a+b` / `a-b` results, `?|` for anything else, never raising, never eval."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

import breadth.core.world.arithmetic.calculator
from breadth.core.world.arithmetic.calculator import MALFORMED, MAX_OPERAND_DIGITS, SYNTAX, Call, Lie, calculate
from breadth.core.world.arithmetic.operations import SUB


@pytest.mark.parametrize(
    "body, result",
    [
        ("23+45", "68|"),
        ("7-9", "-2|"),
        ("3+4", "7|"),
        ("7+5", "12|"),
        ("0+0", "0|"),
        ("999+999", "1998|"),
        ("100-1", "99|"),
        ("007+1", "8|"),
        ("5-5", "0|"),
    ],
)
def test_good_calls(body, result):
    """A well-formed binary call gets its exact result followed by `|`."""
    assert calculate(body) == result


def test_malformed_marker_is_question_bar():
    """The error marker the environment appends is `?|`."""
    assert MALFORMED == "?|"


@pytest.mark.parametrize(
    "body",
    [
        "3+4+5",  # three operands: the calculator is binary on purpose
        "",
        "+",
        "-",
        "3+",
        "+3",
        "1234+1",  # operand over three digits
        "1+1234",
        "a+b",
        "3*4",  # in the vocabulary, but not an operation the calculator does
        "\u0663+4",  # Arabic-Indic three
        "3+\uff14",  # fullwidth four
        "\u00b2+1",  # superscript two (isdigit() is True)
        " 3+4",
        "3 + 4",
        "3+4 ",
        "3+4\n",
        "B3+4",
        "3+4|",
        "3+-4",
        "-3+4",
        "3--4",
        "?",
        "\x00",
        "1" * 10_000 + "+1",
        "1+" * 5_000 + "1",
    ],
)
def test_malformed_calls(body):
    """Anything but exactly `a+b` or `a-b` on 1-3 ASCII digits gets `?|`."""
    assert calculate(body) == "?|"


@pytest.mark.parametrize("body", [None, 3, 3.5, b"3+4", ["3", "+", "4"], object()])
def test_non_text_is_malformed_not_an_error(body):
    """A call body that is not text gets `?|` rather than an exception."""
    assert calculate(body) == "?|"
    assert SYNTAX.parse(body) is None


def test_parse_call_fields():
    """The plate syntax's parser splits a call into left operand, operator and right operand with its value."""
    assert SYNTAX.parse("12-30") == Call(12, SUB, 30)
    assert SYNTAX.parse("12-30").value == -18
    assert SYNTAX.parse("12+30").value == 42
    assert SYNTAX.parse("12*30") is None


def _oracle(body: str) -> str:
    """The documented contract, written independently: one operator between two runs of 1-3 ASCII digits."""
    ops = [i for i, c in enumerate(body) if c in "+-"]
    if len(ops) != 1:
        return "?|"
    left, right = body[: ops[0]], body[ops[0] + 1 :]
    ok = all(0 < len(s) <= MAX_OPERAND_DIGITS and all(c in "0123456789" for c in s) for s in (left, right))
    if not ok:
        return "?|"
    value = int(left) + int(right) if body[ops[0]] == "+" else int(left) - int(right)
    return f"{value}|"


def test_every_short_string_over_a_small_alphabet():
    """Every string of up to 5 characters over digits, operators and odd symbols gets the contract's answer."""
    alphabet = "09+-*B|? \u0663"
    n = 0
    for length in range(6):
        for chars in itertools.product(alphabet, repeat=length):
            body = "".join(chars)
            out = calculate(body)
            assert isinstance(out, str) and out.endswith("|")
            assert out == _oracle(body), body
            n += 1
    assert n == sum(len(alphabet) ** k for k in range(6))


def test_every_binary_call_over_small_operands():
    """Every `a+b` and `a-b` with a, b in 0..120 gives the exact integer result."""
    for a in range(121):
        for b in range(121):
            assert calculate(f"{a}+{b}") == f"{a + b}|"
            assert calculate(f"{a}-{b}") == f"{a - b}|"


def test_source_never_evaluates_code():
    """The calculator's source never calls eval or exec (nor the compile builtin): it parses, it does not execute."""
    source = Path(breadth.core.world.arithmetic.calculator.__file__).read_text()
    tree = ast.parse(source)
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attrs = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not {"eval", "exec", "compile", "__import__"} & names
    assert not {"eval", "exec", "literal_eval"} & attrs  # re.compile is fine: a regex, not code
    assert not re.search(r"\b(eval|exec)\s*\(", source)


@pytest.mark.parametrize(
    "lie, body, told",
    [("off by one", "23+45", "69|"), ("off by one", "9-9", "1|"), ("42", "3+4", "42|"), ("off by one", "3+", "?|")],
)
def test_a_lying_calculator_corrupts_results_but_not_the_error_marker(lie, body, told):
    """`off by one` adds one to every result, a number replaces every result; a malformed call still gets `?|`."""
    assert Lie.parse(lie).tell(body) == told


@pytest.mark.parametrize("text", ["sometimes", "-1", "12345", "4.5", "٣"])
def test_a_lie_that_is_not_one_is_refused_in_one_line(text):
    """Only 'off by one' or a number of up to four digits is a lie; '' is the honest calculator."""
    assert Lie.parse("") is None
    with pytest.raises(ValueError) as e:
        Lie.parse(text)
    assert "\n" not in str(e.value)
