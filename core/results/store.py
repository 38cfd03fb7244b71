"""The results store: every finished run in an SQLite database, keyed by what determines it.

A run's key is a hash of its mix, its settings (seed included), its held-out size, the weights of
the base it started from and the families it was scored on, so a run already stored is never
repeated, and a run scored before a family was registered is run again to score that family too.
The database runs in WAL mode with one transaction per run: a crash or `kill -9` mid-write loses
no finished run and corrupts nothing. The schema has a version (`PRAGMA user_version`) and a
migration path; a store of a newer schema, or a file that is not SQLite, is refused and never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..world.families import FAMILIES
from ..world.files import user_path
from ..world.paths import data_dir
from ..world.records import MetadataError, RunMeta
from ..world.settings import FinetuneSettings

SCHEMA = 2  # the schema this program writes; older stores are migrated, newer ones refused
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_SECONDS = 30.0  # how long a writer waits for another (the app's engine and a sweep may share a store)


class StoreError(Exception):
    """The store cannot be opened or used; the message is one line naming the path."""


def default_store() -> Path:
    """`BREADTH_STORE`, else `runs.sqlite` in the user's breadth folder."""
    env = os.environ.get("BREADTH_STORE")
    return user_path(env) if env else data_dir() / "runs.sqlite"


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
    """Schema 2: a run's key also names the families it was scored on (each run: the families in its scores)."""
    db.execute("PRAGMA defer_foreign_keys = ON")  # runs and scores change key together, checked at commit
    rows = db.execute("SELECT key, mix, held_out, base_hash, record FROM runs").fetchall()
    for key, mix, held_out, base_hash, record in rows:
        settings = FinetuneSettings.from_dict(json.loads(record)["settings"])
        families = [row[0] for row in db.execute("SELECT family FROM scores WHERE key = ?", (key,))]
        new = run_key(mix, settings, held_out, base_hash, families)
        db.execute("UPDATE runs SET key = ? WHERE key = ?", (new, key))
        db.execute("UPDATE scores SET key = ? WHERE key = ?", (new, key))


_MIGRATIONS[2] = _key_the_families_scored


class Store:
    """An open results store (one connection; use it from one thread)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_store()
        _check_file(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA:
                self.db.close()
                raise StoreError(
                    f"{self.path}: a store of schema {version}, made by a newer breadth (this one reads "
                    f"up to {SCHEMA}); it was left untouched"
                )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a finished run survives even a power cut
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate(version)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a usable SQLite store ({e})") from None
        except OSError as e:
            raise StoreError(f"{self.path}: cannot open the store ({e.strerror or e})") from None

    def _migrate(self, version: int) -> None:
        for target in range(version + 1, SCHEMA + 1):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if self.db.execute("PRAGMA user_version").fetchone()[0] < target:  # another process may have won
                    step = _MIGRATIONS[target]
                    if callable(step):
                        step(self.db)
                    else:
                        for statement in filter(str.strip, step.split(";")):
                            self.db.execute(statement)
                    self.db.execute(f"PRAGMA user_version = {target}")
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

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
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self.db.execute(
                    "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        stored.key,
                        run.mix,
                        run.seed,
                        s.steps,
                        s.lr,
                        s.batch_size,
                        s.dropout,
                        s.weight_decay,
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
                self.db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot store the run ({e})") from None
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
        for name, value in settings.items():
            if name not in {"steps", "lr", "batch_size", "dropout", "weight_decay"}:
                raise StoreError(f"no setting {name!r} to filter on")
            where.append(f"{name} = ?")
            args.append(value)
        sql = "SELECT key, base_hash, source, checkpoint, package_version, torch_version, created, record FROM runs"
        sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created, key"
        try:
            rows = self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot read runs ({e})") from None
        return [_stored(row) for row in rows]


def _stored(row: tuple) -> StoredRun:
    key, base_hash, source, checkpoint, package, torch_version, created, record = row
    try:
        run = RunMeta.from_dict(json.loads(record))
    except (ValueError, MetadataError) as e:
        raise StoreError(f"run {key}: a stored record of an unexpected shape ({e})") from None
    versions = {k: v for k, v in (("breadth", package), ("torch", torch_version)) if v}
    return StoredRun(key, run, base_hash, source, checkpoint, versions, created)


def _check_file(path: Path) -> None:
    """Refuse a path that exists but is not a regular SQLite file (it is never opened for writing)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreError(f"{path}: cannot open the store ({e.strerror})") from None
    if not stat.S_ISREG(mode):
        raise StoreError(f"{path}: not a regular file, so not a store")
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise StoreError(f"{path}: cannot read the store ({e.strerror})") from None
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path}: not an SQLite file; it was left untouched")
