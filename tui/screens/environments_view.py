"""The environments view (Shift+F4): the playing model scored on every environment, read by dimension.

The engine scores the model on the test split of each of the 183 environments (30 sums each) in the background
(`tui.parts.environments` asks once per model and keeps the scores); meanwhile this view says how far it has got
and for how long. Then one heat map: rows are digit layouts (`2.1` is 23+4) under the operand count they belong
to, columns the operation at each gap (`+-` is 12+3-4) in each call form (`+ p`: postfix), a cell the % of its
environment's sums solved, coloured by the transfer matrix's bands (the numbers read the same without colour),
`*` on an environment the model trained on. The first row pools every operand count, each `N numbers` row its
digit layouts, the last column each row; the line over the table gives the overall mean, as `breadth eval
--envs all` does (`core.results.dimensions`, the same pooling). Under the table, the cell under the cursor:
its environments, each with its own rate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from breadth.core.results.dimensions import Column, Rate, coordinates, rate, summarise, value
from breadth.core.results.matrix import band, band_ranges
from breadth.core.world.arithmetic.calculator import FORMS
from breadth.core.world.arithmetic.problem import PLATE_FORM
from breadth.core.world.environments.labels import name_for
from breadth.core.world.environments.registry import by_name, env_id
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.text.shown import shown
from breadth.tui.guard import guarded
from breadth.tui.screens.matrix_view import BAND_STYLES

TICK = 0.5  # seconds between looks at the scoring (progress, elapsed time)
LABEL = 10  # the row labels' width: `4 numbers`, `1.1.2.2`
CELL, CELL_MAX = 5, 7  # a column's least and most width: `*100` and a space
MEAN = -1  # the mean column's index in a cell's key
ENTRY_LINES = 3  # lines of environments listed under the table for a pooled cell (the rest counted)


@dataclass(frozen=True)
class Row:
    """A row of the heat map: every environment, one operand count, or one digit layout."""

    label: str  # `all`, `3 numbers`, `2.1.2`
    operands: int | None  # None for the row of every environment
    digits: str | None  # a digit layout (`2.1.2`); None for a pooled row


@dataclass
class Heat:
    """Scores laid out as the view shows them: rows, columns, and the environments pooled in each cell."""

    scores: dict[str, HeldOutScore]
    rows: list[Row]
    columns: list[Column]  # operation layouts in each call form, the plate's form first
    members: dict[tuple[int, int], list[str]]  # (row, column or MEAN) -> environment names, registry order
    allowed: dict[int, set[int]]  # operand count -> the columns its environments have
    overall: Rate
    by_form: dict[str, Rate]

    def rate(self, row: int, column: int) -> Rate | None:
        """The cell's rate (None where no environment sits)."""
        names = self.members.get((row, column))
        return rate(self.scores[n] for n in names) if names else None


def heat(scores: dict[str, HeldOutScore]) -> Heat:
    """The heat map of `scores` (environment name -> score): rows and columns in `breadth eval`'s order."""
    summary = summarise(scores)
    forms, ops = list(summary.by["form"]), list(summary.by["op"])
    at = {name: coordinates(name) for name in scores}
    columns = sorted(
        {Column(value(a, "op"), a.form) for a in at.values()}, key=lambda c: (forms.index(c.form), ops.index(c.op))
    )
    rows = [Row("all", None, None)]
    for table in summary.tables:
        rows += [
            Row(f"{table.operands} numbers", table.operands, None),
            *(Row(d, table.operands, d) for d in table.rows),
        ]
    index = {(r.operands, r.digits): i for i, r in enumerate(rows)}
    members: dict[tuple[int, int], list[str]] = {}
    allowed: dict[int, set[int]] = {}
    for name, a in at.items():
        column = columns.index(Column(value(a, "op"), a.form))
        allowed.setdefault(a.operands, set()).add(column)
        for row in (0, index[(a.operands, None)], index[(a.operands, value(a, "digits"))]):
            for c in (column, MEAN):
                members.setdefault((row, c), []).append(name)
    return Heat(scores, rows, columns, members, allowed, summary.overall, summary.by["form"])


def percent(mean: float, trained: bool = False) -> Text:
    """A rate (0..1) as `57`, `*100` (`*`: trained on) in its band's colour."""
    return Text(f"{'*' if trained else ''}{100 * mean:.0f}", style=BAND_STYLES[band(mean)])


