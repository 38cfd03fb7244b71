"""The calculator environment for one episode: it takes the model's characters one at a time.

When the model closes a call (`B...|`, or as its call syntax writes one) the environment queues the
calculator's result as forced characters; the first `|` outside a call ends the answer. Hard limits end
an episode that runs on: the context length and the number of calls. Any character sequence is accepted
without raising.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from breadth.core.world.arithmetic.calculator import SYNTAX, CallSyntax, Lie
from breadth.core.world.text.transcript import Role, Transcript

MAX_CALLS = 4  # calls allowed in one episode; opening one more ends it
MAX_LENGTH = 64  # characters in an episode, start token included (the model's context)


class End(str, Enum):
    """Why an episode stopped."""

    ANSWERED = "answered"  # the model closed its answer with `|`
    TOO_LONG = "too_long"  # the episode reached MAX_LENGTH before an answer
    TOO_MANY_CALLS = "too_many_calls"  # the model opened more than MAX_CALLS calls


@dataclass
class ToolCall:
    """A call the model wrote (the text between its delimiters, `B` and `|`) and what the calculator appended."""

    body: str
    result: str
    lied: bool = False  # the result appended is not the calculator's true one (a lying calculator)


@dataclass
class Episode:
    """One rollout's state: the transcript so far, forced characters waiting, calls made, the end."""

    prompt: str
    max_calls: int = MAX_CALLS
    max_length: int = MAX_LENGTH
    lie: Lie | None = None  # the calculator lies (for probing whether the model copies the tool); None: honest
    syntax: CallSyntax = SYNTAX  # how calls are written and answered
    transcript: Transcript = field(default_factory=Transcript)
    forced: deque = field(default_factory=deque)  # (role, char) the model does not choose
    calls: list[ToolCall] = field(default_factory=list)
    end: End | None = None
    _call: list[str] | None = None  # characters of the call being written, None outside a call
    _answer: list[str] = field(default_factory=list)  # characters written since the last tool result
    _length: int = 1  # characters so far, counting the start token

    def __post_init__(self) -> None:
        self.forced.extend((Role.PROMPT, c) for c in self.prompt)

    @property
    def done(self) -> bool:
        """True once the episode has ended for any reason."""
        return self.end is not None

    @property
    def answer(self) -> str | None:
        """The final answer without its `|`, or None if the model never closed one."""
        return "".join(self._answer) if self.end is End.ANSWERED else None

    def next_forced(self) -> tuple[Role, str] | None:
        """Take the next character the model does not choose (prompt or tool output), if any."""
        if self.done or not self.forced:
            return None
        role, char = self.forced.popleft()
        self._write(role, char)
        self._check_length()
        return role, char

    def act(self, char: str) -> None:
        """Take one character written by the model and run the environment's reaction to it."""
        if self.done:
            return
        self._write(Role.ACTION, char)
        if self._call is not None:
            if char == self.syntax.call_close:  # the call closes: the calculator answers
                body, self._call = "".join(self._call), None
                true = self.syntax.calculate(body)
                result = true if self.lie is None else self.lie.tell(body, self.syntax)
                self.calls.append(ToolCall(body, result, result != true))
                self.forced.extend((Role.ENVIRONMENT, c) for c in result)
                self._answer = []
            else:
                self._call.append(char)
        elif char == self.syntax.open:
            if len(self.calls) >= self.max_calls:
                self.end = End.TOO_MANY_CALLS
                return
            self._call = []
        elif char == self.syntax.close:
            self.end = End.ANSWERED
            return
        else:
            self._answer.append(char)
        self._check_length()

    def _write(self, role: Role, char: str) -> None:
        self.transcript.add(role, char)
        self._length += 1

    def _check_length(self) -> None:
        if self.end is None and self._length >= self.max_length:  # no room for another character
            self.end = End.TOO_LONG
