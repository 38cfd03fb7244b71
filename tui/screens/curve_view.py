"""The breadth curve view (F11): held-out success against the number of training environments, as the store fills.

`breadth curve` records its plan in the results store before its first run and each run as it finishes; this view
re-reads the store every few seconds in a thread worker and draws the newest curve: success on the training environments
and on the held-out ones (means over split x seed pairs) against N, and the ceiling (the held-out environments trained
directly) as a dotted line named on the chart, its value the axis's label of its row, N named under the axis; under the
chart, a row per N with its 95% interval, the gap and the share of pairs over half their ceiling, a line naming those
terms, then what keeps the curve from being read (training environments not learned, a low ceiling). `[` and `]` step
through the store's curves; F12 saves the curve as a figure. A talk's act may ask for a curve by its pool's words
(`operands=3`): the view clears at once to a plain "loading" line (never another act's chart under the act's caption),
shows the newest curve over that pool, then steps as before. From a fresh home (a talk) it shows the curve shipped with
breadth (`breadth.results/curve.sqlite`) and says so; the shipped store never changes, so each of its curves is read
once per process (`curve_store`; `read_ahead` reads a talk's next curves before their acts). What the store holds
is shown as text, never as markup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from breadth.core.results.breadth_curve import CEILING
from breadth.core.results.curve_points import CurvePoint, warnings
from breadth.core.world.environments.labels import where_words
from breadth.core.world.text.shown import shown
from breadth.tui.figure_files import FiguresAsked, Slide
from breadth.tui.guard import guarded, log_error, one_line
from breadth.tui.screens.curve_store import CurveRead, read_curve

REFRESH_SECONDS = 3.0  # how often the store is re-read while the view is open
TRAIN_COLOUR, HELD_COLOUR, CEILING_COLOUR = "green", "cyan", "magenta"  # the ceiling unlike the chart's grey grid
X_LABEL = "N: kinds of sums trained on"
SHARE = "pairs over ½ ceiling"  # the rows' last column: the share of pairs whose held out beats half their ceiling
PLOT_FRAME_ROWS = 4  # the chart's rows that are not its canvas: its top and bottom edges, N's ticks, N's name
TERMS = "[ ]: 95% over splits · pairs: splits x seeds · gap: training minus held out"  # under the rows, whole at 80


def status_line(read: CurveRead, numbered: bool = True, codes: bool = False) -> str:
    """The line over the chart: which curve (its place among the store's unless not `numbered`: a talk's act asks
    for its curve by words, and "curve 1 of 7" beside "act 7 of 7" reads as a second count) and its pool in words
    (`3 numbers`; with `codes`, as chosen: `operands=3`), how far it has filled, whose it is."""
    if read.curve is None:
        unread = f" ({read.skipped} stored curves this breadth cannot read)" if read.skipped else ""
        return f"no breadth curve in the results store yet: `breadth curve` fills this{unread}"
    plan = read.curve.plan
    where = f"curve {read.index + 1} of {read.count}: " if read.count > 1 and numbered else ""
    whose = " · shipped with breadth" if read.shipped else ""
    pool = read.curve.what if codes else where_words(read.curve.what)
    return (
        f"{where}{shown(pool)} · {len(plan.pool)} environments, {plan.held} held out · "
        f"{read.stored}/{read.total} runs{whose}"
    )


def rows_table(found: list[CurvePoint]) -> Table:
    """A row per N and the ceiling: training and held-out % with 95% intervals, the gap, and the share of split x
    seed pairs above half their ceiling, named so (called "transfer", 90% of it beside "held out 47%" read as a
    contradiction)."""
    t = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for column in ("N", "pairs", "training %", "held out %", "gap", SHARE):
        t.add_column(column, justify="right", no_wrap=True)
    for p in found:
        share = "-" if p.transfer is None else f"{100 * p.transfer:.0f}%"
        name = "ceiling" if p.n == CEILING else str(p.n)
        t.add_row(name, str(p.pairs), _pct(p.train), _pct(p.held), f"{100 * p.gap[0]:+.0f}", share)
    return t


def _pct(value: tuple[float, float, float]) -> str:
    m, low, high = value
    return f"{100 * m:.0f} [{100 * low:.0f}-{100 * high:.0f}]"


class CurvePlot(PlotextPlot):
    """Training (green) and held-out (cyan) success against N, N on a doubling axis and named under it; the ceiling
    a dotted magenta line labelled on the chart (in grey, unlabelled, it read as a grid line)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.found: list[CurvePoint] = []
        self.ceiling: float | None = None  # the ceiling's held-out %, if the curve has one

    def show(self, found: list[CurvePoint]) -> None:
        """Draw these points (at once: the store changes every few seconds at most)."""
        self.found = found
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        line = [p for p in found if p.n != CEILING]
        xs = [math.log2(p.n) for p in line]  # N doubles along the axis, labelled as N
        self.ceiling = None
        if xs:
            span = (min(xs) - 0.2, max(xs) + 0.2) if len(xs) > 1 else (xs[0] - 1, xs[0] + 1)
            ceiling = next((p for p in found if p.n == CEILING), None)
            if ceiling is not None:  # first: the curves are drawn over its dots where they cross it
                self.ceiling = 100 * ceiling.held[0]
                _ceiling(plt, self.ceiling, span)
            for attr, colour in (("train", TRAIN_COLOUR), ("held", HELD_COLOUR)):
                plt.plot(xs, [100 * getattr(p, attr)[0] for p in line], color=colour, marker="braille")
            plt.xticks(xs, [str(p.n) for p in line])
            plt.xlim(*span)
            plt.xlabel(X_LABEL)
        plt.ylim(0, 100)
        self.refresh()

    def y_ticks(self) -> dict[float, str]:
        """The y axis's labels at this height: 0%, 50% and 100%, and the ceiling's value on the row of its line in
        place of any of them that would share it (at 80x24 its line lay on the `50%` row)."""
        ticks = {0.0: "0%", 50.0: "50%", 100.0: "100%"}
        if self.ceiling is None:
            return ticks
        rows = max(self.size.height - PLOT_FRAME_ROWS, 1)

        def row(y: float) -> int:
            return math.floor(0.5 + (rows - 1) * y / 100)  # the canvas row plotext draws `y` on, of a 0-100 axis

        ticks = {y: label for y, label in ticks.items() if row(y) != row(self.ceiling)}
        return ticks | {self.ceiling: f"{self.ceiling:.0f}%"}

    def render(self):
        """The chart, or one dim line if plotext cannot draw it at this size."""
        try:
            ticks = self.y_ticks()
            width = max(map(len, ticks.values()))
            self.plt.yticks(list(ticks), [label.rjust(width) for label in ticks.values()])
            return super().render()
        except Exception as e:  # noqa: BLE001 -- a plot must never take the app down on stage
            return Text(f"(plot unavailable: {e})", style="dim")