def cell_text(h: Heat, row: int, column: int, trained: frozenset[str]) -> Text:
    """A cell: its percent, `*` on a trained environment, a dim `·` where its table has no environment, blank
    where its operand count has no such operation layout."""
    r = h.rate(row, column)
    if r is not None:
        names = h.members[(row, column)]
        return percent(r.mean, trained=h.rows[row].digits is not None and column != MEAN and names[0] in trained)
    operands = h.rows[row].operands
    return Text("·" if operands is None or column in h.allowed.get(operands, ()) else "", style="dim")


def right(text: Text, width: int) -> Text:
    """`text` pushed to the right of a `width`-wide column (a DataTable without padding)."""
    return Text(" " * max(0, width - text.cell_len)).append_text(text)


def where(h: Heat, row: int, column: int) -> str:
    """What a cell pools, in words: `3 numbers, +- infix`, `2.1, every operation`, `every environment`."""
    r = h.rows[row]
    place = "every environment" if r.operands is None else r.label
    if column == MEAN:
        return place if r.operands is None else f"{place}, every operation"
    c = h.columns[column]
    return f"{place}, {c.op} {c.form}"


def form_key() -> str:
    """`p: postfix`: what a column's mark says (the plate's form has none)."""
    return ", ".join(f"{Column('+', f).header.split()[-1]}: {f}" for f in FORMS if f != PLATE_FORM)


def scale_key() -> Text:
    """The key line: each band's percentages in its colour, `*`, `·`, and the forms' marks."""
    out = Text("% solved: ")
    for text, name in band_ranges():
        out.append(f" {text} ", style=BAND_STYLES[name]).append(" ")
    return out.append(f"· *trained on · {form_key()}")


def cell_detail(h: Heat, row: int, column: int, trained: frozenset[str], width: int, codes: bool = False) -> Text:
    """The lines under the table: the cell's one environment (id, rate, what it is, its failures), or the pooled
    environments, best first, each with its rate, in `width` columns (the rest counted), each named in its brief
    words (`two-digit`; a generated one has none and keeps its id) or, with `codes`, by short label."""
    names = h.members.get((row, column), [])
    if not names:
        return Text(f"{where(h, row, column)}: no environment sits here", style="dim")
    r = h.rate(row, column)
    if len(names) == 1:
        name = names[0]
        s = h.scores[name]
        out = Text.assemble((env_id(by_name(name)), "bold"), "  ", percent(r.mean), f"% ({s.solved}/{s.total})")
        if name in trained:
            out.append("  trained on", style="bold")
        out.append(f"\n{by_name(name).description}", style="dim")
        kinds = ", ".join(f"{shown(k)} {n}" for k, n in sorted(s.failures.items(), key=lambda kv: -kv[1]))
        return out.append(f"\nfailures: {kinds}" if kinds else "\nfailures: none")
    out = Text.assemble((where(h, row, column), "bold"), ": mean ", percent(r.mean))
    out.append(f"% over {len(names)} environments ({r.solved:,} of {r.total:,} sums)")
    ranked = sorted(names, key=lambda n: -h.scores[n].rate)
    lines: list[Text] = [Text()]
    for i, name in enumerate(ranked):
        named = name_for(by_name(name), codes)
        entry = Text(("*" if name in trained else "") + named + " ").append_text(percent(h.scores[name].rate))
        room = width - (len(f"  +{len(ranked) - i} more") if len(lines) == ENTRY_LINES else 0)
        if lines[-1].cell_len and lines[-1].cell_len + 3 + entry.cell_len > room:
            if len(lines) == ENTRY_LINES:
                lines[-1].append(f"  +{len(ranked) - i} more", style="dim")
                break
            lines.append(Text())
        lines[-1].append(" · " if lines[-1].cell_len else "").append_text(entry)
    for line in lines:
        out.append("\n").append_text(line)
    return out


