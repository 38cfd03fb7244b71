"""The rollouts view (Shift+F1): the latest group of episodes a reward run sampled, each in its writers' colours.

A run that learns from reward samples a group of episodes per prompt at every step; the engine sends one group
at most twice a second (`protocol.Rollouts`). The training controller keeps the latest in a `Feed`, and this
view redraws from it on a timer (at most every REFRESH seconds, never per event): the run's numbers as under
the reward plot (in full words), the prompt over the group,
then each episode on one line with its reward and verdict, the model's characters in cyan and the calculator's
results on orange (ANSI yellow in the theme) as the playground shows them (`core.world.text.shown.episode_text`, text,
never markup). With no reward run going, one line says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import name_for
from breadth.core.world.episodes.scores import MetadataError, SampledGroup
from breadth.core.world.text.shown import episode_text, shown
from breadth.core.world.text.transcript import Role, Transcript
from breadth.tui.guard import guarded, one_line
from breadth.tui.widgets.reward_plot import reward_line

REFRESH = 0.5  # seconds between redraws at most
NO_RUN = "no reward run is going: choose 'learn from: reward' in the train form and press F2"


@dataclass
class Feed:
    """What the view shows, kept by the training controller: the reward run and the latest group it sampled."""

    title: str = ""  # the run, as the procedure view names it: `3 singles 35 #2`
    coded: str = ""  # and in codes, where a person asked for them (Shift+F5): `a3x1 35 #2`
    running: bool = False  # the run is sampling now
    group_size: int = 0  # G
    step: int = 0  # the step that sampled `group`
    steps: int = 0
    group: SampledGroup | None = None
    error: str = ""  # why the last group sent could not be read (one line)
    before: dict | None = None  # what the run measured before its first step (pass@G, ...)
    latest: dict | None = None  # its last step's metrics
    environments: list[str] = field(default_factory=list)  # the environments of its mix
    version: int = 0  # bumped on every change: the view redraws when it moved

    def sampled(self, step: int, data: object) -> None:
        """A group the engine sent at `step`, read (a malformed one is one line, the last good group stays)."""
        try:
            self.group, self.step, self.error = SampledGroup.from_dict(data), step, ""
        except MetadataError as e:
            self.error = one_line(e)
        self.version += 1

    def begin(self, title: str, steps: int, group_size: int, environments: list[str], coded: str = "") -> None:
        """A reward run began: nothing sampled or measured yet."""
        self.title, self.steps, self.group_size, self.running = title, steps, group_size, True
        self.coded = coded
        self.group, self.step, self.error, self.before, self.latest = None, 0, "", None, None
        self.environments = environments
        self.version += 1

    def measured(self, before: dict | None = None, latest: dict | None = None) -> None:
        """What the run measured before its first step, or at its last step."""
        self.before = before if before is not None else self.before
        self.latest = latest if latest is not None else self.latest
        self.version += 1

    def end(self) -> None:
        """The run ended (trained, stopped or failed); its last group stays in view."""
        if self.running:
            self.running = False
            self.version += 1


def status(feed: Feed, codes: bool = False) -> Text:
    """The one line over the group: which run (in words, or in codes with `codes`), which step, whether it still
    runs, the group's reward."""
    if not feed.running and feed.group is None:
        return Text(NO_RUN, style="bold")
    out = Text.assemble(("rollouts ", "bold"), shown((feed.coded or feed.title) if codes else feed.title))
    if feed.group is None:
        return out.append(": sampling the first group...", "dim")
    rewards = [e.reward for e in feed.group.episodes]
    shown_of = f" (first {len(rewards)} of {feed.group.size})" if feed.group.size > len(rewards) else ""
    out.append(f" · step {feed.step}/{feed.steps} · group reward {sum(rewards) / len(rewards):.2f}{shown_of}")
    if not feed.running:
        out.append(" · run ended", "dim")
    return out


