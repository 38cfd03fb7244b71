"""The models catalogue: the models the app knows, which one is current, and switching, saving and loading them.

It fills the runs table from checkpoints' metadata and the results store (no torch), keeps the engine holding the
current model, and forgets what died with an engine. Every row has a title no other row has: a model trained in
this session is `trained just now: <mix> #n`; where two rows would share one (a shipped model and a stored run of
its mix after a restart), the first keeps it and the others say what tells them apart (seed, when it was stored).
"""

from __future__ import annotations

import time

from breadth.core.engine import protocol as p
from breadth.core.storage.presets import DEFAULT_PRESET
from breadth.core.storage.store import StoreError
from breadth.tui import messages as m
from breadth.tui.catalog import ModelEntry, shipped_entries, stored_entries
from breadth.tui.engine import engine_log
from breadth.tui.file_access import refuse_paths
from breadth.tui.guard import guarded, log_error, one_line
from breadth.tui.parts import Part, hears
from breadth.tui.screens.checkpoint_prompts import LoadPrompt, SavePrompt, SaveTarget
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.widgets.score_panel import ScorePanel
from breadth.tui.widgets.sum_box import SumBox

DEFAULT_MODEL = f"shipped:{DEFAULT_PRESET}"  # current at start, and after another model killed the engine


def when(made: float, now: float | None = None) -> str:
    """When a run was stored, as short as tells it apart: `09:12` today, `1 Dec` before."""
    at, today = time.localtime(made), time.localtime(now)
    if at[:3] == today[:3]:
        return time.strftime("%H:%M", at)
    return f"{at.tm_mday} {time.strftime('%b', at)}"


def titles_apart(entries: list[ModelEntry], given: dict[str, str]) -> None:
    """Set each entry's title to its `given` one, made unlike every other: where several share one, the first keeps
    it and each other adds its seed (if their seeds differ) and when it was stored; a number if still alike."""
    titles = [given[e.key] for e in entries]
    for e, title in zip(entries, titles, strict=True):
        e.title = title
    for title in {t for t in titles if titles.count(t) > 1}:
        group = [e for e in entries if given[e.key] == title]
        seeds = {e.seed for e in group}
        for e in group[1:]:
            apart = [f"seed {e.seed}" if len(seeds) > 1 else "", when(e.made) if e.made else ""]
            e.title = " ".join(filter(None, (title, *apart)))
    alike: dict[str, list[ModelEntry]] = {}
    for e in entries:
        alike.setdefault(e.title, []).append(e)
    for group in alike.values():
        for n, e in enumerate(group[1:], start=2):
            e.title = f"{e.title} ({n})"


def engine_gone() -> str:
    """What to say once the engine will not be restarted."""
    return f"the engine keeps failing: restart breadth-tui (engine log: {engine_log()})"


