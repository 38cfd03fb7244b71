"""The playground: type a sum, watch the episode appear token by token, each party in its own colour.

Characters arrive from the engine as fast as it decodes them; a 30 Hz timer reveals those that are
due at the chosen pace (a per-character sleep would drift under load). Earlier probes stay above.
Any sum the calculator and the context hold can be posed (`9-4-3` too); the verdict names the
family it belongs to by its label, or says it lies outside every family.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from core.world.families import FAMILIES, Problem
from core.world.probe import SumError, parse_sum
from core.world.transcript import Role, visible

from ..guard import guarded

PACES = [("instant", 0.0), ("fast", 60.0), ("normal", 20.0), ("slow", 6.0)]  # (name, characters per second)
TICK_HZ = 30
MAX_PROBES = 50  # probes kept in the log; past this the oldest finished view is reused for the next


def legend() -> Text:
    """`prompt  model  calculator`, each in its colour."""
    parts: list = []
    for role in Role:
        parts += [(f" {role.writer} ", role.style), " "]
    return Text.assemble(*parts)


@dataclass
class ProbeState:
    """One probe's characters: revealed, waiting to be revealed, and its verdict once known."""

    problem: Problem
    model: str
    shown: list[tuple[str, str]] = field(default_factory=list)  # (role, char) on screen
    pending: deque = field(default_factory=deque)  # (role, char) received, not yet shown
    verdict: Text | None = None  # set when the engine has finished the episode
    started: float = 0.0  # when the first character became due
    revealed_at_start: int = 0


def where(problem: Problem) -> str:
    """The label of the family holding `problem` (`3 single-digit sub`), or `outside every family`."""
    family = FAMILIES.get(problem.family)
    return family.label if family else "outside every family"


class ProbeView(Static):
    """One probe: the sum, the episode so far in colour, then the verdict."""

    def __init__(self, state: ProbeState) -> None:
        super().__init__(classes="probe")
        self.state = state

    def render_state(self) -> None:
        """One line: the episode so far in colour, then (once all is shown) the verdict, then context."""
        st = self.state
        line = Text("› ", style="dim")
        for role, char in st.shown:
            line.append(visible(char), _style(role))  # keep one line per probe
        if not st.shown and st.verdict is None:
            line.append(f"{st.problem.prompt} waiting for the model...", "dim italic")
        if st.verdict is not None and not st.pending:
            line.append("  ")
            line.append_text(st.verdict)
        line.append(f"  ({where(st.problem)})", "dim")
        self.update(line)


