"""The transfer matrix view: stored runs' held-out success, training mixes by every family, filling in live.

Rows are the training mixes of the results store's runs from the shipped base; columns every family,
grouped as `core.results.matrix` orders them; a cell is the mean held-out success over seeds, `*` and
bold where the row trained on that family. The store is re-read in a thread worker every few seconds,
so rows appear as `breadth matrix` or `breadth sweep` finish runs in another terminal. A mix run with
several settings or held-out sizes shows one cell: the default settings first, then the most seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from breadth.core.results.matrix import MatrixRow, columns, group_of, stored_rows
from breadth.core.results.report import summarise
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun
from breadth.core.world.families import FAMILIES, short_label
from breadth.core.world.mix import Mix, MixError
from breadth.core.world.records import settings_note
from breadth.core.world.text import episode_text, shown
from breadth.core.world.transcript import Transcript
from breadth.tui.guard import guarded, log_error, one_line

REFRESH_SECONDS = 3.0  # how often the store is re-read while the view is open
EXAMPLES_SHOWN = 3  # failed transcripts under a cell, taking its seeds in turn
LABEL_WIDTH = 14  # the row label (the mix) is cut to this many characters; the detail line has it whole


def rows_of(runs: list[StoredRun]) -> list[MatrixRow]:
    """One row per stored mix, in the order mixes first appear (see core.results.matrix.stored_rows)."""
    return stored_rows(summarise(runs))


def row_label(row: MatrixRow) -> Text:
    """The row's mix as text (a stored mix may hold markup or escapes), cut to LABEL_WIDTH (the detail has it whole)."""
    label = shown(row.label)
    return Text(label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…")


def cell_text(row: MatrixRow, family: str) -> Text:
    """`100`, `*94` (bold: trained on), or a dim `-` when the family was not scored."""
    f = row.cells.get(family)
    if f is None or not f.total:
        return Text("-", style="dim", justify="right")
    mark = "*" if family in row.trained else ""
    return Text(f"{mark}{100 * f.mean:.0f}", style="bold" if mark else "", justify="right")


def cell_detail(row: MatrixRow, family: str) -> Text:
    """The lines under the table for one cell: mix, family, per-seed rates, settings, failure kinds over seeds,
    then a few failed transcripts (seeds in turn) in their writers' colours, each with its failure kind.
    """
    fam = FAMILIES[family]
    hidden = f" (+{row.hidden} other settings not shown)" if row.hidden else ""
    counts = "+".join(f"{shown(short_label(name))} {n}" for name, n in _counts(row.mix))  # every family, past three
    out = Text.assemble((counts, "bold"), (hidden, "dim"), "\n")
    role = "trained on" if family in row.trained else "held out"
    held = "all" if row.key is None or row.key.held_out is None else row.key.held_out
    note = (settings_note(row.key.settings) if row.key else "") or "default settings"
    notes = Text(f"{note}, held-out {held}\n", style="dim")
    f = row.cells.get(family)
    if f is None or not f.total:
        return out.append(f"{fam.label} ({fam.short}), {role}: not scored in these runs\n").append_text(notes)
    out.append(
        f"{fam.label} ({fam.short}), {role}: {100 * f.mean:.0f}% [{100 * f.low:.0f}-{100 * f.high:.0f}] "
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


def _counts(mix: str) -> tuple[tuple[str, int], ...]:
    try:
        return Mix.parse(mix).counts
    except MixError:  # a stored mix of a family no longer registered
        return ((mix, 0),)


class MatrixView(Screen):
    """The transfer matrix of the results store, re-read every few seconds."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    @dataclass
    class Read(Message):
        """The store's matrix lines, read in a worker (or why they could not be)."""

        lines: list[MatrixRow] = field(default_factory=list)
        error: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[MatrixRow] = []
        self.base_hash: str | None = None  # hashed once, in the first read
        self.logged = ""  # the last store error written to app.log (not every few seconds)

    def compose(self) -> ComposeResult:
        yield Static("transfer matrix: reading the results store…", id="matrix-status")
        table = DataTable(id="matrix-table", cursor_type="cell", header_height=2, zebra_stripes=True)
        names = columns()
        for i, name in enumerate(names):
            first = i == 0 or group_of(names[i - 1]) != group_of(name)
            table.add_column(f"{group_of(name) if first else ''}\n{FAMILIES[name].short}", key=name, width=4)
        yield table
        yield Static("", id="matrix-detail")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.read_store()
        self.set_interval(REFRESH_SECONDS, self.read_store)

    def read_store(self) -> None:
        """Re-read the store in a thread worker (SQLite and the base's hash stay off the UI thread)."""
        self.run_worker(self._read, thread=True, group="matrix", exclusive=True)

    def _read(self) -> None:
        try:
            if self.base_hash is None:
                self.base_hash = weights_hash(BASE)
            with Store(read_only=True) as store:
                runs = store.runs(base_hash=self.base_hash)
            self.post_message(self.Read(rows_of(runs)))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read is one line, and the view stays
            if one_line(e) != self.logged:
                self.logged = one_line(e)
                log_error(e, "reading the results store for the matrix")
            self.post_message(self.Read([], one_line(e)))

    @on(Read)
    @guarded
    def show_lines(self, message: Read) -> None:
        status = self.query_one("#matrix-status", Static)
        if message.error:
            status.update(Text(f"results store not read: {shown(message.error)}", style="bold red"))
            return
        seeds = sorted({len(line.seeds) for line in message.lines}) or [0]
        over = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
        status.update(
            f"held-out % solved, mean over {over} seeds · *trained on · {len(message.lines)} mixes"
            if message.lines
            else "no stored runs from the shipped base yet: `breadth matrix` or `breadth sweep` fill this"
        )
        if message.lines == self.lines:
            return  # nothing new: keep the cursor and the table as they are
        self.lines = message.lines
        table = self.query_one(DataTable)
        where = table.cursor_coordinate
        table.clear()
        names = columns()
        for line in self.lines:
            table.add_row(*(cell_text(line, name) for name in names), key=line.mix, label=row_label(line))
        if self.lines:
            table.move_cursor(row=min(where.row, len(self.lines) - 1), column=where.column)
            self.show_cell(where.row, where.column)

    @on(DataTable.CellHighlighted)
    @guarded
    def highlighted(self, event: DataTable.CellHighlighted) -> None:
        self.show_cell(event.coordinate.row, event.coordinate.column)

    def show_cell(self, row: int, column: int) -> None:
        """The detail lines under the table for the cell at (row, column)."""
        names = columns()
        if 0 <= row < len(self.lines) and 0 <= column < len(names):
            self.query_one("#matrix-detail", Static).update(cell_detail(self.lines[row], names[column]))
