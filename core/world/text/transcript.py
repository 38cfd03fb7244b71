"""One episode's text as typed segments: the single source for masking, display and scoring.

A transcript is a list of segments, each written by one party: the prompt (the sum), the model's
actions (calls and the answer) and the environment's appended results. Rendering gives token ids
and, per token, who wrote it; the loss mask is read from that, never from searching the string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from breadth.core.world.text.vocab import BOS, encode

NEWLINE_GLYPH = "⏎"  # how a newline the model writes is shown, so an episode stays on one line


class Role(str, Enum):
    """Who wrote a segment, with the name and colour every front end shows it in."""

    PROMPT = "prompt"  # the task as posed
    ACTION = "action"  # the model's own tokens: calls and the final answer
    ENVIRONMENT = "environment"  # what the calculator appended

    @property
    def writer(self) -> str:
        """Who wrote it, for people: `prompt`, `model` or `calculator`."""
        return _WRITER[self]

    @property
    def style(self) -> str:
        """Its rich style: prompt bold, the model's tokens cyan, the calculator's results on yellow (drawn
        orange by the app's theme: #fd971f)."""
        return _STYLE[self]


_WRITER = {Role.PROMPT: "prompt", Role.ACTION: "model", Role.ENVIRONMENT: "calculator"}
_STYLE = {Role.PROMPT: "bold", Role.ACTION: "bold cyan", Role.ENVIRONMENT: "bold black on yellow"}


def visible(text: str) -> str:
    """Text as shown on one line: a newline becomes NEWLINE_GLYPH."""
    return text.replace("\n", NEWLINE_GLYPH)


@dataclass(frozen=True)
class Segment:
    """A run of text written by one party."""

    role: Role
    text: str


@dataclass
class Transcript:
    """An episode as an ordered list of segments; adjacent text of one role merges."""

    segments: list[Segment] = field(default_factory=list)

    def add(self, role: Role, text: str) -> None:
        """Append text written by `role`, extending the last segment when the role is the same."""
        if not text:
            return
        if self.segments and self.segments[-1].role is role:
            self.segments[-1] = Segment(role, self.segments[-1].text + text)
        else:
            self.segments.append(Segment(role, text))

    @property
    def text(self) -> str:
        """The episode as one string, without the start-of-line token."""
        return "".join(s.text for s in self.segments)

    def roles(self) -> list[Role]:
        """The role of every character of `text`."""
        return [s.role for s in self.segments for _ in s.text]

    def render(self) -> tuple[list[int], list[bool]]:
        """Token ids (start-of-line token first) and, per token, whether the model wrote it."""
        ids = encode(BOS + self.text)
        is_action = [False] + [r is Role.ACTION for r in self.roles()]  # the start token is prompt
        return ids, is_action

    def carries_loss(self) -> list[bool]:
        """Per character of `text`, whether predicting it is trained on (the model wrote it), read from `render`."""
        return self.render()[1][1:]  # the start token is never a target

    def training_pair(self) -> tuple[list[int], list[int]]:
        """Inputs and next-token targets, with -1 wherever the target was not written by the model."""
        ids, is_action = self.render()
        inputs = ids[:-1]
        targets = [t if act else -1 for t, act in zip(ids[1:], is_action[1:], strict=True)]  # loss only on actions
        return inputs, targets

    @classmethod
    def of(cls, *parts: tuple[Role, str]) -> Transcript:
        """A transcript from (role, text) pairs."""
        t = cls()
        for role, text in parts:
            t.add(role, text)
        return t