class Catalogue(Part):
    """The runs table's models by key, the current one, and the Saves the engine is writing."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.entries: dict[str, ModelEntry] = {}
        self.save_id = 0  # the last Save sent to the engine
        self.saving: dict[int, str] = {}  # Save id -> key of the model the engine is writing
        self.given: dict[str, str] = {}  # key -> the title the catalogue gives it, before titles_apart

    def name_apart(self) -> None:
        """Give every row a title no other row has (see titles_apart); call after the rows change."""
        for key, entry in self.entries.items():
            if entry.origin == "loaded":  # a file's name: no words to give it
                self.given.setdefault(key, entry.title)
            else:  # in words, or in codes where a person asked for them (the app's `codes`)
                self.given[key] = entry.named(self.app.codes)
        titles_apart(list(self.entries.values()), self.given)

    def relabel(self) -> None:
        """Shift+F5: every model and environment in codes, or in words again (the app's `codes`): the runs table, the
        scores, the training form's counts, the race's lanes, the sum box's hint and an open view (matrix, procedure,
        rollouts, demonstrations, curve, environments)."""
        codes = self.app.codes
        self.app.score_panel.codes = codes
        self.app.train_panel.codes = codes
        self.app.playground.query_one(SumBox).show_codes(codes)
        for screen in self.app.screen_stack:
            if isinstance(screen, MatrixView):
                screen.codes = codes
            elif hasattr(screen, "show_codes"):  # a view that names environments and runs
                screen.show_codes(codes)
        self.name_apart()
        self.app.current = self.app.current  # redraw the runs table and the playing model's line
        self.app.play_router.show_race()

    def start(self) -> None:
        """The shipped models, the default one current (the store's runs come with `read_store`)."""
        self.entries = {entry.key: entry for entry in shipped_entries()}
        self.name_apart()
        self.switch_to(DEFAULT_MODEL if DEFAULT_MODEL in self.entries else next(iter(self.entries), None))

    def read_store(self) -> None:
        """Read the results store's runs in a worker; they join the table when read (StoreRead)."""
        self.app.run_worker(self._read_store, thread=True, group="store")

    def title(self, key: str | None) -> str:
        """The runs table's title of `key`, or `no model`."""
        return self.entries[key].title if key in self.entries else "no model"

    def _read_store(self) -> None:
        """In a worker: the results store's runs of the shipped base, for the runs table."""
        try:
            self.app.post_message(m.StoreRead(stored_entries()))
        except Exception as e:  # noqa: BLE001 -- a store that cannot be read must not stop the app
            log_error(e, "reading the results store")
            why = one_line(e) if isinstance(e, (StoreError, OSError)) else f"{type(e).__name__}: {one_line(e)}"
            self.app.post_message(m.StoreRead([], why))

    @hears(m.StoreRead)
    @guarded
    def add_stored_runs(self, message: m.StoreRead) -> None:
        """Stored runs (earlier sessions, sweeps) join the table after the shipped models, oldest first."""
        if message.error:
            self.app.notify(f"results store not read: {message.error}", severity="warning", timeout=8)
        shipped = {k: e for k, e in self.entries.items() if e.origin == "shipped"}
        known = {e.path for e in self.entries.values() if e.path}
        stored = {
            e.key: e for e in message.entries if e.key not in self.entries and (not e.path or e.path not in known)
        }
        rest = {k: e for k, e in self.entries.items() if k not in shipped}
        self.entries = {**shipped, **stored, **rest}
        self.name_apart()
        self.app.current = self.app.current  # redraw the table with the stored rows

    def switch_to(self, key: str | None, fresh: bool = False) -> None:
        """Make `key` the model that plays and whose scores and training curve show."""
        if key is not None and key not in self.entries:
            return
        self.app.current = key
        if key is not None:
            entry = self.entries[key]
            if entry.path:
                self.app.supervisor.load(key, entry.path, fresh)
            self.app.train_panel.show_reference(list(entry.run.losses), entry.title)

    def next_model(self) -> None:
        """Ctrl+N: the next model of the runs table."""
        keys = list(self.entries)
        if keys:
            current = self.app.current
            i = keys.index(current) + 1 if current in keys else 0
            self.switch_to(keys[i % len(keys)])

    @hears(ScorePanel.ModelChosen)
    @guarded
    def chosen(self, message: ScorePanel.ModelChosen) -> None:
        """Enter on a runs-table row: that model becomes current (the race hears it too)."""
        self.switch_to(message.key)

    @hears(p.Trained)
    @guarded
    def add_trained(self, ev: p.Trained) -> None:
        """A trained model joins the table, held by the engine, and becomes current."""
        self.entries[ev.key] = ModelEntry.trained(ev.key, ev.id, ev.path, ev.meta)
        self.name_apart()
        self.app.supervisor.loaded.add(ev.key)
        self.app.current = ev.key

    # saving and loading

    def save(self) -> None:
        """Save the current model under a new path: its file copied, or, if it has none, written by the engine."""
        key = self.app.current
        if key is None:
            self.app.notify("no model to save", severity="warning")
            return
        if refuse_paths(self.app, "save"):  # served (no --allow-files): no path on the serving machine
            return
        self.app.open_screen(SavePrompt, lambda: SavePrompt(self.entries[key]), lambda t: self.save_to(key, t))

    @guarded
    def save_to(self, key: str, target: SaveTarget | None) -> None:
        """The Save prompt closed: say where the copy went, or ask the engine to write the model it holds."""
        if target is None:
            return
        if target.copied:
            self.app.notify(f"saved {target.path}")
            return
        self.save_id += 1
        supervisor = self.app.supervisor
        if supervisor.gave_up or not supervisor.send(p.Save(self.save_id, key, target.path)):
            self.app.notify(f"not saved: {engine_gone()}", severity="error", timeout=10)
            return
        self.saving[self.save_id] = key
        self.app.notify(f"saving {self.title(key)} to {target.path}...", timeout=3)

    @hears(p.Saved)
    @guarded
    def note_saved(self, ev: p.Saved) -> None:
        """The engine wrote a model it kept in memory: the model now has a file (and outlives the engine)."""
        key = self.saving.pop(ev.id, None)
        if key in self.entries and not self.entries[key].path:
            self.entries[key].path = ev.path
        self.app.notify(f"saved {ev.path}")

    @hears(m.failed("save"))
    @guarded
    def say_not_saved(self, ev: p.Failed) -> None:
        key = self.saving.pop(ev.id, None)
        self.app.notify(f"not saved: {ev.message} ({self.title(key)} is still in memory)", severity="error")

    def load(self) -> None:
        """Load a checkpoint from a path and switch to it."""
        if refuse_paths(self.app, "load"):  # served (no --allow-files): no path on the serving machine
            return
        self.app.open_screen(LoadPrompt, LoadPrompt, self.add_loaded_model)

    @guarded
    def add_loaded_model(self, entry: ModelEntry | None) -> None:
        if entry is not None:
            self.given.pop(entry.key, None)  # the file may have been loaded before, under another name
            self.entries[entry.key] = entry
            self.name_apart()
            self.switch_to(entry.key, fresh=True)  # the file may have changed since it was last loaded

    # the engine died

    @hears(m.EngineDied)
    @guarded
    def forget_lost(self, message: m.EngineDied) -> None:
        """Forget the Saves in flight and the models only the dead engine held; a model it died loading is not
        fed to the next engine: the default model replaces it."""
        supervisor, current = self.app.supervisor, self.app.current
        if supervisor.closed:
            return
        loading = supervisor.ready and current not in (None, DEFAULT_MODEL, *supervisor.loaded)
        suspect = current if loading else None  # never the default: that is what would replace it
        self.saving.clear()
        self._forget_unsaved_models()
        if suspect in self.entries:
            fallback = DEFAULT_MODEL if DEFAULT_MODEL in self.entries else None
            self.app.notify(
                f"The engine stopped while loading {self.title(suspect)}: not reloaded; now {self.title(fallback)}.",
                severity="error",
                timeout=10,
            )
            self.switch_to(fallback)

    def _forget_unsaved_models(self) -> None:
        """Drop the models that lived only in the dead engine's memory, and say so."""
        lost = [key for key, entry in self.entries.items() if entry.origin == "trained" and not entry.path]
        if not lost:
            return
        self.app.notify("Lost with the engine (never saved): " + ", ".join(map(self.title, lost)), severity="error")
        for key in lost:
            del self.entries[key]
        self.name_apart()
        current = self.app.current if self.app.current in self.entries else DEFAULT_MODEL
        self.switch_to(current if current in self.entries else None)
