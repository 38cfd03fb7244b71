"""The demonstrations view (Shift+F2): what the model learns from, with the characters that carry loss marked.

It shows the demonstrations fine-tuning would draw for the training form's mix and seed
(`Mix.demonstrations`), one a line under its environment's short label, laid out in as many columns as the
width holds. The characters that carry loss (the model's own calls and answer) are underlined in cyan;
those that do not (the prompt, the calculator's results) are dim. Which is which is read from the typed
transcript (`Transcript.carries_loss`, the mask `training_pair` trains with), never from the string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import label, name_for
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.transcript import Role, visible
from breadth.tui.guard import guarded, log_error, one_line

LOSS_STYLE = "bold cyan underline"  # predicted and trained on: the model's calls and answer
NO_LOSS_STYLE = {Role.PROMPT: "dim", Role.ENVIRONMENT: "dim yellow"}  # given, never predicted for loss
COLUMN_GAP = 3  # spaces between columns of demonstrations

Request = Callable[[], tuple[Mix, FinetuneSettings, object]]  # the training form's request (TrainPanel.request)


@dataclass(frozen=True)
class DemoLine:
    """One demonstration as shown: its environment, its characters styled by whether they carry loss, and counts."""

    environment: str
    text: Text  # the episode on one line, without the label
    chars: int  # characters of the episode (the start token not counted)
    with_loss: int  # of which carry loss


@dataclass(frozen=True)
class Tally:
    """Demonstrations, characters and characters with loss, for an environment or the whole mix."""

    demonstrations: int = 0
    chars: int = 0
    with_loss: int = 0

    def __add__(self, line: DemoLine) -> Tally:
        return Tally(self.demonstrations + 1, self.chars + line.chars, self.with_loss + line.with_loss)

    @property
    def share(self) -> float:
        """The fraction of characters that carry loss."""
        return self.with_loss / self.chars if self.chars else 0.0


def demo_line(problem: Problem) -> DemoLine:
    """`problem`'s demonstration, each run of characters styled by its loss mark (and, without loss, its writer)."""
    transcript = problem.demonstration()
    marks = transcript.carries_loss()
    text = Text(no_wrap=True, overflow="ellipsis")
    chars = zip(transcript.text, transcript.roles(), marks, strict=True)
    for (role, loss), run in groupby(chars, key=lambda c: (c[1], c[2])):
        text.append(visible("".join(c for c, _, _ in run)), LOSS_STYLE if loss else NO_LOSS_STYLE.get(role, "dim"))
    return DemoLine(problem.environment, text, len(marks), sum(marks))


def demo_lines(mix: Mix, seed: int) -> list[DemoLine]:
    """Every demonstration of `mix` for `seed`, environment by environment, as training draws them."""
    return [demo_line(problem) for problem in mix.demonstrations(seed)]


def tallies(lines: list[DemoLine]) -> dict[str, Tally]:
    """Per environment, in the order the lines give them."""
    out: dict[str, Tally] = {}
    for line in lines:
        out[line.environment] = out.get(line.environment, Tally()) + line
    return out


def summary(mix: Mix, seed: int, lines: list[DemoLine], codes: bool = False) -> Text:
    """Demonstrations and characters; then those with loss and their share, and each environment's share if several; the
    mix and its environments in words, or in codes with `codes`."""
    per_environment = tallies(lines)
    total = sum(lines, Tally())
    out = Text.assemble(
        (mix.name_for(codes), "bold"),
        f", seed {seed}: {total.demonstrations} demonstrations, {total.chars:,} characters\n",
    )
    out.append(f"with loss: {total.with_loss:,} ({100 * total.share:.0f}%)", style="bold")
    if len(per_environment) > 1:
        shares = (f"{name_for(REGISTERED[name], codes)} {100 * t.share:.0f}%" for name, t in per_environment.items())
        out.append(" · per environment: " + " · ".join(shares), style="dim")
    return out


def legend() -> Text:
    """What the marks mean, each shown in its own style."""
    return Text.assemble(
        ("B3+4|", LOSS_STYLE),
        " with loss: model's calls, answer · without: ",
        ("3+4=", NO_LOSS_STYLE[Role.PROMPT]),
        " prompt, ",
        ("7|", NO_LOSS_STYLE[Role.ENVIRONMENT]),
        " calculator",
    )


def environment_header(name: str, tally: Tally, width: int, codes: bool = False) -> Text:
    """An environment's tally above its demonstrations; its long label only if the line still fits `width` (with
    `codes`, after its code)."""
    environment = REGISTERED[name]
    counts = (
        f"{tally.demonstrations} demonstrations, {tally.chars:,} characters, "
        f"{tally.with_loss:,} with loss ({100 * tally.share:.0f}%)"
    )
    name = f"{environment.short} {label(environment)}" if codes else label(environment)
    if len(f"{name}: {counts}") > width:
        name = name_for(environment, codes)
    return Text.assemble((name, "bold underline"), f": {counts}")


