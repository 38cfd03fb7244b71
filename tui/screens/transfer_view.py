"""The transfer map view (Shift+F10): designed hold-outs against what training varied along, as the store fills.

`breadth transfer` records its map (every cell's plan) in the results store before its first run and each run as it
finishes; this view re-reads the store every few seconds in a thread worker and shows the newest map: a row for each
way training varied (every other environment, or one step along named dimensions), a column for each design (the
environments held out by coordinates), and in each cell held-out success [95% over seeds] beside its ceiling (the
held-out environments trained directly, for the same steps). A cell whose training environments or ceiling stay
under half is dimmed and marked: at that budget it says nothing about transfer. `[` and `]` step through the store's
maps. From a fresh home (a talk) it shows the map shipped with breadth (`breadth.results/transfer.sqlite`) and says so.
What the store holds is shown as text, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from breadth.core.results.grid import GridError
from breadth.core.results.transfer_map import ALL, Cell, Reading, StoredMap
from breadth.core.storage.paths import SHIPPED_MAP
from breadth.core.storage.store import Store
from breadth.core.world.environments.labels import where_words
from breadth.core.world.text.shown import shown
from breadth.tui.guard import guarded, log_error, one_line

REFRESH_SECONDS = 3.0  # how often the store is re-read while the view is open
UNREAD = "†"  # marks a cell whose own training did not take: it says nothing about transfer
TERMS = f"held out [95% over seeds] / ceiling, % · {UNREAD} not learned: says nothing of transfer"


@dataclass(frozen=True)
class MapRead:
    """One reading of the store: the map shown, each cell's reading, and where the store stands."""

    stored: StoredMap | None = None
    readings: list[tuple[Cell, Reading | None]] = field(default_factory=list)
    index: int = 0  # which of the store's maps (newest first)
    count: int = 0  # how many maps the store holds that this breadth reads
    runs: int = 0  # runs of the map in the store
    total: int = 0  # runs the map asks for
    shipped: bool = False  # the user's store holds no map: this is the one shipped with breadth
    skipped: int = 0  # stored maps this breadth cannot read


def read_map(index: int) -> MapRead:
    """The store's map number `index` (newest first, clamped) with its cells' readings; the shipped map if the
    user's store holds none. StoreError (one line) if the store cannot be read."""
    with Store(read_only=True) as store:
        if store.maps():
            return _read(store, index, shipped=False)
    with Store(SHIPPED_MAP, immutable=True) as store:
        return _read(store, index, shipped=True)


def _read(store: Store, index: int, shipped: bool) -> MapRead:
    maps, skipped = [], 0
    for _, data, created in store.maps():
        try:
            maps.append(StoredMap.from_dict(data, created))
        except GridError:
            skipped += 1  # a map of another breadth's environments or a damaged row: counted, not shown
    if not maps:
        return MapRead(shipped=shipped, skipped=skipped)
    index = min(max(index, 0), len(maps) - 1)
    chosen = maps[index]
    keys = list(dict.fromkeys(j.key for c in chosen.cells if c.plan for j, _, _ in c.plan.jobs(chosen.base_hash)))
    runs = {r.key: r for r in store.runs(keys=keys)}
    return MapRead(chosen, chosen.readings(runs), index, len(maps), len(runs), len(keys), shipped, skipped)


def status_line(read: MapRead, codes: bool = False) -> str:
    """The line over the map: which map, its pool (in words, or as chosen with `codes`), how far it has filled."""
    if read.stored is None:
        unread = f" ({read.skipped} stored, unreadable here)" if read.skipped else ""
        return f"no transfer map yet: `breadth transfer` fills this{unread}"
    where = f"map {read.index + 1} of {read.count}: " if read.count > 1 else ""
    pool = read.stored.what if codes else where_words(read.stored.what)
    whose = " · shipped with breadth" if read.shipped else ""
    return f"{where}{shown(pool)} · {read.runs}/{read.total} runs{whose}"