class EnvironmentsView(Screen):
    """The playing model's score on every environment, by dimension (scored in the background, kept per model)."""

    codes = False  # environments and runs named by codes, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    @dataclass
    class Built(Message):
        """A model's heat map, laid out in a worker (the registry's 183 environments are made once)."""

        scoring: object  # tui.parts.environments.Scoring
        heat: Heat

    def __init__(self, board) -> None:
        super().__init__()
        self.board = board  # tui.parts.environments.Board: `playing()` says what to show
        self.scoring = None  # the Scoring drawn in the table
        self.building: object = None  # the Scoring whose heat map a worker is making

    def compose(self) -> ComposeResult:
        yield Static("", id="env-title")
        yield Static("", id="env-state")
        yield Static(scale_key(), id="env-key")
        yield DataTable(id="env-table", cursor_type="cell", cell_padding=0, zebra_stripes=False)
        yield Static("", id="env-detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.tick()
        self.set_interval(TICK, self.tick)

    @guarded
    def tick(self) -> None:
        """Look at the playing model's scoring: say how far it has got, and draw its scores once they are in."""
        now = self.board.playing()
        scoring = now.scoring
        title, state = self.query_one("#env-title", Static), self.query_one("#env-state", Static)
        if scoring is None:
            title.update(Text("every environment", style="bold"))
            state.update(Text("no model plays: choose one in the runs table (Tab, then Enter on a row)"))
            self.draw(None)
            return
        title.update(
            Text.assemble((scoring.title, "bold"), f": every environment's test split, {scoring.held_out} sums")
        )
        if scoring.error:
            state.update(Text(f"not scored: {shown(scoring.error)}", style="bold red"))
        elif scoring.scores is None:
            state.update(self.progress(scoring, now))
        elif scoring.summary is None:
            state.update(Text("laying out the scores…"))
            if self.building is not scoring:
                self.building = scoring
                self.run_worker(lambda: self.post_message(self.Built(scoring, heat(scoring.scores))), thread=True)
        else:
            state.update(self.overall(scoring))
        self.draw(scoring if scoring.summary is not None else None)

    @staticmethod
    def progress(scoring, now) -> Text:
        """`scoring 40 of 183 environments · 3 s`, or what it waits for."""
        seconds = time.monotonic() - scoring.started
        done = f"{scoring.done} of {scoring.total} environments" if scoring.total else "the environments"
        if not now.ready:
            return Text(f"waiting for the model to start · {seconds:.0f} s")
        if now.training:
            return Text(f"scored {done}; paused while the engine trains, resumes after · {seconds:.0f} s")
        return Text(f"scoring {done} (plays and training go first) · {seconds:.0f} s")

    @staticmethod
    def overall(scoring) -> Text:
        """`overall 2% over 183 environments (87 of 5,490 sums) · infix 2% · postfix 1% · seed 0, scored in 7.1 s`
        (`6.7 s of scoring in 14 s` when training or plays went first)."""
        h: Heat = scoring.summary
        o = h.overall
        out = Text.assemble("overall ", percent(o.mean), f"% over {o.environments} environments")
        out.append(f" ({o.solved:,} of {o.total:,} sums)")
        for form, r in h.by_form.items():
            out.append(f" · {form} ").append_text(percent(r.mean)).append("%")
        waited = scoring.seconds - scoring.busy > 1  # training or plays went first
        took = f"{scoring.busy:.1f} s of scoring in {scoring.seconds:.0f} s" if waited else f"{scoring.seconds:.1f} s"
        return out.append(f" · seed {scoring.seed}, scored in {took}", style="dim")

    @on(Built)
    @guarded
    def built(self, message: Built) -> None:
        message.scoring.summary = message.heat  # kept with the scores: reopening draws at once
        self.building = None
        self.tick()

    def draw(self, scoring) -> None:
        """Fill the table with `scoring`'s heat map (nothing if it is the one drawn; empty for None)."""
        if scoring is self.scoring:
            return
        self.scoring = scoring
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if scoring is None:
            self.query_one("#env-detail", Static).update(Text())
            return
        h: Heat = scoring.summary
        width = max(CELL, min(CELL_MAX, (self.size.width - LABEL - 3) // (len(h.columns) + 1)))
        for c in [*(c.header for c in h.columns), "mean"]:
            table.add_column(Text(f"{c:>{width}}"), width=width)
        for i, row in enumerate(h.rows):
            cells = [right(cell_text(h, i, c, scoring.trained), width) for c in (*range(len(h.columns)), MEAN)]
            label = Text(f" {row.label:<{LABEL - 1}}", style="bold" if row.digits is None else "")
            table.add_row(*cells, label=label)
        where = table.cursor_coordinate
        self.show_cell(where.row, where.column)

    @on(DataTable.CellHighlighted)
    @guarded
    def highlighted(self, event: DataTable.CellHighlighted) -> None:
        self.show_cell(event.coordinate.row, event.coordinate.column)

    def show_codes(self, codes: bool) -> None:
        """Shift+F5: the environments under the table by code, or in words again (as the app says: the view
        never reads the app for it)."""
        self.codes = codes
        where = self.query_one(DataTable).cursor_coordinate
        self.show_cell(where.row, where.column)

    def show_cell(self, row: int, column: int) -> None:
        """The lines under the table for the cell at (row, column) of the table (its last column: the mean)."""
        if self.scoring is None:
            return
        h: Heat = self.scoring.summary
        column = MEAN if column >= len(h.columns) else column
        detail = cell_detail(h, row, column, self.scoring.trained, max(20, self.size.width - 2), self.codes)
        self.query_one("#env-detail", Static).update(detail)
