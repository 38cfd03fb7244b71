"""The race: one sum played at once by two to four models, side by side, each lane with its verdict.

A narrow playground stacks the lanes, one line a model; from COLUMNS_FROM cells wide each model gets a
column. The lanes' characters are revealed by the playground's timer at its pace, like a single probe's,
and each is drawn through `char_style`, the one place that decides how a streamed character looks.
The prompt is the same for every lane, so it is shown once, in the race's head line; in the stage layout (F5)
each lane is a bordered row of its own, named in its border, with the prompt written in it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import Static

from breadth.core.engine import protocol as p
from breadth.core.storage.presets import PRESETS
from breadth.core.world.episodes.verdict import Failure
from breadth.core.world.text.shown import clip_title, shown, shown_text
from breadth.core.world.text.transcript import Role, visible
from breadth.tui.catalog import ModelEntry

DEFAULT_RACE = tuple(f"shipped:{name}" for name in PRESETS)  # two-digit only, three-digit only, the mix
MIN_LANES, MAX_LANES = 2, 4  # the engine holds four models at once (MAX_LOADED in breadth.core.engine.session)
COLUMNS_FROM = 100  # cells of width from which the lanes stand side by side
TITLE_WIDTH = 14  # a stacked lane's model name, cut to this (keeping a trained model's `#n`)
IDLE_HEAD = "race: type a sum, Enter · Enter on a runs row adds or takes out a model"


LIE_STYLE = "bold white on red"  # a result a lying calculator corrupted
SHADES = (  # (lowest probability, style) for the model's characters when shading by confidence, most sure first:
    (0.9, "bold cyan"),  # strong backgrounds a projector keeps apart, and each level its own attributes, so
    (0.6, "bold italic black on grey70"),  # they read without colour too: plain, italic, underlined, both
    (0.3, "bold underline black on orange1"),
    (0.0, "bold italic underline bright_white on red3"),
)
PICKED = " reverse"  # the character whose alternatives show (underline is a shade's)


def shade(probability: float) -> str:
    """The style of a model character written with this probability (SHADES)."""
    return next(style for low, style in SHADES if probability >= low)


def char_style(char: p.Char, shaded: bool = False) -> str:
    """How one streamed character is drawn: a lie's result in red; with `shaded`, the model's own characters by
    the probability it gave them; otherwise its writer's colour (plain for a role this program does not know)."""
    if char.lied:
        return LIE_STYLE
    if shaded and char.role == Role.ACTION.value and char.p is not None:
        return shade(char.p)
    try:
        return Role(char.role).style
    except ValueError:
        return ""


class Roster:
    """The models in the race, by key: the shipped three by default; the model just trained joins them."""

    def __init__(self, keys: tuple[str, ...] = DEFAULT_RACE) -> None:
        self.keys = list(keys)

    def playable(self, entries: Mapping[str, ModelEntry]) -> list[str]:
        """The keys that can race now: known, with a model to play (not scores only), at most MAX_LANES."""
        return [k for k in self.keys if k in entries and not entries[k].scores_only][:MAX_LANES]

    def toggle(self, key: str, entries: Mapping[str, ModelEntry]) -> str:
        """Add `key` to the race, or take it out if it runs; returns what changed, ValueError if it cannot."""
        lanes = self.playable(entries)
        title = shown(entries[key].title)
        if key in lanes:
            if len(lanes) <= MIN_LANES:
                raise ValueError(f"a race needs {MIN_LANES} models: add another before taking out {title}")
            self.keys.remove(key)
            return f"{title} left the race"
        if entries[key].scores_only:
            raise ValueError(f"{title} kept no model (scores only): it cannot race")
        if len(lanes) >= MAX_LANES:
            raise ValueError(f"{MAX_LANES} models race at most: take one out first (Enter on its row)")
        self.keys = [*lanes, key]
        return f"{title} joined the race"

    def join(self, key: str, entries: Mapping[str, ModelEntry]) -> None:
        """The model just trained joins the race, in the last lane if the race is full."""
        lanes = [k for k in self.playable(entries) if k != key]
        self.keys = [*lanes[: MAX_LANES - 1], key] if len(lanes) >= MAX_LANES else [*lanes, key]


@dataclass
class LaneState:
    """One lane's episode: characters shown, received but not yet shown, and the verdict once known."""

    key: str  # the model's key
    title: str  # the model's name for people
    probe: int | None = None  # the Probe id of its current episode (None: no sum yet)
    prompt: str = ""  # the sum as posed (`23+45=`), written in the lane in the stage layout
    shown: list[p.Char] = field(default_factory=list)  # the model's and calculator's characters on screen
    pending: deque = field(default_factory=deque)  # p.Char received, not yet shown
    verdict: Text | None = None  # set when the engine has finished the episode (or failed it)
    started: float = 0.0  # when the first character became due (the playground's pacing)
    revealed_at_start: int = 0


def short(title: str, width: int = TITLE_WIDTH) -> str:
    """`title` in at most `width` characters, cut where a word ends; a trained model keeps its `#n`, which tells it
    from its mix's others."""
    return clip_title(title, width)


def verdict_text(solved: bool, failure: str | None, copied: bool | None = None) -> Text:
    """`✓ correct` in green, or `✗` and the failure kind in red (the true result is in the head line); under a
    lying calculator (`copied` not None), whether the answer copied the tool's lie or was worked out without it; a
    copy after calls the procedure does not make says both (`wrong number of calls, and copied the tool's lie`)."""
    if copied:
        wrong = "" if failure in (None, Failure.ANSWER_DIFFERS.value) else f"{shown(failure)}, and "
        return Text(f"✗ {wrong}copied the tool's lie", "bold red")
    if copied is False:
        if solved:
            return Text("✓ true result: ignored the lie", "bold green")
        return Text(f"✗ {shown(failure or 'wrong')}, not the lie either", "bold red")
    return Text("✓ correct", "bold green") if solved else Text("✗ " + shown(failure or "wrong"), "bold red")


