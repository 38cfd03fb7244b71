"""The results store: every finished run in an SQLite database, keyed by what determines it.

A run's key is a hash of its mix, its settings (seed included), its held-out size, the weights of
the base it started from and the families it was scored on, so a run already stored is never
repeated, and a run scored before a family was registered is run again to score that family too.
The database runs in WAL mode with one transaction per run: a crash or `kill -9` mid-write loses
no finished run and corrupts nothing. The schema has a version (`PRAGMA user_version`) and a
migration path. A file that is not a breadth store (not SQLite, another program's database, a schema
below zero or newer than this program's) is refused before anything is written to it: its identity is
read through an immutable connection that cannot change it. Read-only commands open the store read-only
(`Store(path, read_only=True)`): a missing store reads as empty and is not created, an older schema is
migrated in memory, and no byte of the file changes. Rows that cannot be read are skipped and named
(`Store.unreadable`), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..world.families import FAMILIES
from ..world.files import user_path
from ..world.paths import data_dir
from ..world.records import MetadataError, RunMeta
from ..world.settings import FinetuneSettings, SettingsError, swept

SCHEMA = 3  # the schema this program writes; older stores are migrated, newer ones refused
SQLITE_MAGIC = b"SQLite format 3\x00"
APPLICATION_ID = 0x62726474  # 'brdt' in the file's header (PRAGMA application_id): this file is a breadth store
TABLES = {"runs", "scores"}  # a store holds these tables and no others
BUSY_SECONDS = 30.0  # how long a writer waits for another (the app's engine and a sweep may share a store)


class StoreError(Exception):
    """The store cannot be opened or used; the message is one line naming the path."""


def default_store() -> Path:
    """`BREADTH_STORE`, else `runs.sqlite` in the user's breadth folder."""
    env = os.environ.get("BREADTH_STORE")
    return user_path(env) if env else data_dir() / "runs.sqlite"


def store_files(path: str | os.PathLike | None) -> list[Path]:
    """The files a store at `path` (default: the user's) lives in: itself and SQLite's journals beside it."""
    path = Path(path) if path is not None else default_store()
    return [path, *(Path(f"{path}{side}") for side in ("-wal", "-shm", "-journal"))]


def run_key(
    mix: str,
    settings: FinetuneSettings,
    held_out: int | None,
    base_hash: str,
    families: Iterable[str] | None = None,
) -> str:
    """The hash of what determines a run (the same inputs on one machine give the same run).

    `families`: the families it is scored on; by default every registered family.
    """
    scored = sorted(FAMILIES if families is None else families)
    what = {"mix": mix, "settings": settings.to_dict(), "held_out": held_out, "base": base_hash, "families": scored}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


@dataclass(frozen=True)
class StoredRun:
    """A run as the store keeps it: its record and what identifies and situates it."""

    key: str
    run: RunMeta  # mix, settings, seed, held-out size, scores, loss curve, seconds
    base_hash: str  # the weights the fine-tune started from (core.world.header.weights_hash)
    source: str = ""  # who ran it: train, plate, sweep, app
    checkpoint: str | None = None  # where its model was saved, if it was
    versions: dict[str, str] = field(default_factory=dict)  # package and torch versions
    created: float = 0.0  # unix time it was stored


_MIGRATIONS: dict = {  # schema version -> SQL (or a function of the connection) that brings the one below up to it
    1: """
        CREATE TABLE runs (
            key TEXT PRIMARY KEY,
            mix TEXT NOT NULL,
            seed INTEGER NOT NULL,
            steps INTEGER NOT NULL,
            lr REAL NOT NULL,
            batch_size INTEGER NOT NULL,
            dropout REAL NOT NULL,
            weight_decay REAL NOT NULL,
            held_out INTEGER,
            base_hash TEXT NOT NULL,
            source TEXT NOT NULL,
            checkpoint TEXT,
            package_version TEXT,
            torch_version TEXT,
            train_seconds REAL NOT NULL,
            eval_seconds REAL NOT NULL,
            created REAL NOT NULL,
            record TEXT NOT NULL
        );
        CREATE TABLE scores (
            key TEXT NOT NULL REFERENCES runs(key) ON DELETE CASCADE,
            family TEXT NOT NULL,
            solved INTEGER NOT NULL,
            total INTEGER NOT NULL,
            failures TEXT NOT NULL,
            PRIMARY KEY (key, family)
        );
        CREATE INDEX runs_by_cell ON runs (base_hash, mix, held_out);
    """,
}


