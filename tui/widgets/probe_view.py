"""One probe in the playground's log: its state, its one-line view, and revealing its characters at a pace."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from rich.text import Text
from textual.widgets import Static

from breadth.core.engine import protocol as p
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.text.transcript import visible
from breadth.tui.widgets.race import PICKED, char_style


@dataclass
class ProbeState:
    """One probe's characters: revealed, waiting to be revealed, and its verdict once known."""

    problem: Problem
    model: str
    shown: list[p.Char] = field(default_factory=list)  # characters on screen, as the engine streamed them
    pending: deque = field(default_factory=deque)  # p.Char received, not yet shown
    verdict: Text | None = None  # set when the engine has finished the episode
    started: float = 0.0  # when the first character became due
    revealed_at_start: int = 0


def where(problem: Problem) -> str:
    """What the environment holding `problem` is, in plain words (`three single digits`; no example sum beside the sum
    posed), or `outside every environment`."""
    environment = REGISTERED.get(problem.environment)
    return environment.words if environment else "outside every environment"


class ProbeView(Static):
    """One probe: the sum, the episode so far in colour, then the verdict."""

    def __init__(self, state: ProbeState) -> None:
        super().__init__(classes="probe")
        self.state = state
        self.shaded = False  # the model's characters shaded by confidence
        self.picked: int | None = None  # index into `state.shown` of the character whose alternatives show

    def render_state(self) -> None:
        """One line: the episode so far in colour, then (once all is shown) the verdict, then context."""
        st = self.state
        line = Text("› ", style="dim")
        for i, char in enumerate(st.shown):  # one line per probe: a newline shows as a glyph
            line.append(visible(char.char), char_style(char, self.shaded) + (PICKED if i == self.picked else ""))
        if not st.shown and st.verdict is None:
            line.append(f"{st.problem.prompt} waiting for the model...", "dim italic")
        if st.verdict is not None and not st.pending:
            line.append("  ")
            line.append_text(st.verdict)
        line.append(f"  ({where(st.problem)})", "dim")
        self.update(line)


def reveal(state, now: float, rate: float) -> bool:
    """Move the characters of a probe or lane `state` that are due at `rate` (0: all) to shown; True if any moved.

    Due: one at once, then `rate` a second from the moment the first was, so a late timer catches up.
    """
    if not state.pending:
        return False
    if rate == 0:
        n = len(state.pending)
    else:
        if not state.started:
            state.started, state.revealed_at_start = now, len(state.shown)
        due = state.revealed_at_start + 1 + int((now - state.started) * rate)
        n = max(0, due - len(state.shown))
    for _ in range(min(n, len(state.pending))):
        state.shown.append(state.pending.popleft())
    return n > 0


def least_sure(chars: list[p.Char]) -> int | None:
    """The index of the model character written with the lowest probability (None if none has one)."""
    mine = [(c.p, i) for i, c in enumerate(chars) if c.p is not None]
    return min(mine)[1] if mine else None
