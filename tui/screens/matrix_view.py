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

from core.results.matrix import columns, group_of
from core.results.report import CellSummary, cell_of, summarise
from core.results.store import Store, StoredRun
from core.world.families import FAMILIES
from core.world.header import weights_hash
from core.world.mix import Mix, MixError, short_spec
from core.world.paths import BASE
from core.world.settings import FinetuneSettings

from ..guard import guarded, log_error, one_line

REFRESH_SECONDS = 3.0  # how often the store is re-read while the view is open
LABEL_WIDTH = 14  # the row label (the mix) is cut to this many characters; the detail line has it whole
DEFAULT = FinetuneSettings()


@dataclass(frozen=True)
class MatrixLine:
    """One row: a training mix, the cell shown for it, and that cell's runs by seed (for failure counts)."""

    mix: str
    trained: frozenset[str]
    cell: CellSummary
    runs: dict[int, StoredRun]  # seed -> stored run
    hidden: int = 0  # other cells of this mix (other settings or held-out sizes) not shown

    @property
    def label(self) -> str:
        text = short_spec(self.mix)
        return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"

    @property
    def settings_note(self) -> str:
        """`default settings, held-out 200` or `lr 0.001 drop 0.1, held-out all` (sums per family)."""
        note = next(iter(self.runs.values())).run.settings_note or "default settings"
        held = self.cell.key.held_out
        return f"{note}, held-out {'all' if held is None else held}"


def matrix_lines(runs: list[StoredRun]) -> list[MatrixLine]:
    """One line per mix, in the order mixes first appear: its default-settings cell with the most seeds."""
    by_key: dict = {}
    for stored in runs:
        by_key.setdefault(cell_of(stored), {})[stored.run.seed] = stored  # the last run of a seed wins, as in summarise
    by_mix: dict[str, list[CellSummary]] = {}
    for cell in summarise(runs):
        by_mix.setdefault(cell.key.mix, []).append(cell)
    out = []
    for mix, cells in by_mix.items():
        best = max(cells, key=lambda c: (c.key.settings == DEFAULT, len(c.seeds)))  # key settings have seed 0
        out.append(MatrixLine(mix, trained_on(mix), best, by_key[best.key], len(cells) - 1))
    return out


def trained_on(mix: str) -> frozenset[str]:
    """The families a mix spec trains on (none if the spec does not parse)."""
    try:
        return frozenset(name for name, _ in Mix.parse(mix).counts)
    except MixError:
        return frozenset()


def cell_text(line: MatrixLine, family: str) -> Text:
    """`100`, `*94` (bold: trained on), or a dim `-` when the family was not scored."""
    f = line.cell.families.get(family)
    if f is None or not f.total:
        return Text("-", style="dim", justify="right")
    mark = "*" if family in line.trained else ""
    return Text(f"{mark}{100 * f.mean:.0f}", style="bold" if mark else "", justify="right")


def cell_detail(line: MatrixLine, family: str) -> Text:
    """The lines under the table for one cell: mix, family, per-seed rates, settings, failure kinds over seeds.

    The failures come last: a long list wraps into the detail's last line instead of hiding the others.
    """
    fam = FAMILIES[family]
    counts = "+".join(f"{FAMILIES[n].short if n in FAMILIES else n} {k}" for n, k in _counts(line.mix))
    hidden = f" (+{line.hidden} other settings not shown)" if line.hidden else ""
    out = Text.assemble((counts, "bold"), (hidden, "dim"), "\n")
    role = "trained on" if family in line.trained else "held out"
    note = Text(f"{line.settings_note} · sweep runs keep no failed transcripts\n", style="dim")
    f = line.cell.families.get(family)
    if f is None or not f.total:
        return out.append(f"{fam.label} ({fam.short}), {role}: not scored in these runs\n").append_text(note)
    out.append(
        f"{fam.label} ({fam.short}), {role}: {100 * f.mean:.0f}% [{100 * f.low:.0f}-{100 * f.high:.0f}] "
        f"over {len(f.rates)} seeds ({f.solved}/{f.total})\n"
    )
    out.append("per seed: " + "  ".join(f"s{s} {100 * r:.0f}" for s, r in sorted(f.rates.items())) + "\n")
    out.append_text(note)
    failures: dict[str, int] = {}
    for stored in line.runs.values():
        score = stored.run.scores.get(family)
        for kind, n in (score.failures if score else {}).items():
            failures[kind] = failures.get(kind, 0) + n
    unsolved = f.total - f.solved
    if not unsolved:
        return out.append("failures: none")
    if not failures:
        return out.append(f"failures: {unsolved} unsolved, kinds not recorded")
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(failures.items(), key=lambda kv: -kv[1]))
    return out.append(f"failures (all seeds): {kinds}")


def _counts(mix: str) -> tuple[tuple[str, int], ...]:
    try:
        return Mix.parse(mix).counts
    except MixError:
        return ((mix, 0),)


class MatrixView(Screen):
    """The transfer matrix of the results store, re-read every few seconds."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    @dataclass
    class Read(Message):
        """The store's matrix lines, read in a worker (or why they could not be)."""

        lines: list[MatrixLine] = field(default_factory=list)
        error: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[MatrixLine] = []
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
            with Store() as store:
                runs = store.runs(base_hash=self.base_hash)
            self.post_message(self.Read(matrix_lines(runs)))
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
            status.update(Text(f"results store not read: {message.error}", style="bold red"))
            return
        seeds = sorted({len(line.cell.seeds) for line in message.lines}) or [0]
        over = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
        status.update(
            f"held-out % solved, mean over {over} seeds · *trained on · {len(message.lines)} mixes"
            if message.lines
            else "no stored runs from the shipped base yet: `breadth matrix` or `breadth sweep` fill this"
        )
        if [(x.cell, x.hidden) for x in message.lines] == [(x.cell, x.hidden) for x in self.lines]:
            return  # nothing new: keep the cursor and the table as they are
        self.lines = message.lines
        table = self.query_one(DataTable)
        where = table.cursor_coordinate
        table.clear()
        names = columns()
        for line in self.lines:
            table.add_row(*(cell_text(line, name) for name in names), key=line.mix, label=line.label)
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