def _key_the_families_scored(db: sqlite3.Connection) -> None:
    """Schema 2: a run's key also names the families it was scored on (each run: the families in its scores).

    A row whose record cannot be read keeps its old key (readers skip it and say so); it never stops the rest."""
    db.execute("PRAGMA defer_foreign_keys = ON")  # runs and scores change key together, checked at commit
    rows = db.execute("SELECT key, mix, held_out, base_hash, record FROM runs").fetchall()
    for key, mix, held_out, base_hash, record in rows:
        try:
            settings = FinetuneSettings.from_dict(json.loads(record)["settings"])
            families = [row[0] for row in db.execute("SELECT family FROM scores WHERE key = ?", (key,))]
            new = run_key(mix, settings, held_out, base_hash, families)
        except (ValueError, TypeError, KeyError, RecursionError, SettingsError):
            continue
        if new != key and db.execute("SELECT 1 FROM runs WHERE key = ?", (new,)).fetchone() is None:
            db.execute("UPDATE runs SET key = ? WHERE key = ?", (new, key))
            db.execute("UPDATE scores SET key = ? WHERE key = ?", (new, key))


_MIGRATIONS[2] = _key_the_families_scored


COLUMNS = (  # the runs table's columns from schema 3 on
    "key",
    "mix",
    "seed",
    "settings",
    "held_out",
    "base_hash",
    "source",
    "checkpoint",
    "package_version",
    "torch_version",
    "train_seconds",
    "eval_seconds",
    "created",
    "record",
)


def _settings_as_json(db: sqlite3.Connection) -> None:
    """Schema 3: a run's settings are one JSON column (the fields of its settings), not a column each, so a new
    setting needs no change here. The table is rebuilt (foreign keys are off while migrating: scores stay)."""
    db.execute(
        """CREATE TABLE runs_v3 (
            key TEXT PRIMARY KEY,
            mix TEXT NOT NULL,
            seed INTEGER NOT NULL,
            settings TEXT NOT NULL,
            held_out INTEGER,
            base_hash TEXT NOT NULL,
            source TEXT NOT NULL,
            checkpoint TEXT,
            package_version TEXT,
            torch_version TEXT,
            train_seconds REAL NOT NULL,
            eval_seconds REAL NOT NULL,
            created REAL NOT NULL,
            record TEXT NOT NULL
        )"""
    )
    settings = "json_object('steps', steps, 'lr', lr, 'batch_size', batch_size, 'dropout', dropout, "
    settings += "'weight_decay', weight_decay, 'seed', seed)"  # schema 2's columns, in FinetuneSettings' order
    others = ", ".join(c for c in COLUMNS if c not in ("key", "mix", "seed", "settings"))
    db.execute(f"INSERT INTO runs_v3 SELECT key, mix, seed, {settings}, {others} FROM runs")
    db.execute("DROP TABLE runs")
    db.execute("ALTER TABLE runs_v3 RENAME TO runs")
    db.execute("CREATE INDEX runs_by_cell ON runs (base_hash, mix, held_out)")


_MIGRATIONS[3] = _settings_as_json


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring `db` from schema `version` up to SCHEMA, one transaction per step."""
    for target in range(version + 1, SCHEMA + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] < target:  # another process may have won
                step = _MIGRATIONS[target]
                if callable(step):
                    step(db)
                else:
                    for statement in filter(str.strip, step.split(";")):
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {target}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise


class Store:
    """An open results store (one connection; use it from one thread).

    `read_only`: for commands that only read (`runs`, `report`, the app's lists): nothing is created,
    migrated on disk or written; a missing store reads as empty.
    """

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False):
        self.path = Path(path) if path is not None else default_store()
        self.read_only = read_only
        self.unreadable: list[str] = []  # one line per stored row that could not be read, from runs()
        exists = _check_file(self.path)
        try:
            version = _identify(self.path) if exists else 0
            if read_only:
                self.db = _open_read_only(self.path, exists, version)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
            version = self.db.execute("PRAGMA user_version").fetchone()[0]  # what the identity check saw, or newer
            if not 0 <= version <= SCHEMA:
                self.db.close()
                raise StoreError(_refusal(self.path, version))
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a finished run survives even a power cut
            _migrate(self.db, version)  # with foreign keys off: a migration that rebuilds a table keeps its scores
            self.db.execute("PRAGMA foreign_keys=ON")
            if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # stores made before it was marked
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: not a usable SQLite store ({_sqlite_why(e)})") from None
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
        if not isinstance(s, FinetuneSettings) or run.mix is None or run.seed is None:
            raise StoreError("only finished fine-tunes (mix, seed and settings known) are stored")
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
            raise StoreError(f"{self.path}: cannot store the run: {_sqlite_why(e)}") from None
        return added

    def runs(
        self,
        base_hash: str | None = None,
        mixes: Iterable[str] = (),
        seeds: Iterable[int] = (),
        held_out: int | None | str = "any",
        **settings: float,
    ) -> list[StoredRun]:
        """Stored runs, oldest first, filtered by base, mixes, seeds, held-out size and setting values."""
        where, args = [], []
        if base_hash is not None:
            where.append("base_hash = ?")
            args.append(base_hash)
        for column, values in (("mix", list(mixes)), ("seed", list(seeds))):
            if values:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                args += values
        if held_out != "any":
            where.append("held_out IS ?")
            args.append(held_out)
        filters = {s.name for s in swept(FinetuneSettings)}
        for name, value in settings.items():
            if name not in filters:
                raise StoreError(f"no setting {name!r} to filter on")
            where.append("json_extract(settings, ?) = ?")
            args += [f"$.{name}", value]
        sql = "SELECT key, base_hash, source, checkpoint, package_version, torch_version, created, record FROM runs"
        sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created, key"
        try:
            rows = self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read runs: {_sqlite_why(e)}") from None
        found, self.unreadable = [], []
        for row in rows:
            try:
                found.append(_stored(row))
            except StoreError as e:
                self.unreadable.append(str(e))
        return found


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
    if run.kind != "finetune" or not isinstance(run.settings, FinetuneSettings) or run.mix is None:
        raise StoreError(f"{name}: not a finished fine-tune; skipped")
    versions = {k: v for k, v in (("breadth", package), ("torch", torch_version)) if v}
    return StoredRun(key, run, base_hash, source, checkpoint, versions, _when(created))


def _when(created: object) -> float:
    """A stored time as unix seconds; 0.0 (unknown) for anything that is not a plausible time."""
    if isinstance(created, bool) or not isinstance(created, int | float):
        return 0.0
    return float(created) if math.isfinite(created) and 0 <= created < 1e11 else 0.0


def _check_file(path: Path) -> bool:
    """Refuse a path that exists but is not a regular SQLite file (it is never opened); True if it has content."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as e:
        raise StoreError(f"{path}: cannot open the store ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{path}: not a regular file, so not a store")
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise StoreError(f"{path}: cannot read the store ({e.strerror})") from None
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path}: not an SQLite file; it was left untouched")
    return bool(head)


