"""The transfer matrix view: stored runs' held-out success, training mixes by every environment, filling in live.

Rows are the training mixes of the results store's runs from the shipped base, the plate's three first, each
with a name no other row has; columns every environment, grouped as `core.results.matrix` orders them; a cell is the
mean held-out success over seeds, `*` where the row trained on that environment, coloured by its band (bold green
high, red 0: the key line says so, and the numbers read the same without colour). The table takes the screen's
width. The store is re-read in a thread worker every few seconds, so rows appear as `breadth matrix` or
`breadth sweep` finish runs in another terminal. A mix run with several settings or held-out sizes shows one
cell: the default settings first, then the most seeds. Rows scored on generated environments (`breadth curve`'s)
add a column for each where they fit, and where they do not, the columns pool them by dimension instead
(`tui.screens.matrix_by_dimension`). F12 (or Ctrl+F) saves the matrix as a figure, and says where on this screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from breadth.core.results.matrix import MatrixRow, band, band_ranges, columns, group_of, row_names, stored_rows
from breadth.core.results.matrix_dimensions import DimensionColumn, dimension_columns
from breadth.core.results.report import summarise
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE, SHIPPED_RESULTS
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store, StoredRun
from breadth.core.world.environments.environment import short_label
from breadth.core.world.environments.labels import header, label, name_for
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.registry import by_name
from breadth.core.world.runs.records import settings_note
from breadth.core.world.text.shown import clip, episode_text, shown
from breadth.core.world.text.transcript import Transcript
from breadth.tui.figure_files import FiguresAsked, Slide
from breadth.tui.guard import guarded, log_error, one_line
from breadth.tui.screens import matrix_by_dimension as by_dimension

REFRESH_SECONDS = 3.0  # how often the store is re-read while the view is open
EXAMPLES_SHOWN = 3  # failed transcripts under a cell, taking its seeds in turn
LABEL_WIDTH = 14  # the row names' least width (a longer name is cut with `…`; the detail line has it whole)
LABEL_MAX = 40  # and the most they take on a wide screen
CELL_WIDTH = 5  # a column's least width: ` *100`, ` a2x2` (cells have no padding)
CELL_MAX = 9  # and the most: wider screens give the rest to the row names
PLATE_MIXES = tuple(preset.mix.spec() for preset in PRESETS.values())  # the plate's rows, first, in this order
BAND_STYLES = {  # core.results.matrix.SCALE's bands: green, yellow, orange, red (as hex: a theme cannot fold them)
    "high": "bold #2ecc40",
    "middle": "#e6c229",
    "low": "#ff8c1a",
    "none": "#ff4d4d",
}


def rows_of(runs: list[StoredRun]) -> list[MatrixRow]:
    """One row per stored mix, the plate's first (see core.results.matrix.stored_rows)."""
    return stored_rows(summarise(runs), PLATE_MIXES)


def row_label(name: str, width: int = LABEL_WIDTH) -> Text:
    """A row's name as text (a stored mix may hold markup or escapes), cut to `width` where a word ends (the detail
    has it whole)."""
    return Text(clip(shown(name), width))


def cell_text(row: MatrixRow, environment: str) -> Text:
    """`100`, `*94` (`*`: trained on) in its band's colour (bold green high, red 0), or a dim `-` if not scored."""
    f = row.cells.get(environment)
    if f is None or not f.total:
        return Text("-", style="dim", justify="right")
    mark = "*" if environment in row.trained else ""
    return Text(f"{mark}{100 * f.mean:.0f}", style=BAND_STYLES[band(f.mean)], justify="right")


def scale_key() -> Text:
    """The key line: each band's percentages in its colour, what `*` and `-` mean, and F12."""
    out = Text("key: ")
    for text, name in band_ranges():
        out.append(f" {text} ", style=BAND_STYLES[name]).append(" ")
    return out.append("· *trained on · - not scored · F12 figure", style="")


def usable(screen_width: int) -> int:
    """The columns the table's names and cells can take: the screen's less its scrollbar and a space."""
    return screen_width - 2 - 1  # the table's vertical scrollbar; a space before the names


