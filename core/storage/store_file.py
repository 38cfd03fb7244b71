"""The results store's file: what makes an SQLite file a breadth store, its schema, migrations and openers.

A store has a version (`PRAGMA user_version`), an application id in its header, and the tables `runs`
and `scores` (from schema 4 also `curves`: the plans of the breadth curves run into it; from schema 5
`study_runs`: which study plan each run was stored for, and `maps`: the transfer maps run into it), and nothing
else.
A file that is not a breadth store (not SQLite, another program's database, a schema below zero or newer
than this program's) is refused before anything is written to
it: its identity is read through an immutable connection that cannot change it. Older schemas are
migrated one step at a time, in a transaction each (in memory when the store is opened read-only).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterable
from pathlib import Path

from breadth.core.world.arithmetic.problem import first_name
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import first_spec
from breadth.core.world.runs.recipes import FINETUNE, recipe_of
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError

SCHEMA = 5  # the schema this program writes; older stores are migrated, newer ones refused
SQLITE_MAGIC = b"SQLite format 3\x00"
APPLICATION_ID = 0x62726474  # 'brdt' in the file's header (PRAGMA application_id): this file is a breadth store
TABLES = {"runs", "scores"}  # a store holds these tables (schemas 1-3) and no others
CURVES_FROM = 4  # the schema that added the `curves` table
STUDIES_FROM = 5  # the schema that added the `study_runs` and `maps` tables
BUSY_SECONDS = 30.0  # how long a writer waits for another (the app's engine and a sweep may share a store)


class StoreError(Exception):
    """The store cannot be opened or used; the message is one line naming the path."""


def run_key(
    mix: str,
    settings: object,
    held_out: int | None,
    base_hash: str,
    envs: Iterable[str] | None = None,
    lockstep: Iterable[str] = (),
) -> str:
    """The hash of what determines a run (the same inputs on one machine give the same run).

    `settings`: an instance of its recipe's settings class (the recipe is named in the key unless it is the
    plate's, so every fine-tune keeps the key it had before recipes existed). `envs`: the environments it is
    scored on; by default every registered environment. `lockstep`: for a run trained in lockstep, its group's runs by
    the keys they have trained alone, in order (its numbers depend on its group); none for a run trained alone,
    whose key is the one it always had. Environments are named in it as they were when keys were first made
    (`first_name`: `two_digit`, not `add_2x2`), so a run keeps its key under either name.
    """
    scored = sorted(first_name(name) for name in (REGISTERED if envs is None else envs))
    what = {
        "mix": first_spec(mix),
        "settings": settings.to_dict(),
        "held_out": held_out,
        "base": base_hash,
        "families": scored,  # hashed into every stored key: renaming it would move every run
    }
    made_by = recipe_of(settings).name
    if made_by != FINETUNE:
        what["recipe"] = made_by
    if group := list(lockstep):
        what["lockstep"] = group
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


# scores.family is a run's environment: the column every store was made with (this text is the schema stored in
# each file, so it keeps its spelling and bytes)
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


def _key_the_environments_scored(db: sqlite3.Connection) -> None:
    """Schema 2: a run's key also names the environments it was scored on (each run: the environments in its scores).

    A row whose record cannot be read keeps its old key (readers skip it and say so); it never stops the rest."""
    db.execute("PRAGMA defer_foreign_keys = ON")  # runs and scores change key together, checked at commit
    rows = db.execute("SELECT key, mix, held_out, base_hash, record FROM runs").fetchall()
    for key, mix, held_out, base_hash, record in rows:
        try:
            settings = FinetuneSettings.from_dict(json.loads(record)["settings"])
            query = "SELECT family FROM scores WHERE key = ?"  # the environment, under the store's column name
            envs = [row[0] for row in db.execute(query, (key,))]
            new = run_key(mix, settings, held_out, base_hash, envs)
        except (ValueError, TypeError, KeyError, RecursionError, SettingsError):
            continue
        if new != key and db.execute("SELECT 1 FROM runs WHERE key = ?", (new,)).fetchone() is None:
            db.execute("UPDATE runs SET key = ? WHERE key = ?", (new, key))
            db.execute("UPDATE scores SET key = ? WHERE key = ?", (new, key))


_MIGRATIONS[2] = _key_the_environments_scored


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
_MIGRATIONS[CURVES_FROM] = """
    CREATE TABLE curves (
        name TEXT PRIMARY KEY,
        plan TEXT NOT NULL,
        created REAL NOT NULL
    )