def _ceiling(plt, y: float, span: tuple[float, float]) -> None:
    """The ceiling at `y` % across `span`: a dotted line named at its start (its value is the axis's label of its
    row: written on the line beside the axis's `50%`, at 80x24 it read as a ceiling of 50%)."""
    dots = 400  # more than any width has columns: a line of dots without gaps
    xs = [span[0] + (span[1] - span[0]) * i / dots for i in range(dots + 1)]
    plt.scatter(xs, [y] * len(xs), color=CEILING_COLOUR, marker="·")
    plt.text("ceiling ", span[0], y, color=CEILING_COLOUR, background="default", alignment="left")


class CurveView(Screen):
    """The newest breadth curve of the results store, re-read every few seconds."""

    codes = False  # environments and runs named by codes, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("left_square_bracket", "step(1)", "Older curve", key_display="["),
        Binding("right_square_bracket", "step(-1)", "Newer curve", key_display="]"),
        Binding("f12,ctrl+f", "figures", "Figure"),
    ]

    @dataclass
    class Read(Message):
        """A reading of the store (or why it could not be read)."""

        read: CurveRead = field(default_factory=CurveRead)
        error: str = ""
        asked: int = 0  # which ask it answers (`CurveView.asked`): an older ask's reading is dropped

    def __init__(self, words: str = "") -> None:
        super().__init__()
        self.index = 0  # the curve shown, newest first
        self.words = words  # the next reading shows the newest curve over this pool ('' for the curve at `index`)
        self.asked = 0  # how many times another curve was asked for (by words or a step): readings say which ask
        self.numbered = not words  # the status numbers the curve among the store's (not when an act asked by words)
        self.last = CurveRead()
        self.logged = ""  # the last store error written to app.log (not every few seconds)

    def compose(self) -> ComposeResult:
        yield Static("breadth curve: reading the results store…", id="curve-status")
        yield Static(self.key_line(), id="curve-key")
        yield CurvePlot(id="curve-plot")
        yield Static("", id="curve-rows")
        terms = Static(Text(TERMS, style="dim"), id="curve-terms")  # what the rows' terms mean, under them
        terms.display = False
        yield terms
        warned = Static("", id="curve-warnings")  # shown only with something to say (empty, it was a blank row)
        warned.display = False
        yield warned
        yield Footer(compact=True, show_command_palette=False)

    @staticmethod
    def key_line() -> Text:
        """What the chart's colours mean, readable without colour."""
        return Text.assemble(
            ("training", f"bold {TRAIN_COLOUR}"),
            " · ",
            ("held out", f"bold {HELD_COLOUR}"),
            " · ",
            ("ceiling (held out, trained directly)", f"bold {CEILING_COLOUR}"),
        )

    def on_mount(self) -> None:
        self.read_store()
        self.set_interval(REFRESH_SECONDS, self.read_store)

    def read_store(self) -> None:
        """Re-read the store in a thread worker (SQLite and the plan's keys stay off the UI thread); a store as it
        was when the curve shown was read (the shipped one always) is not read again for the same curve."""
        index, words, last, asked = self.index, self.words, self.last, self.asked
        known = last.state if not words and last.curve is not None and index == last.index else ()
        self.run_worker(lambda: self._read(index, words, known, asked), thread=True, group="curve", exclusive=True)

    def _read(self, index: int, words: str, known: tuple, asked: int) -> None:
        try:
            read = read_curve(index, words, known)
            if read is not None:
                self.post_message(self.Read(read, asked=asked))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read is one line, and the view stays
            if one_line(e) != self.logged:
                self.logged = one_line(e)
                log_error(e, "reading the results store for the breadth curve")
            self.post_message(self.Read(error=one_line(e), asked=asked))

    def show_codes(self, codes: bool) -> None:
        """Shift+F5: the pool in codes as chosen (`operands=3`), or in words again (as the app says: the view
        never reads the app for it)."""
        self.codes = codes
        if self.last is not None and self.last.curve is not None:
            self.query_one("#curve-status", Static).update(Text(status_line(self.last, self.numbered, self.codes)))

    @on(Read)
    @guarded
    def show_read(self, message: Read) -> None:
        status = self.query_one("#curve-status", Static)
        if message.asked != self.asked:
            return  # a reading begun before another curve was asked for (an act's, a step's): the asked one follows
        if message.error:
            status.update(Text(f"results store not read: {shown(message.error)}", style="bold red"))
            return
        read = message.read
        self.index, self.words = read.index, ""  # found by its words, the curve is then stepped from by index
        status.update(Text(status_line(read, self.numbered, self.codes)))
        if read == self.last:
            return  # nothing new: no redraw
        self.last = read
        self.query_one(CurvePlot).show(read.found)
        self.query_one("#curve-rows", Static).update(rows_table(read.found) if read.found else "")
        self.query_one("#curve-terms").display = bool(read.found)
        said = warnings(read.found)
        warned = self.query_one("#curve-warnings", Static)
        warned.update(Text("\n".join(f"! {line}" for line in said), style="yellow") if said else "")
        warned.display = bool(said)

    def show_curve(self, words: str) -> None:
        """Show the newest curve over the pool these words chose (a talk's act asks by words, as `breadth curve`
        names a pool); the newest curve of all if `words` is ''. Unless it shows a curve over that pool already, the
        view clears at once to a plain "loading" line: the act's caption never sits over another act's chart."""
        self.index, self.words, self.asked, self.numbered = 0, words, self.asked + 1, not words
        if self.last.curve is None or self.last.curve.what != words:
            self.last = CurveRead()
            if self.is_mounted:
                self._clear(f"loading the breadth curve over {words}…" if words else "loading the breadth curve…")
        self.read_store()

    def _clear(self, line: str) -> None:
        """A plain state: `line` over an empty chart, no rows, no warnings."""
        self.query_one("#curve-status", Static).update(Text(shown(line)))
        self.query_one(CurvePlot).show([])
        self.query_one("#curve-rows", Static).update("")
        self.query_one("#curve-terms").display = False
        self.query_one("#curve-warnings", Static).update("")
        self.query_one("#curve-warnings").display = False

    def action_step(self, by: int) -> None:
        """`[` an older curve, `]` a newer one (the store's curves, newest first)."""
        if self.last.count < 2:
            self.notify("the store holds one breadth curve", timeout=2)
            return
        self.index = min(max(self.index + by, 0), self.last.count - 1)
        self.asked, self.numbered = self.asked + 1, True
        self.read_store()

    def action_figures(self) -> None:
        """F12: the curve as it stands, as a figure, written by the app's figures worker."""
        read = self.last
        if read.curve is None or not read.found:
            self.notify("no curve points yet: nothing to draw", severity="error", timeout=3)
            return
        found, what = list(read.found), read.curve.what
        self.post_message(FiguresAsked(Slide("curve", lambda out: _curve_figure(found, what, out)), self))

    def say(self, line: str, error: bool = False) -> None:
        """Where the figure went, or why not (the figures worker answers the screen that asked)."""
        self.notify(shown(line), severity="error" if error else "information", timeout=4)


def _curve_figure(found: list[CurvePoint], what: str, out):
    """In the figures worker: the curve drawn by matplotlib (imported only then)."""
    from breadth.core.results.curve_figure import curve_figure

    return curve_figure(found, out, shown(what))