def widths(screen_width: int, names: list[str], columns_count: int, least: int = CELL_WIDTH) -> tuple[int, int]:
    """(row name width, column width) that fill `screen_width`: columns as wide as CELL_MAX allows (never under
    `least`) after the names ask for what they need (up to LABEL_MAX), then the rest to the names (up to LABEL_MAX).
    Cells have no padding: a column is one wider than its widest text, so that right-justified numbers keep a space
    between them."""
    usable_width = usable(screen_width)
    want = max(LABEL_WIDTH, min(LABEL_MAX, max((len(shown(n)) for n in names), default=0)))
    cell = max(least, min(CELL_MAX, (usable_width - want) // columns_count))
    label = max(LABEL_WIDTH, min(LABEL_MAX, usable_width - columns_count * cell))  # what the columns leave, in limits
    return label, cell


def column_header(names: list[str], i: int, width: int, codes: bool = False) -> str:
    """Column `i`'s two header lines right-justified to `width`: in words, what is done to how many numbers over
    their range (`add 3` over `0-9`: `labels.header`); with `codes`, its group over a group's first column, then
    its short label (`a3x1`)."""
    name = names[i]
    if codes:
        first = i == 0 or group_of(names[i - 1]) != group_of(name)
        lines = (group_of(name) if first else "", short_label(name))
    else:
        lines = _header(name)
    return "\n".join(f"{line:>{width}}" for line in lines)


def _header(name: str) -> tuple[str, str]:
    try:
        return header(by_name(name))
    except KeyError:  # a stored run's environment no longer generated
        return "", name


def header_width(names: list[str], codes: bool = False) -> int:
    """The least width of a column: CELL_WIDTH, and one more than its widest header line."""
    widest = (len(short_label(n)) if codes else max(map(len, _header(n))) for n in names)
    return max(CELL_WIDTH, max(widest, default=0) + 1)


def cell_detail(row: MatrixRow, name: str, codes: bool = False) -> Text:
    """The lines under the table for one cell: mix, environment, per-seed rates, settings, failure kinds over seeds,
    then a few failed transcripts (seeds in turn) in their writers' colours, each with its failure kind. Environments
    are named in words, with their codes where a person asked for them.
    """
    fam = by_name(name)
    named = f"{label(fam)} ({fam.short})" if codes else label(fam)
    hidden = f" (+{row.hidden} other settings not shown)" if row.hidden else ""
    counts = "+".join(f"{shown(_name(name, codes))} {n}" for name, n in _counts(row.mix))  # every environment
    out = Text.assemble((counts, "bold"), (hidden, "dim"), "\n")
    role = "trained on" if name in row.trained else "held out"
    held = "all" if row.key is None or row.key.held_out is None else row.key.held_out
    note = " ".join(filter(None, (settings_note(row.key.settings), row.key.note))) if row.key else ""  # lockstep K
    note = note or "default settings"
    notes = Text(f"{note}, held-out {held}\n", style="dim")
    f = row.cells.get(name)
    if f is None or not f.total:
        return out.append(f"{named}, {role}: not scored in these runs\n").append_text(notes)
    out.append(
        f"{named}, {role}: {100 * f.mean:.0f}% [{100 * f.low:.0f}-{100 * f.high:.0f}] "
        f"over {len(f.rates)} seeds ({f.solved}/{f.total})\n"
    )
    out.append("per seed: " + "  ".join(f"s{s} {100 * r:.0f}" for s, r in sorted(f.rates.items())) + "\n")
    out.append_text(notes)
    unsolved = f.total - f.solved
    if not unsolved:
        return out.append("failures: none")
    if not f.failures:
        out.append(f"failures: {unsolved} unsolved, kinds not recorded")
    else:
        kinds = ", ".join(f"{shown(kind)} {n}" for kind, n in sorted(f.failures.items(), key=lambda kv: -kv[1]))
        out.append(f"failures (all seeds): {kinds}")
    if not f.examples:
        return out.append("\nno failed transcripts kept (runs stored before they were)", style="dim")
    for seed, example in f.examples[:EXAMPLES_SHOWN]:
        out.append(f"\ns{seed} ", style="dim").append_text(episode_text(Transcript(list(example.segments))))
        out.append(f"  {shown(example.failure)}", style="dim")
    return out


def _name(name: str, codes: bool) -> str:
    """An environment's brief words, or its code with `codes`; a stored name no longer registered as it is."""
    try:
        return name_for(by_name(name), codes)
    except KeyError:
        return name


def _counts(mix: str) -> tuple[tuple[str, int], ...]:
    try:
        return Mix.parse(mix).counts
    except MixError:  # a stored mix of an environment no longer registered
        return ((mix, 0),)


class MatrixView(Screen):
    """The transfer matrix of the results store, re-read every few seconds."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Close"), Binding("f12,ctrl+f", "figures", "Figure")]

    @dataclass
    class Read(Message):
        """The store's matrix lines, read in a worker (or why they could not be)."""

        lines: list[MatrixRow] = field(default_factory=list)
        error: str = ""
        shipped: bool = False  # the user's store has no runs from the shipped base: these are the shipped results
        read: int = 0  # which read this answers (reads are numbered as asked): an older one is stale once a newer shows

    codes = var(False, init=False)  # rows and columns named by codes, not words (the app's Shift+F5 sets it)

    def __init__(self, codes: bool = False) -> None:
        super().__init__()
        self.set_reactive(MatrixView.codes, codes)
        self.lines: list[MatrixRow] = []
        self.names: list[str] = []  # each row's name, no two alike (core.results.matrix.row_names)
        self.widths = (LABEL_WIDTH, CELL_WIDTH)  # the row names' and each column's, set by the screen's width
        self.columns: list[str] | list[DimensionColumn] = []  # an environment each, or pooled by dimension
        self.base_hash: str | None = None  # hashed once, in the first read
        self.logged = ""  # the last store error written to app.log (not every few seconds)
        self.asked = 0  # reads asked for so far; each answer carries its number
        self.shown = 0  # the number of the read on show: a read cancelled by a newer one still posts, late

    def compose(self) -> ComposeResult:
        yield Static("transfer matrix: reading the results store…", id="matrix-status")
        yield Static(scale_key(), id="matrix-key")
        yield DataTable(id="matrix-table", cursor_type="cell", header_height=2, cell_padding=0)
        yield Static("", id="matrix-note")
        yield Static("", id="matrix-detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_resize(self) -> None:
        self.lay_out()

    def lay_out(self, force: bool = False) -> None:
        """Size the row names and columns to the screen's width; rebuild the table if they changed (or `force`): a
        column per environment (registered or generated) where they fit, else pooled by dimension."""
        if by_dimension.fits(self.lines, usable(self.size.width), LABEL_WIDTH, CELL_WIDTH):
            names = columns(self.lines)
            fit = widths(self.size.width, self.names, len(names), header_width(names, self.codes))
        else:
            names = dimension_columns(self.lines)
            cells = by_dimension.least_widths(names, CELL_WIDTH)
            fit = (max(LABEL_WIDTH, min(LABEL_MAX, usable(self.size.width) - sum(cells))), tuple(cells))
        if fit == self.widths and names == self.columns and not force and self.query_one(DataTable).columns:
            return
        self.widths, self.columns = fit, names
        pooled = bool(names) and isinstance(names[0], DimensionColumn)
        self.query_one("#matrix-key", Static).update(by_dimension.scale_key(BAND_STYLES) if pooled else scale_key())
        label = fit[0]
        table = self.query_one(DataTable)
        where = table.cursor_coordinate
        table.clear(columns=True)
        for i, name in enumerate(names):
            if pooled:
                table.add_column(by_dimension.header(names, i, fit[1][i]), key=name.key, width=fit[1][i])
                continue
            table.add_column(column_header(names, i, fit[1], self.codes), key=name, width=fit[1])
        for line, name in zip(self.lines, self.names, strict=True):
            if pooled:
                row = (by_dimension.cell_text(line, column, BAND_STYLES) for column in names)
            else:
                row = (cell_text(line, environment) for environment in names)
            table.add_row(*row, key=line.mix, label=Text(f" {row_label(name, label).plain:<{label}}"))
        if self.lines:
            table.move_cursor(row=min(where.row, len(self.lines) - 1), column=min(where.column, len(names) - 1))

    def on_mount(self) -> None:
        self.read_store()
        self.set_interval(REFRESH_SECONDS, self.read_store)

    def read_store(self) -> None:
        """Re-read the store in a thread worker (SQLite and the base's hash stay off the UI thread)."""
        self.asked += 1
        self.run_worker(partial(self._read, self.asked), thread=True, group="matrix", exclusive=True)

    def _read(self, read: int) -> None:
        try:
            if self.base_hash is None:
                self.base_hash = weights_hash(BASE)
            with Store(read_only=True) as store:
                runs = store.runs(base_hash=self.base_hash)
            if runs:
                self.post_message(self.Read(rows_of(runs), read=read))
                return
            with Store(SHIPPED_RESULTS, immutable=True) as store:  # a fresh home (a talk): the README's own runs
                self.post_message(self.Read(rows_of(store.runs(base_hash=self.base_hash)), shipped=True, read=read))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read is one line, and the view stays
            if one_line(e) != self.logged:
                self.logged = one_line(e)
                log_error(e, "reading the results store for the matrix")
            self.post_message(self.Read([], one_line(e), read=read))

    @on(Read)
    @guarded
    def show_lines(self, message: Read) -> None:
        if message.read < self.shown:
            return  # a read that began before the one on show (the shipped runs after the user's first run was stored)
        self.shown = message.read
        status = self.query_one("#matrix-status", Static)
        if message.error:
            status.update(Text(f"results store not read: {shown(message.error)}", style="bold red"))
            return
        seeds = sorted({len(line.seeds) for line in message.lines}) or [0]
        over = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
        shipped = " · runs shipped with breadth" if message.shipped else ""  # yours replace them once stored
        status.update(
            f"held-out % solved, mean over {over} seeds · {len(message.lines)} mixes{shipped}"
            if message.lines
            else "no stored runs from the shipped base yet: `breadth matrix` or `breadth sweep` fill this"
        )
        if message.lines == self.lines:
            return  # nothing new: keep the cursor and the table as they are
        self.lines = message.lines
        self.relabel()

    def watch_codes(self) -> None:
        self.relabel()

    def relabel(self) -> None:
        """Name the rows and columns in words, or in codes where a person asked for them (Shift+F5), and lay out."""
        self.names = row_names(self.lines, self.codes)
        self.lay_out(force=True)
        if self.lines:
            where = self.query_one(DataTable).cursor_coordinate
            self.show_cell(where.row, where.column)

    @on(DataTable.CellHighlighted)
    @guarded
    def highlighted(self, event: DataTable.CellHighlighted) -> None:
        self.show_cell(event.coordinate.row, event.coordinate.column)

    def show_cell(self, row: int, column: int) -> None:
        """The detail lines under the table for the cell at (row, column)."""
        if 0 <= row < len(self.lines) and 0 <= column < len(self.columns):
            line, name = self.lines[row], self.columns[column]
            if isinstance(name, DimensionColumn):
                text = by_dimension.detail(line, name, max(20, self.size.width - 2), self.codes)
                text = Text.assemble((f"{shown(self.names[row])}  ", "bold"), text)
            else:
                text = cell_detail(line, name, self.codes)
            self.query_one("#matrix-detail", Static).update(text)

    def action_figures(self) -> None:
        """F12: the matrix as it stands, as a figure (and this screen), written by the app's figures worker."""
        if not self.lines:
            self.say("no rows yet: nothing to draw", error=True)
            return
        rows, names = list(self.lines), list(self.names)
        self.post_message(FiguresAsked(Slide("matrix", lambda out: _matrix_figure(rows, names, out)), self))

    def say(self, line: str, error: bool = False) -> None:
        """A line on this screen, above the detail: where the figure went, or why not."""
        note = self.query_one("#matrix-note", Static)
        note.update(Text(shown(line), style="bold red" if error else "bold"))
        note.display = True


def _matrix_figure(rows: list[MatrixRow], names: list[str], out):
    """In the figures worker: the matrix drawn by matplotlib (imported only then), rows named as on screen."""
    from breadth.core.results.figures import matrix_figure

    return matrix_figure(rows, out, names)