"""  # schema 4: a breadth curve's plan (its pool, splits, N, seeds, settings), so views can draw it from the store
_MIGRATIONS[STUDIES_FROM] = """
    CREATE TABLE study_runs (
        study TEXT NOT NULL,
        key TEXT NOT NULL,
        created REAL NOT NULL,
        PRIMARY KEY (study, key)
    );
    CREATE TABLE maps (
        name TEXT PRIMARY KEY,
        plan TEXT NOT NULL,
        created REAL NOT NULL
    )
"""  # schema 5: the hash of each study plan (core.results.study) a run was stored for (a run may serve several), and
# each transfer map's cells (core.results.transfer_map.StoredMap), so the app's map view draws it from the store


def tables_of(version: int) -> set[str]:
    """The tables a store of schema `version` holds, and no others."""
    added = {"curves": CURVES_FROM, "study_runs": STUDIES_FROM, "maps": STUDIES_FROM}
    return TABLES | {table for table, since in added.items() if version >= since}


def migrate(db: sqlite3.Connection, version: int) -> None:
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


def check_file(path: Path) -> bool:
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


def identify(path: Path) -> int:
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
        raise StoreError(f"{path}: not a usable SQLite store ({sqlite_why(e)}); it was left untouched") from None
    if application not in (0, APPLICATION_ID):
        raise StoreError(f"{path}: another program's SQLite database (application id {application}), not a store")
    if version == 0 and not tables:
        return 0  # an empty database: a store begins here
    if version > SCHEMA and (application == APPLICATION_ID or TABLES <= tables):
        raise StoreError(refusal(path, version))
    if not 1 <= version <= SCHEMA or tables != tables_of(version):
        listed = ", ".join(sorted(map(str, tables))[:5]) or "none"
        raise StoreError(
            f"{path}: an SQLite database that is not a breadth results store (schema {version}, tables: {listed}); "
            "it was left untouched"
        )
    return version


def refusal(path: Path, version: int) -> str:
    if version > SCHEMA:
        return (
            f"{path}: a store of schema {version}, made by a newer breadth (this one reads up to {SCHEMA}); "
            "it was left untouched"
        )
    return f"{path}: schema {version}, which no breadth writes: not a store; it was left untouched"


def open_read_only(path: Path, exists: bool, version: int, immutable: bool = False) -> sqlite3.Connection:
    """A connection that cannot change the store: the file read-only, or in memory (missing, or an older schema).

    `immutable`: a store no process writes (one shipped inside the package): SQLite reads it without locks and
    leaves no -wal or -shm beside it, so it works in a folder it may not write to. A store with no -wal beside
    it is read the same way: SQLite deletes the -wal when the last writer closes, so none is connected, and a
    read-only command leaves the folder as it found it. With a -wal (a writer may be live) it is opened `mode=ro`,
    which reads the log."""
    unwritten = immutable or not Path(f"{path}-wal").exists()
    params = {"mode": "ro", "immutable": "1"} if unwritten else {"mode": "ro"}
    if exists and version == SCHEMA:
        db = sqlite3.connect(_uri(path, **params), uri=True, timeout=BUSY_SECONDS, isolation_level=None)
        db.execute("PRAGMA query_only = ON")
        return db
    memory = sqlite3.connect(":memory:", isolation_level=None)
    if exists:
        source = sqlite3.connect(_uri(path, **params), uri=True, timeout=BUSY_SECONDS)
        try:
            source.backup(memory)
        finally:
            source.close()
    migrate(memory, version)  # an older store is read as this program reads it, and stays as it is on disk
    return memory


def sqlite_why(e: sqlite3.Error) -> str:
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
