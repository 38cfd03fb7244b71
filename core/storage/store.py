"""The results store: every finished run in an SQLite database, keyed by what determines it.

A run's key is a hash of its mix, its settings (seed included), its held-out size, the weights of
the base it started from and the environments it was scored on, so a run already stored is never
repeated, and a run scored before an environment was registered is run again to score that environment too.
The database runs in WAL mode with one transaction per run: a crash or `kill -9` mid-write loses
no finished run and corrupts nothing. What makes a file a store, its schema and its migrations are
in `store_file`; read-only commands open the store read-only (`Store(path, read_only=True)`): a
missing store reads as empty and is not created, an older schema is migrated in memory, and no
byte of the file changes. Rows that cannot be read are skipped and named (`Store.unreadable`).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from breadth.core.storage.files import inside_the_package
from breadth.core.storage.paths import data_dir, installed_folder_of, location
from breadth.core.storage.store_file import (
    APPLICATION_ID,
    BUSY_SECONDS,
    COLUMNS,
    SCHEMA,
    StoreError,
    check_file,
    identify,
    migrate,
    open_read_only,
    refusal,
    run_key,
    sqlite_why,
)
from breadth.core.world.environments.mix import spellings
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.recipes import swept_by_any
from breadth.core.world.runs.records import RunMeta

__all__ = ["SCHEMA", "Store", "StoreError", "StoredRun", "default_store", "run_key", "store_files"]


def default_store() -> Path:
    """`BREADTH_STORE`, else `runs.sqlite` in the user's breadth folder."""
    return location("BREADTH_STORE", folder=False) or data_dir() / "runs.sqlite"


def store_files(path: str | os.PathLike | None) -> list[Path]:
    """The files a store at `path` (default: the user's) lives in: itself and SQLite's journals beside it."""
    path = Path(path) if path is not None else default_store()
    return [path, *(Path(f"{path}{side}") for side in ("-wal", "-shm", "-journal"))]


def check_written_store(path: Path) -> None:
    """StoreError if adding runs to a store at `path` would write into the installed package (a shipped store)."""
    if (installed := installed_folder_of(path)) is not None:
        raise StoreError(f"{path}: {inside_the_package(installed)}; copy the store out and name the copy")


@dataclass(frozen=True)
class StoredRun:
    """A run as the store keeps it: its record and what identifies and situates it."""

    key: str
    run: RunMeta  # mix, settings, seed, held-out size, scores, loss curve, seconds
    base_hash: str  # the weights the fine-tune started from (core.storage.header.weights_hash)
    source: str = ""  # who ran it: train, plate, sweep, app
    checkpoint: str | None = None  # where its model was saved, if it was
    versions: dict[str, str] = field(default_factory=dict)  # package and torch versions
    created: float = 0.0  # unix time it was stored