class Playground(Vertical):
    """Probe log, legend and pace, and the sum box with its inline message."""

    BORDER_TITLE = "playground"

    class PlayRequested(Message):
        """The user asked to play this sum."""

        def __init__(self, problem: Problem, text: str) -> None:
            super().__init__()
            self.problem = problem
            self.text = text

    pace = var(2)  # index into PACES: how fast characters are revealed

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.probes: dict[int, ProbeView] = {}
        self._last_model = ""

    def compose(self) -> ComposeResult:
        hint = Static("Type a sum such as 23+45, 3+4+5 or 9-4-3 and press Enter.", id="hint")
        yield VerticalScroll(hint, id="probes")
        with Horizontal(id="legend-row"):
            yield Static(legend(), id="legend")
            yield Static("", id="pace")
        yield Input(placeholder="a sum: 23+45, 3+4+5, 9-4-3, or a3x2: 12+34+56", id="sum", max_length=40)
        yield Static("", id="sum-message")

    def on_mount(self) -> None:
        self.query_one("#probes").anchor()
        self.set_interval(1 / TICK_HZ, self._tick)

    @on(Input.Submitted, "#sum")
    @guarded
    def submit(self, event: Input.Submitted) -> None:
        """Check the sum; a bad one gets an inline message, a good one is played."""
        try:
            problem = parse_sum(event.value)
        except SumError as e:
            self.say(str(e), error=True)
            return
        self.say("")
        event.input.value = ""
        self.post_message(self.PlayRequested(problem, event.value))

    def focus_sum(self) -> None:
        """Put the cursor in the sum box."""
        self.query_one("#sum", Input).focus()

    def say(self, text: str, error: bool = False) -> None:
        """Show a message under the sum box, as plain text (it may quote what was typed; no markup is parsed)."""
        msg = self.query_one("#sum-message", Static)
        msg.set_class(error, "error")
        msg.update(Content(text))

    def clear_note(self) -> None:
        """Clear the message under the sum box, unless it is an error still to be fixed."""
        if not self.query_one("#sum-message", Static).has_class("error"):
            self.say("")

    def cycle_pace(self) -> str:
        """Next streaming pace; returns its name."""
        self.pace = (self.pace + 1) % len(PACES)
        return PACES[self.pace][0]

    def watch_pace(self, pace: int) -> None:
        """Show the pace beside the legend."""
        name, rate = PACES[pace]
        self.query_one("#pace", Static).update(
            Text.assemble(("pace ", "dim"), name, (f" {rate:.0f}/s" if rate else "", "dim"), (" ^o", "dim"))
        )

    # what the app tells the playground

    def begin(self, probe: int, problem: Problem, model: str) -> None:
        """Add a probe view for `problem`, waiting for characters (after a line naming the model if it changed)."""
        for hint in self.query("#hint"):
            hint.remove()
        log = self.query_one("#probes")
        if model != self._last_model:
            self._last_model = model
            log.mount(Static(f"model: {model}", classes="model-change"))
        state = ProbeState(problem, model)
        oldest = next((k for k, v in self.probes.items() if v.state.verdict is not None and not v.state.pending), None)
        if len(self.probes) >= MAX_PROBES and oldest is not None:
            view = self.probes.pop(oldest)  # reuse the oldest finished view: a long talk makes no new widgets
            view.state = state
            log.move_child(view, after=log.children[-1])
        else:
            view = ProbeView(state)
            log.mount(view)
        self.probes[probe] = view
        view.render_state()
        self._drop_stale_model_lines(log)

    def _drop_stale_model_lines(self, log) -> None:
        """Remove model lines above the oldest probe kept, but the one naming that probe's model."""
        children = list(log.children)
        first = next((i for i, w in enumerate(children) if isinstance(w, ProbeView)), None)
        if first is None:
            return
        for line in children[: first - 1]:
            line.remove()
        for i, widget in enumerate(children[first:], start=first):  # model lines left between reused views
            after = children[i + 1] if i + 1 < len(children) else None
            if not isinstance(widget, ProbeView) and (after is None or not isinstance(after, ProbeView)):
                widget.remove()

    def char(self, probe: int, role: str, char: str) -> None:
        if probe in self.probes:
            self.probes[probe].state.pending.append((role, char))

    def finish(self, probe: int, solved: bool, failure: str | None, answer: int) -> None:
        if probe not in self.probes:
            return
        if solved:
            verdict = Text.assemble(("✓ correct", "bold green"))
        else:
            verdict = Text.assemble(("✗ " + (failure or "wrong"), "bold red"), (f", true result {answer}", "red"))
        self.probes[probe].state.verdict = verdict
        self.probes[probe].render_state()

    def fail(self, probe: int, message: str) -> None:
        """End `probe` with an engine error instead of a verdict."""
        if probe in self.probes:
            self.probes[probe].state.verdict = Text("engine error: " + message, style="bold red")
            self.probes[probe].render_state()

    def fail_unfinished(self, message: str) -> None:
        """End every probe still awaiting its verdict with an engine error (the engine died)."""
        for probe, view in self.probes.items():
            if view.state.verdict is None:
                self.fail(probe, message)

    def busy(self) -> bool:
        """True while some probe still has characters to reveal or awaits its verdict."""
        return any(v.state.pending or v.state.verdict is None for v in self.probes.values())

    def _tick(self) -> None:
        now = time.monotonic()
        rate = PACES[self.pace][1]
        for view in self.probes.values():
            st = view.state
            if not st.pending:
                continue
            if rate == 0:
                n = len(st.pending)
            else:
                if not st.started:
                    st.started, st.revealed_at_start = now, len(st.shown)
                due = st.revealed_at_start + 1 + int((now - st.started) * rate)
                n = max(0, due - len(st.shown))
            for _ in range(min(n, len(st.pending))):
                st.shown.append(st.pending.popleft())
            if n:
                view.render_state()


def _style(role: str) -> str:
    """The style of a role sent by the engine (plain for a value this program does not know)."""
    try:
        return Role(role).style
    except ValueError:
        return ""
