"""What people read of an environment: its label, its brief words, its column headers, numbers and coordinates in words.

An `Environment` (`core.world.environments.environment`) is the task: its coordinates, space, seeded orders and
splits. How it is named for people lives here, as functions of an environment, so the class holds only what drawing
and scoring need and a change of wording never touches it. Nothing here looks an environment up by name: the
lookups by name (`short_label`, `name_label`) sit beside the registry in `environment`, which imports this module
for the words it builds its environments with (one direction: this module imports no environment).
"""

from __future__ import annotations

from typing import Protocol

from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.arithmetic.problem import Problem

COUNT_WORDS = {2: "two", 3: "three", 4: "four"}  # how many numbers, said as people say it


class Labelled(Protocol):
    """An environment as its labels read it: its name, short label, words and coordinates, and its problems."""

    name: str  # the registry key, e.g. `add_2x2`
    short: str  # its coordinates as a code, e.g. `a2x2`
    words: str  # what its sums are, in plain words, e.g. `two-digit sums`
    at: Coordinates

    def problem(self, seed: int, index: int) -> Problem:
        """The index-th problem of its order for `seed`."""
        ...


def digits_word(digits: int) -> str:
    """How people call numbers of this many digits: `single-digit`, `two-digit`, `3-digit`."""
    return {1: "single-digit", 2: "two-digit"}.get(digits, f"{digits}-digit")


def numbers_words(operands: int, digits: int) -> str:
    """The numbers of a sum in plain words: `three single digits`, `two two-digit numbers`."""
    count = COUNT_WORDS.get(operands, str(operands))
    return f"{count} single digits" if digits == 1 else f"{count} {digits_word(digits)} numbers"


def example(env: Labelled) -> Problem:
    """A sum of this environment an audience reads at a glance: made from its coordinates (`23+45`, `3+4+5`), or,
    where they vary by position, its first problem of seed 0."""
    if not env.at.uniform:
        return env.problem(0, 0)
    return Problem(env.at.example(), env.name, env.at.op, env.at.form)


def label(env: Labelled) -> str:
    """For people, read without the README: its words and an example, `three single digits 3+4+5`."""
    return f"{env.words} {example(env).prompt.removesuffix('=')}"


def brief(env: Labelled) -> str:
    """Its words for a narrow place (a lane's title, a row's name), read without the README: `two-digit`,
    `3 singles`, `4 two-digit minus`; a generated environment has no words short enough and keeps its id."""
    if not env.at.uniform:
        return env.short
    n, digits = env.at.operands, env.at.digits
    numbers = f"{n} singles" if digits == 1 else "two-digit" if n == 2 else f"{n} {digits_word(digits)}"
    return numbers if env.at.op == "+" else f"{numbers} minus"


def header(env: Labelled) -> tuple[str, str]:
    """Its name in two lines of at most five characters for a narrow column: what is done to how many numbers,
    then their range (`add 3` over `1-9`: three single digits added; `sub 2` over `10-99`)."""
    if not env.at.uniform:
        return "", env.short
    return f"{env.at.operation.name} {env.at.operands}", f"{env.at.low}-{env.at.high}"


def name_for(env: Labelled, codes: bool = False) -> str:
    """Its brief words, or, where a person asked for codes, its short label (`a3x1`)."""
    return env.short if codes else brief(env)


def column(env: Labelled, codes: bool = False) -> str:
    """Its matrix column's words on one line, `add 3 0-9` (`header`), or, where a person asked for codes, its
    short label (`a3x1`): an environment among the others of the grid (the training form's counts)."""
    return env.short if codes else " ".join(filter(None, header(env)))


def where_words(where: str) -> str:
    """Coordinates as `--where` takes them, in words: `operands=3 op=add` -> `3 numbers, add` (`digits=1`:
    `single-digit`; `op`: the matrix's word); what follows a comma, and words that are not coordinates (`every
    environment`), as they are."""
    head, comma, rest = where.partition(", ")
    parts = [part.partition("=") for part in head.split(" ")]
    if not all(eq and dimension and value for dimension, eq, value in parts):
        return where
    words = []
    for dimension, _, value in parts:
        if dimension == "operands":
            words.append(f"{value} numbers")
        elif dimension == "digits" and value.isdigit():
            words.append(digits_word(int(value)))
        else:
            words.append(value if dimension == "op" else f"{dimension} {value}")
    return ", ".join(words) + comma + rest