class Store:
    """An open results store (one connection; use it from one thread).

    `read_only`: for commands that only read (`runs`, `report`, the app's lists): nothing is created,
    migrated on disk or written; a missing store reads as empty.
    """

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False, immutable: bool = False):
        self.path = Path(path) if path is not None else default_store()
        self.read_only = read_only or immutable  # immutable: a store no process writes (the shipped results)
        self.unreadable: list[str] = []  # one line per stored row that could not be read, from runs()
        if not self.read_only:
            check_written_store(self.path)
        exists = check_file(self.path)
        try:
            version = identify(self.path) if exists else 0
            if self.read_only:
                self.db = open_read_only(self.path, exists, version, immutable)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
            version = self.db.execute("PRAGMA user_version").fetchone()[0]  # what the identity check saw, or newer
            if not 0 <= version <= SCHEMA:
                self.db.close()
                raise StoreError(refusal(self.path, version))
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a finished run survives even a power cut
            migrate(self.db, version)  # with foreign keys off: a migration that rebuilds a table keeps its scores
            self.db.execute("PRAGMA foreign_keys=ON")
            if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # stores made before it was marked
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: not a usable SQLite store ({sqlite_why(e)})") from None
        except OSError as e:
            raise StoreError(f"{self.path}: cannot open the store ({e.strerror or e})") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def has(self, key: str) -> bool:
        """True if a run of this key is stored."""
        return self.db.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None

    def keys(self) -> set[str]:
        """Every stored run's key."""
        return {row[0] for row in self.db.execute("SELECT key FROM runs")}

    def add(self, stored: StoredRun) -> bool:
        """Store a finished run in one transaction; False if its key was already there (nothing changes)."""
        run, s = stored.run, stored.run.settings
        if not run.on_mix or s is None or run.mix is None or run.seed is None:
            raise StoreError("only finished runs on a mix (mix, seed and settings known) are stored")
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only; nothing is stored")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self.db.execute(
                    f"INSERT OR IGNORE INTO runs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                    (
                        stored.key,
                        run.mix,
                        run.seed,
                        json.dumps(s.to_dict()),
                        run.held_out,
                        stored.base_hash,
                        stored.source,
                        stored.checkpoint,
                        stored.versions.get("breadth"),
                        stored.versions.get("torch"),
                        run.train_seconds,
                        run.eval_seconds,
                        stored.created or time.time(),
                        json.dumps(run.to_dict()),
                    ),
                )
                added = cursor.rowcount == 1
                if added:
                    self.db.executemany(
                        "INSERT INTO scores VALUES (?, ?, ?, ?, ?)",
                        [
                            (stored.key, name, sc.solved, sc.total, json.dumps(sc.failures))
                            for name, sc in run.scores.items()
                        ],
                    )
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # a failed COMMIT (disk full) has rolled back already
                    self.db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot store the run: {sqlite_why(e)}") from None
        return added

    def runs(
        self,
        base_hash: str | None = None,
        mixes: Iterable[str] = (),
        seeds: Iterable[int] = (),
        held_out: int | None | str = "any",
        keys: Iterable[str] = (),
        **settings: float,
    ) -> list[StoredRun]:
        """Stored runs, oldest first, filtered by base, mixes (each as stored under old environment names too:
        `add_2x2=70` finds `two_digit=70`), seeds, held-out size, keys and setting values."""
        mixes = [spelled for mix in mixes for spelled in spellings(mix)]
        where, args = [], []
        if base_hash is not None:
            where.append("base_hash = ?")
            args.append(base_hash)
        for column, values in (("mix", list(mixes)), ("seed", list(seeds)), ("key", list(keys))):
            if values:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                args += values
        if held_out != "any":
            where.append("held_out IS ?")
            args.append(held_out)
        filters = {s.name: s for s in swept_by_any()}
        for name, value in settings.items():
            if name not in filters:
                raise StoreError(f"no setting {name!r} to filter on")
            # a setting added later is missing from the runs stored before it, which ran at its default
            where.append("COALESCE(json_extract(settings, ?), ?) = ?")
            args += [f"$.{name}", filters[name].default, value]
        sql = "SELECT key, base_hash, source, checkpoint, package_version, torch_version, created, record FROM runs"
        sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created, key"
        try:
            rows = self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read runs: {sqlite_why(e)}") from None
        found, self.unreadable = [], []
        for row in rows:
            try:
                found.append(_stored(row))
            except StoreError as e:
                self.unreadable.append(str(e))
        return found

    def state(self) -> tuple[int, float, int, float]:
        """How far the store has filled: how many runs and curves it holds and when the newest of each was stored
        (a reader that polls re-reads only when this changes)."""
        try:
            runs = self.db.execute("SELECT COUNT(*), COALESCE(MAX(created), 0) FROM runs").fetchone()
            curves = self.db.execute("SELECT COUNT(*), COALESCE(MAX(created), 0) FROM curves").fetchone()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read the store's state: {sqlite_why(e)}") from None
        return (runs[0], runs[1], curves[0], curves[1])

    def add_curve(self, name: str, plan: dict) -> bool:
        """Record a breadth curve's plan under `name` (its runs are stored as they finish); False if a plan of that
        name was there already (nothing changes)."""
        return self._add_plan("curves", "curve", name, plan)

    def curves(self) -> list[tuple[str, dict, float]]:
        """Every stored curve's plan as (name, plan, created), newest first; a row breadth did not write as it reads
        it is skipped and named in `unreadable`."""
        return self._plans("curves", "curve")

    def add_map(self, name: str, plan: dict) -> bool:
        """Record a transfer map's cells under `name` (as `add_curve` does a curve's plan)."""
        return self._add_plan("maps", "map", name, plan)

    def maps(self) -> list[tuple[str, dict, float]]:
        """Every stored transfer map as (name, cells, created), newest first (as `curves`)."""
        return self._plans("maps", "map")

    def _add_plan(self, table: str, what: str, name: str, plan: dict) -> bool:
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only; nothing is stored")
        try:
            cursor = self.db.execute(
                f"INSERT OR IGNORE INTO {table} VALUES (?, ?, ?)", (name, json.dumps(plan, sort_keys=True), time.time())
            )
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot store the {what}: {sqlite_why(e)}") from None
        return cursor.rowcount == 1

    def _plans(self, table: str, what: str) -> list[tuple[str, dict, float]]:
        try:
            rows = self.db.execute(f"SELECT name, plan, created FROM {table} ORDER BY created DESC, name").fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read {what}s: {sqlite_why(e)}") from None
        found, self.unreadable = [], []
        for name, plan, created in rows:
            try:
                if not (isinstance(name, str) and isinstance(plan, str)) or len(plan) > RECORD_LIMIT:
                    raise ValueError("not text of a plan")
                data = json.loads(plan)
                if not isinstance(data, dict):
                    raise ValueError("not a mapping")
            except (ValueError, RecursionError) as e:
                self.unreadable.append(f"{what} {str(name)[:40]!r}: skipped ({str(e).splitlines()[0][:80]})")
                continue
            found.append((name, data, _when(created)))
        return found

    def add_study_runs(self, plan_hash: str, keys: Iterable[str]) -> int:
        """Record that the runs `keys` were stored for the study plan `plan_hash` (core.results.study), in one
        transaction; how many were not recorded for it before."""
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only; nothing is stored")
        rows = [(plan_hash, key, time.time()) for key in keys]
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                before = self.db.total_changes
                self.db.executemany("INSERT OR IGNORE INTO study_runs VALUES (?, ?, ?)", rows)
                added = self.db.total_changes - before
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # a failed COMMIT (disk full) has rolled back already
                    self.db.execute("ROLLBACK")
                raise
            return added
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot record the study's runs: {sqlite_why(e)}") from None

    def study_runs(self) -> dict[str, set[str]]:
        """Each run's key -> the study plans it was stored for (their hashes); runs of no study are not listed."""
        try:
            rows = self.db.execute("SELECT study, key FROM study_runs").fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read the studies' runs: {sqlite_why(e)}") from None
        out: dict[str, set[str]] = {}
        for plan_hash, key in rows:
            if isinstance(plan_hash, str) and isinstance(key, str):
                out.setdefault(key, set()).add(plan_hash)
        return out