def legend() -> Text:
    """Which colour is whose: prompt, model, calculator; then what the marks before each episode mean."""
    parts: list = [(f" {role.writer} ", role.style) for role in Role]
    return Text.assemble(
        *(x for p in parts for x in (p, " ")), "· 1 ✓ correct (", ("=", "bold green"), " with the expected calls)"
    )


def group_lines(group: SampledGroup, width: int = 200, codes: bool = False) -> Text:
    """The prompt and its environment (in words, or by code with `codes`), then each episode: reward, a mark, its
    verdict and the transcript in colour, on one line if it fits in `width` columns, else the transcript on the next
    line, indented (long ones wrap there)."""
    environment = REGISTERED.get(group.environment)
    name = name_for(environment, codes) if environment is not None else shown(group.environment)
    out = Text.assemble(("prompt ", "bold"), (shown(group.prompt), "bold"), (f"  ({name})", "dim"))
    said = [shown(e.failure) if e.failure else "correct" for e in group.episodes]
    room = max(map(len, said))
    for i, (episode, verdict) in enumerate(zip(group.episodes, said, strict=True), 1):
        out.append("\n")
        out.append(f"{i:>2} {episode.reward:g} ")
        out.append(*(("✓", "bold green") if episode.reward else ("✗", "bold red")))
        out.append("=" if episode.expected else " ", "bold green")
        out.append(f" {verdict:<{room}}", "green" if episode.reward else "dim red")
        transcript = episode_text(Transcript(list(episode.segments)))
        out.append("  " if len(out.plain.rsplit("\n", 1)[-1]) + 2 + len(transcript) <= width else "\n" + " " * 6)
        out.append_text(transcript)
    return out


class RolloutsView(Screen):
    """The latest sampled group of the running (or last) reward run, redrawn at most every REFRESH seconds."""

    codes = False  # environments and runs named by codes, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    def __init__(self, feed: Feed) -> None:
        super().__init__()
        self.feed = feed
        self.drawn = -1  # the feed's version on screen
        self.redraws = 0  # how many times the view redrew (for tests)

    def compose(self) -> ComposeResult:
        yield Static("", id="rollouts-status")
        yield Static("", id="rollouts-numbers")
        yield Static(legend(), id="rollouts-legend")
        with VerticalScroll(id="rollouts-list"):
            yield Static("", id="rollouts-lines")
        yield Footer(compact=True, show_command_palette=False)

    @guarded
    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(REFRESH, self.redraw)

    @guarded
    def on_resize(self) -> None:
        self.drawn = -1  # the lines are laid out for the width
        self.redraw()

    def show_codes(self, codes: bool) -> None:
        """Shift+F5: the run and its environment in codes, or in words again (as the app says: the view
        never reads the app for it)."""
        self.codes = codes
        self.drawn = -1
        self.redraw()

    @guarded
    def redraw(self) -> None:
        """Show the feed if it changed since the last redraw."""
        if self.drawn == self.feed.version:
            return
        self.drawn = self.feed.version
        self.redraws += 1
        codes = self.codes  # the run and its environment in words, or in codes where a person asked (Shift+F5)
        self.query_one("#rollouts-status", Static).update(status(self.feed, codes))
        numbers = self.query_one("#rollouts-numbers", Static)
        numbers.display = self.feed.running or self.feed.group is not None
        feed = self.feed
        numbers.update(
            reward_line(feed.before, feed.latest, feed.group_size, feed.environments, self.size.width - 2, codes)
        )
        width = self.query_one("#rollouts-list").scrollable_content_region.width or self.size.width - 3
        lines = group_lines(self.feed.group, width, codes) if self.feed.group is not None else Text()
        if self.feed.error:
            lines = Text.assemble((f"a group could not be shown: {self.feed.error}\n", "bold red"), lines)
        self.query_one("#rollouts-legend", Static).display = self.feed.group is not None
        self.query_one("#rollouts-lines", Static).update(lines)
