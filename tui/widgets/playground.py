"""The playground: type a sum, watch the episode appear token by token, each party in its own colour.

Characters arrive from the engine as fast as it decodes them; a 30 Hz timer reveals those that are
due at the chosen pace (a per-character sleep would drift under load). Earlier probes stay above.
Any sum the calculator and the context hold can be posed (`9-4-3` too); the verdict names the
environment it belongs to by its label, or says it lies outside every environment. In race mode
(`tui.widgets.race`) the same sum box plays each sum on several models at once; Up and Down in the
box recall the sums played before, in either mode.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from breadth.core.engine import protocol as p
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.text.shown import shown
from breadth.core.world.text.transcript import Role, visible
from breadth.tui.guard import guarded
from breadth.tui.widgets.bounded_input import BoundedInput
from breadth.tui.widgets.probe_view import ProbeState, ProbeView, least_sure, reveal, where
from breadth.tui.widgets.race import LIE_STYLE, SHADES, LaneView, RaceView, verdict_text
from breadth.tui.widgets.sum_box import SumBox

PACES = [("instant", 0.0), ("fast", 60.0), ("normal", 20.0), ("audience", 10.0), ("slow", 6.0)]  # (name, chars/s)
AUDIENCE = 3  # the pace demo mode starts at: slow enough for a room to read along
TICK_HZ = 30
MAX_PROBES = 50  # probes kept in the log; past this the oldest finished view is reused for the next
MAX_LIE = 4  # digits of the number a lying calculator always answers
LIES = ("", "off by one", "value")  # the calculator: honest, every result + 1, or always the number typed


def legend() -> Text:
    """`prompt  model  calculator`, each in its colour."""
    parts: list = []
    for role in Role:
        parts += [(f" {role.writer} ", role.style), " "]
    return Text.assemble(*parts)


class Playground(Vertical):
    """Probe log (or the race), legend and pace, and the sum box with its inline message."""

    BORDER_TITLE = "playground"

    class PlayRequested(Message):
        """The user asked to play this sum."""

        def __init__(self, problem: Problem, text: str) -> None:
            super().__init__()
            self.problem = problem
            self.text = text

    class RacingChanged(Message):
        """The playground switched between racing and single play: the race needs its lanes."""

    pace = var(2)  # index into PACES: how fast characters are revealed
    racing = var(False)  # each sum is played by the race's models side by side, instead of the current model
    lie = var(0, init=False)  # index into LIES: what the calculator does for the next sums
    lie_value = var(0, init=False)  # the number a "value" lie always answers
    shaded = var(False, init=False)  # the model's characters shaded by the probability it gave them, alternatives shown
    stage = var(False, init=False)  # the stage layout (F5): the race's lanes large, each with its prompt

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.probes: dict[int, ProbeView] = {}
        self._last_model = ""
        self.lane_picked = 0  # the race lane whose picked character's alternatives show

    def compose(self) -> ComposeResult:
        hint = Static("Type a sum such as 23+45, 3+4+5 or 9-4-3 and press Enter.", id="hint")
        yield VerticalScroll(hint, id="probes")
        yield RaceView(id="race")
        yield Static("", id="alternatives")
        with Horizontal(id="legend-row"):
            yield Static(legend(), id="legend")
            yield Static("", id="tool")
            yield Static("", id="pace")
        with Horizontal(id="lie-row"):
            yield Static("the calculator always answers ", id="lie-label")
            yield BoundedInput(str(self.lie_value), type="integer", max_length=MAX_LIE, id="lie-value", compact=True)
        yield SumBox(id="sum")
        yield Static("", id="sum-message")

    def on_mount(self) -> None:
        self.query_one("#probes").anchor()
        self.set_interval(1 / TICK_HZ, self._tick)
        self._show_tool()

    # the lying calculator (F7) and confidence shading (F6)

    def cycle_lie(self) -> str:
        """Next calculator: honest, off by one, always a typed number (its box takes the focus); what it is now."""
        self.lie = (self.lie + 1) % len(LIES)
        if LIES[self.lie] == "value":
            box = self.query_one("#lie-value", Input)
            box.cursor_position = len(box.value)
            self.call_after_refresh(box.focus)  # once the row is shown: a hidden widget takes no focus
        else:
            self.focus_sum()
        return self.tool_name()

    def lie_spec(self) -> str:
        """The lie for the engine's Probe: '' (honest), 'off by one', or the number the calculator always answers."""
        kind = LIES[self.lie]
        return str(self.lie_value) if kind == "value" else kind

    def tool_name(self) -> str:
        """For people: `honest`, `lies: off by one`, `lies: always 42`."""
        kind = LIES[self.lie]
        return "honest" if not kind else f"lies: {kind}" if kind != "value" else f"lies: always {self.lie_value}"

    def watch_lie(self) -> None:
        self.set_class(LIES[self.lie] == "value", "lie-typing")
        self._show_tool()

    def watch_lie_value(self) -> None:
        self._show_tool()

    @on(Input.Submitted, "#lie-value")
    @guarded
    def set_lie_value(self, event: Input.Submitted) -> None:
        """The number the calculator will always answer; back to the sum box."""
        try:
            self.lie_value = int(event.value or "0")
        except ValueError:
            self.say("the calculator answers a whole number from 0 to 9999", error=True)
            return
        self.say(f"the calculator now always answers {self.lie_value}")
        self.focus_sum()

    def watch_shaded(self, shaded: bool) -> None:
        self.set_class(shaded, "shaded")
        for view in self._episode_views():
            view.shaded = shaded
            if shaded and view.picked is None:
                view.picked = least_sure(view.state.shown)
            view.render_state()
        self._show_tool()
        self.show_alternatives()

    def _show_tool(self) -> None:
        kind = LIES[self.lie]
        short = {"": "honest", "off by one": "lies +1"}.get(kind, f"lies ={self.lie_value}")
        self.query_one("#tool", Static).update(
            Text.assemble(
                (f" {short} ", LIE_STYLE if kind else "dim"),
                (" F7 ", "dim"),
                ("shade", "bold" if self.shaded else "dim"),
                (" F6 ", "dim"),
            )
        )

    def _episode_views(self) -> list:
        return [*self.probes.values(), *self.race.views()]

    def _focus_view(self) -> ProbeView | LaneView | None:
        """The episode whose characters are picked: the latest probe, or the chosen race lane."""
        if self.racing:
            lanes = [v for v in self.race.views() if v.state.probe is not None]
            return lanes[min(self.lane_picked, len(lanes) - 1)] if lanes else None
        return self.probes[max(self.probes)] if self.probes else None

    def pick(self, by: int) -> None:
        """Move the picked character of the episode in focus to the model's previous or next one."""
        view = self._focus_view()
        if view is None or not self.shaded:
            return
        mine = [i for i, c in enumerate(view.state.shown) if c.top]
        if not mine:
            return
        at = mine.index(view.picked) if view.picked in mine else 0
        view.picked = mine[min(max(at + by, 0), len(mine) - 1)]
        view.render_state()
        self.show_alternatives()

    def pick_lane(self, by: int) -> None:
        """In a race, move the focus to the lane above or below."""
        if self.racing and self.shaded:
            self.lane_picked = min(max(self.lane_picked + by, 0), max(len(self.race.views()) - 1, 0))
            self.show_alternatives()

    def show_alternatives(self) -> None:
        """The line over the legend, while shading: the picked character, its probability and its alternatives."""
        line = self.query_one("#alternatives", Static)
        view = self._focus_view()
        if not self.shaded:
            line.update("")
            return
        scale = Text.assemble(("sure ", "dim"), *((f" {int(100 * low)}+ ", style) for low, style in SHADES))
        if view is None or view.picked is None or view.picked >= len(view.state.shown):
            line.update(Text.assemble(scale, ("  shift+←/→ picks a character of the model's", "dim")))
            return
        char = view.state.shown[view.picked]
        where = f"{view.state.title}: " if isinstance(view, LaneView) else ""
        alternatives = " · ".join(f"{visible(c)!r} {q:.0%}" for c, q in char.top[1:])
        line.update(
            Text.assemble(
                (where, "dim"),
                (f"{visible(char.char)!r} at {char.p:.0%}", "bold"),
                ("  instead: ", "dim"),
                alternatives or "-",
                ("  shift+arrows pick", "dim"),
            )
        )

    @on(BoundedInput.Overflow)
    @guarded
    def say_overflow(self, message: BoundedInput.Overflow) -> None:
        """A paste or keys that did not fit in the sum box (or the lie's number): one line saying what was kept."""
        what = "a sum" if message.box.id == "sum" else "the calculator's number"
        limit = message.box.max_length
        if message.dropped:
            self.say(
                f"pasted text cut to {limit} characters ({message.dropped:,} left out): {what} is at most {limit}",
                error=True,
            )
        else:
            self.say(f"{what} is at most {limit} characters: the rest was not typed", error=True)

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
        self.query_one("#sum", SumBox).remember(event.value)
        self.post_message(self.PlayRequested(problem, event.value))

    def focus_sum(self) -> None:
        """Put the cursor in the sum box."""
        self.query_one("#sum", Input).focus()

    def say(self, text: str, error: bool = False) -> None:
        """Show a message under the sum box, as plain text (it may quote what was typed; no markup is parsed)."""
        msg = self.query_one("#sum-message", Static)
        msg.set_class(error, "error")
        msg.update(Content(shown(text)))

    def clear_note(self) -> None:
        """Clear the message under the sum box, unless it is an error still to be fixed."""
        if not self.query_one("#sum-message", Static).has_class("error"):
            self.say("")

    def watch_stage(self, stage: bool) -> None:
        self.race.stage = stage

    def watch_racing(self, racing: bool) -> None:
        """Show the race or the probe log in the same place; the sum box and its history stay as they are."""
        self.set_class(racing, "racing")
        self.border_title = "race  F4 single" if racing else "playground  F4 race"
        self.post_message(self.RacingChanged())

    @property
    def race(self) -> RaceView:
        """The race view (shown while racing)."""
        return self.query_one("#race", RaceView)

    def cycle_pace(self) -> str:
        """Next streaming pace; returns its name."""
        self.pace = (self.pace + 1) % len(PACES)
        return PACES[self.pace][0]

    def watch_pace(self, pace: int) -> None:
        """Show the pace beside the legend."""
        name, rate = PACES[pace]
        self.query_one("#pace", Static).update(
            Text.assemble(("pace ", "dim"), name, (f" {rate:.0f}/s" if rate else "", "dim"), (" F8", "dim"))
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
        view.shaded, view.picked = self.shaded, None
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

    def begin_race(self, problem: Problem, lanes: list[tuple[int, str, str]]) -> None:
        """Start a race on `problem`: each (probe id, model key, model title) gets a lane."""
        head = Text.assemble(
            ("race ", "dim"),
            (problem.prompt.removesuffix("="), "bold"),
            (f" = {problem.answer}", "bold"),
            (f"  ({where(problem)})", "dim"),
        )
        self.race.start(head, lanes, problem.prompt)

    def char(self, event: p.Char) -> None:
        """Queue a character the engine streamed, for the probe or race lane it belongs to."""
        if event.id in self.probes:
            self.probes[event.id].state.pending.append(event)
        else:
            self.race.char(event)

    def finish(self, probe: int, solved: bool, failure: str | None, answer: int, copied: bool | None = None) -> None:
        """Give probe `probe` (or its race lane) its verdict; while shading, pick its least sure character."""
        lane = self.race.by_probe.get(probe)
        if self.race.end(probe, verdict_text(solved, failure, copied)):
            self._pick_least_sure(self.race.lanes.get(lane.key) if lane else None)
            return
        if probe not in self.probes:
            return
        if copied is not None or solved:
            verdict = verdict_text(solved, failure, copied)
        else:
            verdict = Text.assemble(("✗ " + (failure or "wrong"), "bold red"), (f", true result {answer}", "red"))
        self.probes[probe].state.verdict = verdict
        self._pick_least_sure(self.probes[probe])
        self.probes[probe].render_state()

    def _pick_least_sure(self, view) -> None:
        if view is not None and self.shaded:
            view.picked = least_sure([*view.state.shown, *view.state.pending])
            view.render_state()
            self.show_alternatives()

    def fail(self, probe: int, message: str) -> None:
        """End `probe` (or its race lane) with an engine error instead of a verdict."""
        if self.race.end(probe, Text("✗ engine error: " + message, style="bold red")):
            return
        if probe in self.probes:
            self.probes[probe].state.verdict = Text("engine error: " + message, style="bold red")
            self.probes[probe].render_state()

    def fail_unfinished(self, message: str) -> None:
        """End every probe still awaiting its verdict with an engine error (the engine died)."""
        for probe, view in self.probes.items():
            if view.state.verdict is None:
                self.fail(probe, message)
        for probe in self.race.unfinished():
            self.fail(probe, message)

    def busy(self) -> bool:
        """True while some probe still has characters to reveal or awaits its verdict."""
        return self.race.busy() or any(v.state.pending or v.state.verdict is None for v in self.probes.values())

    def _tick(self) -> None:
        now = time.monotonic()
        rate = PACES[self.pace][1]
        focus = self._focus_view() if self.shaded else None
        for view in [*self.probes.values(), *self.race.views()]:
            if reveal(view.state, now, rate):
                view.render_state()
                if view is focus:
                    self.show_alternatives()
