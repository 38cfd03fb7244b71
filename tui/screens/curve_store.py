"""The curves a results store holds, as the curve view reads them: the user's store, else the curve shipped with
breadth (`breadth.results/curve.sqlite`), which never changes, so each of its curves is read once per process
(`read_ahead` reads a talk's next curves before their acts open). Readings run in the view's worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from breadth.core.results.breadth_curve import StoredCurve
from breadth.core.results.curve_points import CurvePoint, points
from breadth.core.results.grid import GridError
from breadth.core.storage.paths import SHIPPED_CURVE
from breadth.core.storage.store import Store
from breadth.tui.guard import log_error


@dataclass(frozen=True)
class CurveRead:
    """One reading of the store: the curve shown and where the store stands."""

    curve: StoredCurve | None = None
    index: int = 0  # which of the store's curves (newest first)
    count: int = 0  # how many curves the store holds that this breadth reads
    found: list[CurvePoint] = field(default_factory=list)
    stored: int = 0  # runs of the plan in the store
    total: int = 0  # runs the plan asks for
    shipped: bool = False  # the user's store holds no curve: this is the one shipped with breadth
    skipped: int = 0  # stored curves this breadth cannot read (another version's environments, a damaged row)
    state: tuple = ()  # which store was read and how far it had filled (`Store.state`): unchanged, not read again


def read_curve(index: int, words: str = "", known: tuple = ()) -> CurveRead | None:
    """The store's curve number `index` (newest first, clamped) with its points, or with `words` the newest curve
    whose pool was chosen by those words (`index` if none was); the shipped curve if the user's store holds none.
    None if the store is as `known` (a reading's `state`): nothing to read again. StoreError or GridError (one
    line) if the store cannot be read."""
    with Store(read_only=True) as store:
        state = (False, *store.state())
        if state[3]:  # the user's store holds a curve
            if state == known:
                return None
            curves, skipped = _curves(store)
            return read_at(store, curves, skipped, _pick(curves, index, words), state)
    with Store(SHIPPED_CURVE, immutable=True) as store:
        state = (True, *store.state())
        return None if state == known else _shipped(store, index, state, words)


_SHIPPED: dict[tuple, object] = {}  # (path, state[, index]) -> the shipped store's curves, or a curve's reading
_LOCKS: dict[tuple, threading.Lock] = {}  # one per key: a second reader of a key waits and finds it read
_LOCKS_LOCK = threading.Lock()


def _shipped(store: Store, index: int, state: tuple, words: str) -> CurveRead:
    """The shipped store's reading of a curve, from this process's cache: a store no process writes is read once
    (11 MB, seconds on a loaded machine), however often a talk's acts ask for its curves."""
    key = (str(store.path), state)
    curves, skipped = _once(key, lambda: _curves(store))
    index = _pick(curves, index, words)
    return _once((*key, index), lambda: read_at(store, curves, skipped, index, state))


def _once(key: tuple, make: Callable[[], object]):
    """`make()` computed once per process under `key`; a thread asking for a key being computed waits for it, never
    for another key's (a talk's reading ahead never holds up the curve on screen)."""
    with _LOCKS_LOCK:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _SHIPPED:
            _SHIPPED[key] = make()
        return _SHIPPED[key]


def read_ahead(words: Iterable[str]) -> None:
    """Read the shipped curves over these pools' words into the process's cache, in order (a talk's next acts then
    open at once); nothing if the user's store holds a curve (it is read as it changes). Never raises: the view
    says why a store cannot be read when it reads it."""
    try:
        with Store(read_only=True) as store:
            if store.state()[2]:
                return
        for each in words:
            read_curve(0, each)
    except Exception as e:  # noqa: BLE001 -- reading ahead is a saving, never a failure on stage
        log_error(e, "reading the shipped breadth curves ahead of a talk's acts")


def _curves(store: Store) -> tuple[list[StoredCurve], int]:
    """The store's curves this breadth reads, newest first, and how many it cannot read."""
    rows = store.curves()
    curves, skipped = [], len(store.unreadable)
    for _, data, created in rows:
        try:
            curves.append(StoredCurve.from_dict(data, created))
        except GridError:
            skipped += 1
    return curves, skipped


def _pick(curves: list[StoredCurve], index: int, words: str) -> int:
    """The newest curve chosen by `words`, else curve `index` (clamped)."""
    index = next((i for i, c in enumerate(curves) if words and c.what == words), index)
    return min(max(index, 0), len(curves) - 1)


def read_at(store: Store, curves: list[StoredCurve], skipped: int, index: int, state: tuple) -> CurveRead:
    """Curve `index` of `curves` with its runs and points (what takes the time: the runs' records)."""
    shipped = state[0]
    if not curves:
        return CurveRead(shipped=shipped, skipped=skipped, state=state)
    curve = curves[index]
    jobs = curve.plan.jobs(curve.base_hash)
    mixes = sorted({job.cell.mix.spec() for job, _, _ in jobs})
    runs = {run.key: run for run in store.runs(base_hash=curve.base_hash, mixes=mixes)}
    stored = sum(job.key in runs for job, _, _ in jobs)
    found = points(curve.plan, runs, curve.base_hash)
    return CurveRead(curve, index, len(curves), found, stored, len(jobs), shipped, skipped, state)