def map_table(read: MapRead) -> Table:
    """Rows: what training varied along; columns: the designs; each cell held out [95%] / ceiling, or why not."""
    t = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    t.add_column("training varied along", no_wrap=True)
    designs = read.stored.designs if read.stored else ()
    for design in designs:
        t.add_column(Text(shown(" ".join(design))), justify="right", no_wrap=True)
    by = {(c.design, c.vary): (c, r) for c, r in read.readings}
    for vary in read.stored.varies if read.stored else ():
        row = [Text(shown(" and ".join(vary)) if vary else f"{ALL} the rest")]
        for design in designs:
            c, r = by[design, vary]
            row.append(_cell(c, r))
        t.add_row(*row)
    return t


def _cell(c: Cell, r: Reading | None) -> Text:
    if c.plan is None:
        return Text(shown(c.why), style="dim")
    if r is None:
        return Text("not yet run", style="dim")
    m, low, high = (100 * x for x in r.held)
    text = f"{m:.0f} [{low:.0f}-{high:.0f}] / {100 * r.ceiling[0]:.0f}"
    return Text(text, style="bold") if r.learned else Text(f"{text} {UNREAD}", style="dim")


class TransferView(Screen):
    """The newest transfer map of the results store, re-read every few seconds."""

    codes = False  # the pool named by its coordinates, not words: set by the app (as it opens the view, Shift+F5)

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("left_square_bracket", "step(1)", "Older map", key_display="["),
        Binding("right_square_bracket", "step(-1)", "Newer map", key_display="]"),
    ]

    @dataclass
    class Read(Message):
        """A reading of the store, or why it could not be read."""

        read: MapRead = field(default_factory=MapRead)
        error: str = ""
        asked: int = 0  # which reading this answers: one begun before a newer was asked for is stale

    def __init__(self) -> None:
        super().__init__()
        self.index = 0
        self.asked = 0
        self.last = MapRead()
        self.logged = ""

    def compose(self) -> ComposeResult:
        yield Static("transfer map: reading the results store…", id="map-status")
        yield Static("", id="map-table")
        yield Static(Text(TERMS, style="dim"), id="map-terms")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.read_store()
        self.set_interval(REFRESH_SECONDS, self.read_store)

    def read_store(self) -> None:
        """Re-read the store in a thread worker (SQLite stays off the UI thread)."""
        self.run_worker(partial(self._read, self.index, self.asked), thread=True, group="map", exclusive=True)

    def _read(self, index: int, asked: int) -> None:
        try:
            self.post_message(self.Read(read_map(index), asked=asked))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read is one line, and the view stays
            if one_line(e) != self.logged:
                self.logged = one_line(e)
                log_error(e, "reading the results store for the transfer map")
            self.post_message(self.Read(error=one_line(e), asked=asked))

    def show_codes(self, codes: bool) -> None:
        """Shift+F5: the pool in codes as chosen (`operands=3`), or in words again."""
        self.codes = codes
        self.query_one("#map-status", Static).update(Text(status_line(self.last, self.codes)))

    @on(Read)
    @guarded
    def show_read(self, message: Read) -> None:
        if message.asked != self.asked:
            return  # a reading begun before another map was asked for: the asked one follows
        status = self.query_one("#map-status", Static)
        if message.error:
            status.update(Text(f"results store not read: {shown(message.error)}", style="bold red"))
            return
        read = message.read
        self.index = read.index
        status.update(Text(status_line(read, self.codes)))
        if read == self.last:
            return  # nothing new: no redraw
        self.last = read
        self.query_one("#map-table", Static).update(map_table(read) if read.stored else "")
        self.query_one("#map-terms").display = read.stored is not None

    def action_step(self, by: int) -> None:
        """`[` an older map, `]` a newer one (the store's maps, newest first)."""
        if self.last.count < 2:
            self.notify("the store holds one transfer map at most", timeout=2)
            return
        self.index = min(max(self.index + by, 0), self.last.count - 1)
        self.asked += 1
        self.read_store()