def _uri(path: Path, **params: str) -> str:
    """An SQLite URI for `path` (any characters in its name) with query parameters."""
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{urllib.parse.quote(str(path.resolve()))}?{query}"


def _identify(path: Path) -> int:
    """The schema of the breadth store at `path`; StoreError, with the file untouched, if it is not one.

    Read through an immutable connection (no lock, no journal, nothing written), unless a write-ahead log
    beside it may hold what the file does not yet (then read-only, which reads the log).
    """
    wal = Path(f"{path}-wal")
    params = {"mode": "ro"} if wal.exists() and wal.stat().st_size > 0 else {"mode": "ro", "immutable": "1"}
    try:
        db = sqlite3.connect(_uri(path, **params), uri=True, timeout=BUSY_SECONDS)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            application = db.execute("PRAGMA application_id").fetchone()[0]
            tables = {
                name
                for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not str(name).startswith("sqlite_")
            }
        finally:
            db.close()
    except sqlite3.Error as e:
        raise StoreError(f"{path}: not a usable SQLite store ({_sqlite_why(e)}); it was left untouched") from None
    if application not in (0, APPLICATION_ID):
        raise StoreError(f"{path}: another program's SQLite database (application id {application}), not a store")
    if version == 0 and not tables:
        return 0  # an empty database: a store begins here
    if version > SCHEMA and (application == APPLICATION_ID or TABLES <= tables):
        raise StoreError(_refusal(path, version))
    if not 1 <= version <= SCHEMA or tables != TABLES:
        listed = ", ".join(sorted(map(str, tables))[:5]) or "none"
        raise StoreError(
            f"{path}: an SQLite database that is not a breadth results store (schema {version}, tables: {listed}); "
            "it was left untouched"
        )
    return version


def _refusal(path: Path, version: int) -> str:
    if version > SCHEMA:
        return (
            f"{path}: a store of schema {version}, made by a newer breadth (this one reads up to {SCHEMA}); "
            "it was left untouched"
        )
    return f"{path}: schema {version}, which no breadth writes: not a store; it was left untouched"


def _open_read_only(path: Path, exists: bool, version: int) -> sqlite3.Connection:
    """A connection that cannot change the store: the file read-only, or in memory (missing, or an older schema)."""
    if exists and version == SCHEMA:
        db = sqlite3.connect(_uri(path, mode="ro"), uri=True, timeout=BUSY_SECONDS, isolation_level=None)
        db.execute("PRAGMA query_only = ON")
        return db
    memory = sqlite3.connect(":memory:", isolation_level=None)
    if exists:
        source = sqlite3.connect(_uri(path, mode="ro"), uri=True, timeout=BUSY_SECONDS)
        try:
            source.backup(memory)
        finally:
            source.close()
    _migrate(memory, version)  # an older store is read as this program reads it, and stays as it is on disk
    return memory


def _sqlite_why(e: sqlite3.Error) -> str:
    """What went wrong, in words: SQLite's own message, named more plainly for the common causes."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    code = getattr(e, "sqlite_errorname", "")
    if code.startswith("SQLITE_FULL"):
        return "the disk is full (SQLite: database or disk is full)"
    if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
        return f"another process holds the store's write lock; waited {BUSY_SECONDS:g} s ({text})"
    if code.startswith("SQLITE_READONLY"):
        return f"the store cannot be written here ({text})"
    return text