def laid_out(lines: list[DemoLine], width: int, codes: bool = False) -> Text:
    """The lines after their environments' brief words (`two-digit`; with `codes`, short labels), row by row in as many
    columns as `width` holds.

    With several environments, each environment's lines start on a new row under its tally (`environment_header`),
    in as many columns as its own longest demonstration allows.
    """
    if not lines:
        return Text()
    label = max(len(name_for(REGISTERED[line.environment], codes)) for line in lines)
    groups = [(name, list(group)) for name, group in groupby(lines, key=lambda line: line.environment)]
    rows: list[Text] = []
    for name, group in groups:
        if len(groups) > 1:
            rows.append(environment_header(name, sum(group, Tally()), width, codes))
        cell = label + 1 + max(line.text.cell_len for line in group)
        columns = max(1, (width + COLUMN_GAP) // (cell + COLUMN_GAP))
        for start in range(0, len(group), columns):
            row = Text()
            for i, line in enumerate(group[start : start + columns]):
                row.append(" " * (i * (cell + COLUMN_GAP) - row.cell_len))  # to column i's start
                row.append(f"{name_for(REGISTERED[line.environment], codes):<{label}} ", style="bold").append_text(
                    line.text
                )
            rows.append(row)
    return Text("\n", no_wrap=True, overflow="ellipsis").join(rows)


class DemosView(Screen):
    """The training form's mix's demonstrations, with the characters that carry loss marked apart."""

    codes = False  # environments and runs named by codes, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    @dataclass
    class Built(Message):
        """The demonstrations of the form's mix, built in a worker (or why the form's request cannot be shown)."""

        mix: Mix | None = None
        seed: int = 0
        lines: list[DemoLine] | None = None
        error: str = ""

    def __init__(self, request: Request) -> None:
        super().__init__()
        self.request = request
        self.lines: list[DemoLine] = []
        self.built = None  # the DemosView.Built the worker sent, drawn again when Shift+F5 asks for codes

    def compose(self) -> ComposeResult:
        yield Static("demonstrations: reading the training form…", id="demos-status")
        yield Static(legend(), id="demos-legend")
        with VerticalScroll(id="demos-list"):
            yield Static("", id="demos-lines")
        yield Footer(compact=True, show_command_palette=False)

    @guarded
    def on_mount(self) -> None:
        """Read the form's request here (on the UI thread), build the lines in a worker."""
        try:
            mix, settings, _ = self.request()
        except ValueError as e:  # counts or a seed the form refuses: one line, no list
            self.show_refusal(str(e))
            return
        self.run_worker(lambda: self._build(mix, settings.seed), thread=True, group="demos", exclusive=True)

    def _build(self, mix: Mix, seed: int) -> None:
        try:
            self.post_message(self.Built(mix, seed, demo_lines(mix, seed)))
        except Exception as e:  # noqa: BLE001 -- a demonstration that cannot be built is one line, and the view stays
            log_error(e, "building the demonstrations view")
            self.post_message(self.Built(error=one_line(e)))

    def show_refusal(self, why: str) -> None:
        """One inline line in place of the demonstrations."""
        line = Text(f"no demonstrations to show: {why}", style="bold red", no_wrap=True, overflow="ellipsis")
        self.query_one("#demos-status", Static).update(line)
        self.query_one("#demos-legend", Static).display = False

    @on(Built)
    @guarded
    def show_lines(self, message: Built) -> None:
        if message.error or message.mix is None or message.lines is None:
            self.show_refusal(message.error or "nothing built")
            return
        self.lines, self.built = message.lines, message
        self.show_codes(self.codes)

    def show_codes(self, codes: bool) -> None:
        """The mix and its environments in words, or in codes where a person asked (Shift+F5, as the app says)."""
        self.codes = codes
        if self.built is not None:
            summary_text = summary(self.built.mix, self.built.seed, self.lines, self.codes)
            self.query_one("#demos-status", Static).update(summary_text)
            self.lay_out()

    @guarded
    def on_resize(self) -> None:
        self.lay_out()

    def lay_out(self) -> None:
        """Flow the lines into as many columns as the list's width holds."""
        box = self.query_one("#demos-list", VerticalScroll)
        width = box.scrollable_content_region.width or self.size.width
        lines = laid_out(self.lines, width - 1, self.codes)  # a column for the scrollbar
        self.query_one("#demos-lines", Static).update(lines)
