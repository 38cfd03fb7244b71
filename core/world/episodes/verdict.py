"""Scoring an episode against its problem: solved or not, and if not, which kind of failure.

Solved means the final answer equals the true sum, as on the plate. An unsolved episode gets the
first failure found along the procedure: unfinished, no call, a malformed call, the wrong number of
calls, the wrong operands, or an answer that differs from the tool's last result. Under a lying calculator the
procedure is judged on what the calculator told: told 8 for 3+4, the right next call of 3+4+5 is 8+5, so a model
that copies the lie after the right calls has no procedure failure (only `answer differs from tool`, which the
engine's `copied` names), while one that made one call where two belong has both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.episode import End, Episode


class Failure(str, Enum):
    """Why an episode did not solve its sum."""

    UNFINISHED = "unfinished"  # no closed answer within the limits
    NO_CALL = "no call"  # answered without calling the calculator
    MALFORMED_CALL = "malformed call"  # a call the calculator could not parse
    WRONG_CALL_COUNT = "wrong number of calls"  # well-formed calls, but too few or too many
    WRONG_OPERANDS = "wrong operands"  # the right number of calls on the wrong numbers
    ANSWER_DIFFERS = "answer differs from tool"  # calls right, answer not copied


@dataclass(frozen=True)
class Verdict:
    """The outcome of one episode."""

    solved: bool
    failure: Failure | None = None

    def describe(self) -> str:
        """One line for people: `correct` or the failure kind."""
        return "correct" if self.solved else self.failure.value


def judge(episode: Episode, problem: Problem) -> Verdict:
    """Score `episode` as an attempt at `problem`."""
    if episode.end is End.ANSWERED and episode.answer == str(problem.answer):
        return Verdict(True)
    calls = episode.calls
    expected = problem.expected_calls(episode.syntax)
    if episode.end is End.TOO_MANY_CALLS:
        return Verdict(False, Failure.WRONG_CALL_COUNT)
    if episode.end is not End.ANSWERED:
        return Verdict(False, Failure.UNFINISHED)
    if not calls:
        return Verdict(False, Failure.NO_CALL)
    if any(c.result == episode.syntax.malformed for c in calls):
        return Verdict(False, Failure.MALFORMED_CALL)
    if len(calls) != len(expected):
        return Verdict(False, Failure.WRONG_CALL_COUNT)
    if [c.body for c in calls] != _told(expected, episode, problem):  # both as the episode's syntax writes them
        return Verdict(False, Failure.WRONG_OPERANDS)
    return Verdict(False, Failure.ANSWER_DIFFERS)  # right calls give the sum (or the tool's lie): the copy differs


def _told(expected: list[str], episode: Episode, problem: Problem) -> list[str]:
    """The procedure's calls on the results the calculator gave: `expected` (the problem's) when it is honest; under
    a lie, each call after the first on the result told for the one before (told 8 for 3+4: `8+5`). `episode` has
    as many well-formed calls as `expected`."""
    if episode.lie is None:
        return expected
    try:
        told = [int(call.result.removesuffix(episode.syntax.close)) for call in episode.calls[:-1]]
    except ValueError:  # a result that is not a number: nothing to chain on
        return expected
    lefts = [problem.operands[0], *told]
    steps = zip(lefts, problem.operations, problem.operands[1:], strict=True)
    return [episode.syntax.body(left, o, x) for left, o, x in steps]