class LaneView(Static):
    """One model's lane: one line when stacked (name, episode, verdict); a bordered column otherwise."""

    def __init__(self, state: LaneState) -> None:
        super().__init__(classes="lane")
        self.state = state
        self.columns = False
        self.stage = False  # the stage layout: bordered, named in the border, the prompt in the lane
        self.shaded = False  # the model's characters shaded by confidence
        self.picked: int | None = None  # index into `state.shown` of the character whose alternatives show

    @property
    def roomy(self) -> bool:
        """Whether the lane has two lines inside its border: on stage, the verdict then takes a line of its own."""
        return self.size.height >= 2  # the size inside the border and padding

    def on_resize(self) -> None:
        if self.stage:
            self.render_state()

    def render_state(self) -> None:
        """Draw the episode so far and, once it is all shown, the verdict."""
        st = self.state
        bordered = self.columns or self.stage
        self.border_title = shown_text(st.title) if bordered else ""  # a Text: never read as markup
        line = Text(no_wrap=False, overflow="fold")
        if not bordered:
            line.append(f"{short(shown(st.title)):<{TITLE_WIDTH}} ", "bold" if st.probe is not None else "dim")
        if self.stage and st.probe is not None:
            line.append(shown(st.prompt), Role.PROMPT.style)
        for i, char in enumerate(st.shown):
            line.append(visible(char.char), char_style(char, self.shaded) + (PICKED if i == self.picked else ""))
        if st.probe is None:
            line.append("waiting for a sum", "dim italic")
        elif not st.shown and st.verdict is None:
            line.append("…", "dim")
        if st.verdict is not None and not st.pending:
            line.append("\n" if self.columns and not self.stage or self.stage and self.roomy else "  ")
            line.append_text(st.verdict)
        self.update(line)


class RaceView(Vertical):
    """The race's head line (the sum, its true result and environment) over one lane per racing model."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lanes: dict[str, LaneView] = {}  # model key -> its lane, in race order
        self.by_probe: dict[int, LaneState] = {}  # Probe id -> the lane it streams into (this race's only)

    @property
    def stage(self) -> bool:
        """Whether the lanes are drawn for the stage layout (each a bordered row with its prompt)."""
        return self.has_class("stage")

    @stage.setter
    def stage(self, stage: bool) -> None:
        self.set_class(stage, "stage")
        for view in self.lanes.values():
            view.stage = stage
            view.render_state()

    def compose(self) -> ComposeResult:
        yield Static(Text(IDLE_HEAD, "dim"), id="race-head")
        yield Container(id="lanes")

    def on_resize(self) -> None:
        columns = self.size.width >= COLUMNS_FROM
        if columns != self.has_class("columns"):
            self.set_class(columns, "columns")
            for view in self.lanes.values():
                view.columns = columns
                view.render_state()

    def set_lanes(self, lanes: list[tuple[str, str]]) -> None:
        """Show one lane per (key, title), in order; a lane that stays keeps its episode."""
        if [k for k, _ in lanes] == list(self.lanes):
            for key, title in lanes:
                self.lanes[key].state.title = title
                self.lanes[key].render_state()
            return
        old = self.lanes
        self.lanes = {}
        for view in old.values():
            view.remove()
        box = self.query_one("#lanes")
        for key, title in lanes:
            state = old[key].state if key in old else LaneState(key, title)
            state.title = title
            view = self.lanes[key] = LaneView(state)
            view.columns, view.stage = self.has_class("columns"), self.stage
            box.mount(view)
            view.render_state()
        self.by_probe = {k: lane for k, lane in self.by_probe.items() if lane.key in self.lanes}  # lanes taken out

    def start(self, head: Text, lanes: list[tuple[int, str, str]], prompt: str = "") -> None:
        """A new race on `prompt`: `head` on top, each (probe id, key, title) in its lane, waiting for characters."""
        self.set_lanes([(key, title) for _, key, title in lanes])
        self.query_one("#race-head", Static).update(head)
        self.by_probe = {}
        for probe, key, title in lanes:
            view = self.lanes[key]
            view.state = self.by_probe[probe] = LaneState(key, title, probe, prompt)
            view.render_state()

    def views(self) -> list[LaneView]:
        """The lanes on screen."""
        return list(self.lanes.values())

    def char(self, event: p.Char) -> bool:
        """Queue a character for its lane; False if no lane of this race streams probe `event.id`."""
        lane = self.by_probe.get(event.id)
        if lane is None:
            return False
        if event.role != Role.PROMPT.value:  # the head line shows the prompt once for every lane
            lane.pending.append(event)
        return True

    def end(self, probe: int, verdict: Text) -> bool:
        """Give probe `probe`'s lane its verdict; False if it is not this race's."""
        lane = self.by_probe.get(probe)
        if lane is None:
            return False
        lane.verdict = verdict
        self.lanes[lane.key].render_state()
        return True

    def unfinished(self) -> list[int]:
        """The probes of this race still awaiting their verdict."""
        return [probe for probe, lane in self.by_probe.items() if lane.verdict is None]

    def busy(self) -> bool:
        """True while a lane has characters to reveal or awaits its verdict."""
        return any(lane.pending or lane.verdict is None for lane in self.by_probe.values())
