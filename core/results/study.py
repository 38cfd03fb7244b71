"""A study's plan, written before its runs: a TOML file naming the curves and transfer maps to run, in order.

A study is what the protocol asks for before any result is seen: its question, its steps (each a `breadth curve`
or `breadth transfer` with its flags: pools, designs, N, seeds, splits) and, once results are in, what was chosen
after looking at them. `breadth study FILE` runs every step (resuming, as each command does) and records each run
a step stored under the plan's hash (the file's bytes), so a run always says which plan it was run for, and a plan
edited after its runs shows as one whose runs were stored under another version.

    question = "Does the model solve postfix subtraction after training that saw its parts?"
    chosen_after_results = []  # filled in, with reasons, only after a result was seen

    [[step]]
    name = "the map"
    command = "transfer"
    args = ["--where", "operands=3", "--hold", "form=postfix,op=sub", "--vary", "all", "--seeds", "0-4"]
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from breadth.core.storage.files import read_regular
from breadth.core.world.runs.recipes import did_you_mean
from breadth.core.world.text.shown import shown

COMMANDS = ("curve", "transfer")  # what a step runs: the commands of the breadth curve's protocol
RUNNER_FLAGS = ("--store", "--workers", "--cluster")  # the study's own: every step runs where the study runs
MAX_BYTES = 256 * 1024  # a plan is a page of text, not a data file
KEYS = {"question", "chosen_after_results", "step"}
STEP_KEYS = {"name", "command", "args"}


class StudyError(ValueError):
    """A study file that cannot be run; the message is one line naming the file."""


@dataclass(frozen=True)
class Step:
    """One step of a study: a command of the protocol and its flags, as typed after `breadth COMMAND`."""

    name: str  # how the report names it
    command: str  # one of COMMANDS
    args: tuple[str, ...]  # its flags, without the study's own (RUNNER_FLAGS)
    number: int = 1  # its place in the plan, from 1

    @property
    def where(self) -> str:
        """How a message names it: `step 2 (the map)`, or `step 2` when it has no name of its own."""
        own = self.name != f"step {self.number}"
        return f"step {self.number}" + (f" ({shown(self.name)})" if own else "")


@dataclass(frozen=True)
class Study:
    """A plan: its question, its steps in order, what was chosen after looking at results, and its hash."""

    path: Path
    question: str
    steps: tuple[Step, ...]
    chosen_after: tuple[str, ...]  # each a choice made after a result was seen, with its reason
    plan_hash: str  # sha256 of the file's bytes (16 hex digits): any edit makes another plan

    @classmethod
    def read(cls, path: str | Path) -> Study:
        """The study in the file at `path`; StudyError (one line) for one that cannot be run."""
        path = Path(path)
        data = read_regular(path, MAX_BYTES)
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise StudyError(f"{shown(path)}: not a study file (TOML): {shown(str(e))}") from None
        unknown = sorted(set(table) - KEYS)
        if unknown:
            raise StudyError(f"{shown(path)}: unknown key {shown(unknown[0])}{did_you_mean(unknown[0], KEYS)}")
        question = table.get("question", "")
        chosen = table.get("chosen_after_results", [])
        if not isinstance(question, str) or not question.strip():
            raise StudyError(f'{shown(path)}: a study states its question (question = "...")')
        if not isinstance(chosen, list) or not all(isinstance(c, str) for c in chosen):
            raise StudyError(f"{shown(path)}: chosen_after_results is a list of sentences")
        steps = table.get("step", [])
        if not isinstance(steps, list) or not steps:
            raise StudyError(f"{shown(path)}: no steps: give at least one [[step]] with a command and its args")
        made = tuple(_step(path, i, step) for i, step in enumerate(steps, 1))
        names = [s.name for s in made]
        if len(set(names)) != len(names):
            raise StudyError(f"{shown(path)}: two steps are named {shown(_first_repeat(names))}")
        words = " ".join(question.split())  # a question may be written over several lines; it is read as one
        return cls(path, words, made, tuple(" ".join(c.split()) for c in chosen), hashlib.sha256(data).hexdigest()[:16])


def _step(path: Path, number: int, step: object) -> Step:
    """Step `number` of the file, checked; StudyError (one line) naming the file and the step."""
    where = f"{shown(path)}: step {number}"
    if not isinstance(step, dict):
        raise StudyError(f"{where}: a [[step]] table, not {type(step).__name__}")
    unknown = sorted(set(step) - STEP_KEYS)
    if unknown:
        raise StudyError(f"{where}: unknown key {shown(unknown[0])}{did_you_mean(unknown[0], STEP_KEYS)}")
    command, args = step.get("command"), step.get("args", [])
    if command not in COMMANDS:
        near = did_you_mean(command, COMMANDS) if isinstance(command, str) else ""
        raise StudyError(f"{where}: command is one of {', '.join(COMMANDS)}, not {shown(repr(command))}{near}")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise StudyError(f"{where}: args is a list of strings, as typed after `breadth {command}`")
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag in RUNNER_FLAGS:
            raise StudyError(f"{where}: {flag} is the study's to give (`breadth study FILE {flag} ...`), not a step's")
    name = step.get("name", f"step {number}")
    if not isinstance(name, str) or not name.strip():
        raise StudyError(f"{where}: name is a few words")
    return Step(name.strip(), command, tuple(args), number)


def _first_repeat(names: list[str]) -> str:
    seen: set[str] = set()
    return next(n for n in names if n in seen or seen.add(n))
