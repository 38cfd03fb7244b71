"""Scoring an episode against its problem: solved or not, and if not, which kind of failure.

Solved means the final answer equals the true sum, as on the plate. An unsolved episode gets the
first failure found along the procedure: unfinished, no call, a malformed call, the wrong number of
calls, the wrong operands, or an answer that differs from the tool's last result.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from breadth.core.world.episode import End, Episode
from breadth.core.world.families import Problem


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
    if [c.body for c in calls] != expected:  # both as the episode's syntax writes them
        return Verdict(False, Failure.WRONG_OPERANDS)
    return Verdict(False, Failure.ANSWER_DIFFERS)  # right calls give the sum, so the copy went wrong