RECORD_LIMIT = 1_000_000  # characters: a stored record longer than this is not one breadth wrote


def _stored(row: tuple) -> StoredRun:
    """A stored row as a run; StoreError (one line) for a row breadth did not write as it reads it."""
    key, base_hash, source, checkpoint, package, torch_version, created, record = row
    name = f"run {key[:20]!r}" if isinstance(key, str) and key else "a run without a key"
    if not (isinstance(key, str) and key):
        raise StoreError(f"{name}: skipped")
    if not all(isinstance(x, str) for x in (base_hash, source, record)) or not all(
        x is None or isinstance(x, str) for x in (checkpoint, package, torch_version)
    ):
        raise StoreError(f"{name}: a stored text column holds something else; skipped")
    if len(record) > RECORD_LIMIT:
        raise StoreError(f"{name}: a stored record of {len(record):,} characters; skipped")
    try:
        run = RunMeta.from_dict(json.loads(record))
    except (ValueError, TypeError, KeyError, RecursionError, MetadataError) as e:
        why = "nested too deeply" if isinstance(e, RecursionError) else (str(e).splitlines() or [""])[0][:120]
        raise StoreError(f"{name}: a record of an unexpected shape ({why or type(e).__name__}); skipped") from None
    if not run.on_mix or run.settings is None or run.mix is None:
        raise StoreError(f"{name}: not a finished run on a mix; skipped")
    versions = {k: v for k, v in (("breadth", package), ("torch", torch_version)) if v}
    return StoredRun(key, run, base_hash, source, checkpoint, versions, _when(created))


def _when(created: object) -> float:
    """A stored time as unix seconds; 0.0 (unknown) for anything that is not a plausible time."""
    if isinstance(created, bool) or not isinstance(created, int | float):
        return 0.0
    return float(created) if math.isfinite(created) and 0 <= created < 1e11 else 0.0
