"""Running a grid of fine-tunes: on a local process pool, or on a Dask cluster; every result into the store.

Runs already in the store are skipped, so a sweep stopped by Ctrl-C or `kill -9` finishes when the
same command runs again, with no run lost and none repeated. Workers (one torch thread each) get
plain data and give plain data back (`core.learning.experiment.run_job`); this process is the only
writer of the store, one transaction per finished run, and a run it cannot store stops the sweep
(the StoreError is raised, the workers stopped). Each result is let go once stored, so a worker lost
late reruns only what it was running.

Nothing a machine does can hang a sweep or outlive it. Local workers die with the sweep however it
dies (`kill -9` included). Every question to a Dask cluster has a wall-clock bound, whatever Dask
does; its workers are checked before any run is sent (breadth at this version, and torch, with
stdlib functions only, since breadth's own could not be unpickled where it is missing); a scheduler
that goes away, or workers that all leave, end the sweep in one line (ClusterError), the runs
stored so far kept.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results.grid import Job
from ..results.store import Store, StoredRun
from ..world.paths import BASE
from ..world.records import MetadataError, RunMeta

CONNECT_SECONDS = 5.0  # reaching a Dask scheduler, its handshake included (wall clock, whatever Dask does)
ANSWER_SECONDS = 10.0  # any other question to a Dask cluster: checking its workers, listing them, closing
WORKERLESS_SECONDS = 30.0  # how long a sweep waits with no Dask worker (at the start, or having lost them all)
WATCH_SECONDS = 1.0  # with no result for this long, the sweep looks at its cluster's scheduler and workers
PARENT_SECONDS = 0.5  # how often a local worker looks whether the sweep that started it is still there
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): the signal this process gets when its parent dies
WORKER_INSTALL = "install it there from a clone at this version: pip install -c constraints.txt '.[cluster]'"


class ClusterError(Exception):
    """The Dask cluster cannot be used (not installed, unreachable, unfit workers, gone); one line."""


@dataclass
class SweepOutcome:
    """What a sweep did: the runs of its grid now in the store, those it ran, and those that failed."""

    stored: dict[str, StoredRun] = field(default_factory=dict)  # key -> run (skipped or new)
    ran: int = 0
    failed: list[tuple[Job, str]] = field(default_factory=list)  # (job, one line)
    seconds: float = 0.0


OnRun = Callable[[Job, StoredRun | None, int, int], None]  # (job, its run or None, done, total)


def run_jobs(
    jobs: list[Job],
    store: Store,
    base: Path,
    base_hash: str,
    source: str,
    workers: int = 2,
    cluster: str | None = None,
    on_run: OnRun | None = None,
) -> SweepOutcome:
    """Run every job not yet stored; store each result as it arrives, then let it go.

    Ctrl-C stops the workers at once, and so does a run the store cannot keep (its StoreError is raised:
    every later run would fail the same way) or a cluster that cannot go on (ClusterError).
    """
    outcome = SweepOutcome()
    existing = {run.key: run for run in store.runs()}
    todo = []
    for job in jobs:
        if job.key in existing:
            outcome.stored[job.key] = existing[job.key]
        else:
            todo.append(job)
    done = len(jobs) - len(todo)
    if on_run is not None:
        on_run(None, None, done, len(jobs))
    if not todo:
        return outcome
    start = time.perf_counter()
    runner = _LocalPool(workers) if cluster is None else _DaskCluster(cluster)
    try:
        where = _base_for_workers(base, remote=cluster is not None)  # read once, not once per job
        run_job = _run_job()
        pending = {runner.submit(run_job, _spec(job, base_hash, where)): job for job in todo}
        for future in _finished(pending, runner.watch):
            job = pending.pop(future)
            run = None
            try:
                result = runner.result(future)
                run = StoredRun(
                    job.key, RunMeta.from_dict(result["record"]), base_hash, source, versions=result.get("versions", {})
                )
            except ClusterError:
                raise
            except (MetadataError, KeyError, TypeError) as e:
                outcome.failed.append((job, f"a worker sent back an unexpected result ({e})"))
            except Exception as e:  # noqa: BLE001 -- a failed run is reported, the others go on
                outcome.failed.append((job, _one_line(e)))
            else:
                store.add(run)  # a StoreError ends the sweep here: the store would refuse every later run too
                outcome.stored[job.key] = run
                outcome.ran += 1
            runner.release(future)  # stored: no worker keeps it, so none reruns it when lost
            done += 1
            if on_run is not None:
                on_run(job, run, done, len(jobs))
    except BaseException:
        runner.close(abort=True)
        raise
    runner.close(abort=False)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _run_job() -> Callable[[dict], dict]:
    """What each worker is sent to run (tests send a stand-in)."""
    return _run_on_worker


def _run_on_worker(spec: dict) -> dict:
    """`core.learning.experiment.run_job`, imported where it runs: the sweep's own process never imports torch,
    nor does a Dask scheduler, which unpickles each task it is sent (so this, and not run_job, is sent)."""
    from ..learning.experiment import run_job

    return run_job(spec)


def _finished(futures: Iterable, watch: Callable[[], None]) -> Iterator:
    """Each future as it finishes (done, failed or cancelled); `watch()` each time none has for WATCH_SECONDS."""
    arrived: queue.SimpleQueue = queue.SimpleQueue()
    count = 0
    for future in futures:
        future.add_done_callback(arrived.put)
        count += 1
    for _ in range(count):
        while True:
            try:
                yield arrived.get(timeout=WATCH_SECONDS)
                break
            except queue.Empty:
                watch()


def _base_for_workers(base: Path, remote: bool) -> dict:
    """How workers find the base: its path (local), nothing (remote, the shipped one), or its bytes (remote, other)."""
    if not remote:
        return {"base_path": str(base)}
    if Path(base).resolve() == BASE.resolve():
        return {}  # every worker has the shipped base in its package
    return {"base_bytes": Path(base).read_bytes()}


def _spec(job: Job, base_hash: str, where: dict) -> dict:
    return {
        "mix": job.cell.mix.spec(),
        "settings": job.settings.to_dict(),
        "held_out": job.held_out,
        "base_hash": base_hash,
        **where,
    }


class _LocalPool:
    """Worker processes on this machine, one torch thread each, that die with the sweep however it dies."""

    def __init__(self, workers: int):
        self.pool = ProcessPoolExecutor(workers, initializer=_worker_start, initargs=(os.getpid(),))

    def submit(self, function: Callable[[dict], dict], spec: dict):
        return self.pool.submit(function, spec)

    def watch(self) -> None:
        """Nothing to do: a worker that dies breaks the pool, which then fails every run left at once."""

    def result(self, future) -> dict:
        return future.result()

    def release(self, future) -> None:
        """Nothing to do: the pool forgets a finished run, and the sweep drops its own reference."""

    def close(self, abort: bool) -> None:
        """Wait for the workers to exit (abort: end them now and drop what is pending)."""
        if abort:
            for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                process.terminate()
        self.pool.shutdown(wait=True, cancel_futures=abort)


def _worker_start(parent: int) -> None:
    """In a local worker: die with the sweep; Ctrl-C is the sweep's to handle (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent)


def die_with(parent: int, pdeathsig: bool = True) -> None:
    """End this process when `parent` (the pid of the process that started it) ends, however it ends.

    On Linux the kernel sends SIGKILL when the parent dies (PR_SET_PDEATHSIG: strictly, when the thread
    that started this process ends; the pool's processes are started by the thread that runs the whole
    sweep). Everywhere, a daemon thread also exits this process once its parent has changed (the orphan is
    re-parented), and a parent gone before this ran is caught at once.
    """
    if pdeathsig and sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl here: the thread below still ends it
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the signal was asked for
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True, name="breadth-orphan-watch").start()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_SECONDS)
    os._exit(1)


class _DaskCluster:
    """A Dask cluster's workers: checked before any run is sent, watched while the sweep waits for results."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError(
                "Dask is not installed: pip install -c constraints.txt '.[cluster]' in breadth's clone"
            ) from None
        self.address = address
        _quiet_dask()
        reach = f"cannot reach a Dask scheduler at {address} within {CONNECT_SECONDS:g} s"
        try:
            self.client = _bounded(
                lambda: Client(address, timeout=CONNECT_SECONDS, set_as_default=False),
                CONNECT_SECONDS,
                f"{reach} (it does not answer)",
                late=lambda client: client.close(),
            )
        except (OSError, ValueError, TypeError) as e:
            raise ClusterError(f"{reach} ({_one_line(e)})") from None
        self.checked: set[str] = set()  # workers found fit to run breadth
        self.workerless_since: float | None = None
        try:
            _check_scheduler(self.client, address)
            self._wait_for_a_worker()
            self.checked = _check_workers(self.client, address)
        except BaseException:
            self.close(abort=True)
            raise

    def _wait_for_a_worker(self) -> None:
        none = f"no Dask worker joined the scheduler at {self.address} within {WORKERLESS_SECONDS:g} s"
        try:
            _bounded(
                lambda: self.client.wait_for_workers(1, timeout=WORKERLESS_SECONDS),
                WORKERLESS_SECONDS + ANSWER_SECONDS,
                none,
            )
        except (TimeoutError, OSError):
            raise ClusterError(none) from None

    def submit(self, function: Callable[[dict], dict], spec: dict):
        return self.client.submit(function, spec, pure=False)  # straight to the client: no executor keeps it

    def watch(self) -> None:
        """ClusterError if the scheduler went away, a worker that joined cannot run breadth, or none is left."""
        if self.client.status != "running":
            raise self._gone()
        workers = set(
            _bounded(
                lambda: self.client.scheduler_info()["workers"],
                ANSWER_SECONDS,
                f"the Dask scheduler at {self.address} stopped answering",
            )
        )
        if new := workers - self.checked:
            self.checked |= _check_workers(self.client, self.address, sorted(new))
        if workers:
            self.workerless_since = None
        elif self.workerless_since is None:
            self.workerless_since = time.monotonic()
        elif time.monotonic() - self.workerless_since >= WORKERLESS_SECONDS:
            raise ClusterError(
                f"every Dask worker at {self.address} has left and none came back within {WORKERLESS_SECONDS:g} s; "
                "the runs stored so far are kept"
            )

    def result(self, future) -> dict:
        """A finished run's result, fetched from its worker (if that worker just died, Dask runs it again)."""
        while True:
            if future.cancelled():
                raise self._gone()
            if future.status == "error":
                return future.result()  # raises the run's own error
            try:
                return future.result(timeout=WATCH_SECONDS)
            except TimeoutError:
                self.watch()

    def release(self, future) -> None:
        future.release()

    def close(self, abort: bool) -> None:
        """Let the cluster go (its scheduler forgets this sweep's runs), within a bound; it may be gone already."""
        try:
            _bounded(lambda: self.client.close(timeout=ANSWER_SECONDS), ANSWER_SECONDS, "closing")
        except Exception:  # noqa: BLE001 -- closing a cluster that went away: nothing left to do
            pass

    def _gone(self) -> ClusterError:
        return ClusterError(
            f"the Dask scheduler at {self.address} went away; the runs stored so far are kept, "
            "and the same command finishes the rest"
        )


def _check_scheduler(client, address: str) -> None:
    """ClusterError unless the scheduler can unpickle the sweep's tasks: breadth importable, at this version."""
    ask = f"the Dask scheduler at {address} did not answer a check"
    where = f"the Dask scheduler at {address}"
    try:
        _bounded(lambda: client.run_on_scheduler(importlib.util.find_spec, "core.frontends.sweep"), ANSWER_SECONDS, ask)
    except ClusterError:
        raise
    except Exception as e:  # noqa: BLE001 -- whatever stops the import there, said in one line
        raise ClusterError(f"{where} cannot import breadth ({_one_line(e)}); {WORKER_INSTALL}") from None
    try:
        theirs = _bounded(lambda: client.run_on_scheduler(importlib.metadata.version, "breadth"), ANSWER_SECONDS, ask)
    except importlib.metadata.PackageNotFoundError as e:
        theirs = e
    _same_version(where, theirs)


def _same_version(where: str, theirs: str | BaseException) -> None:
    """ClusterError unless `theirs` (a version, or the error reading it) is this process's breadth version."""
    mine = _version("breadth")
    if mine is not None and theirs != mine:  # a sweep run from a source tree has no version to compare
        has = "breadth without its package metadata" if isinstance(theirs, BaseException) else f"breadth {theirs}"
        raise ClusterError(f"{where} has {has}, this machine {mine}; {WORKER_INSTALL}")


def _check_workers(client, address: str, workers: list[str] | None = None) -> set[str]:
    """The workers (all, or those named) that can run breadth's jobs; ClusterError naming the first that cannot.

    Only stdlib functions are sent: they pickle by reference to the stdlib, so they run where breadth is
    missing, where a function of breadth's own could not even be unpickled.
    """

    def ask(function: Callable, name: str) -> dict[str, Any]:
        return _bounded(
            lambda: client.run(function, name, workers=workers, on_error="return"),
            ANSWER_SECONDS,
            f"the Dask workers at {address} did not answer a check",
        )

    spec = ask(importlib.util.find_spec, "core.learning.experiment")
    breadth = ask(importlib.metadata.version, "breadth")
    torch = ask(importlib.metadata.version, "torch")
    for worker in sorted(spec.keys() & breadth.keys() & torch.keys()):
        found = spec[worker]
        if found is None or isinstance(found, BaseException):
            why = _one_line(found) if isinstance(found, BaseException) else "no module core.learning.experiment"
            raise ClusterError(f"Dask worker {worker} cannot import breadth ({why}); {WORKER_INSTALL}")
        _same_version(f"Dask worker {worker}", breadth[worker])
        if isinstance(torch[worker], BaseException):
            raise ClusterError(f"Dask worker {worker} has no torch; {WORKER_INSTALL}")
    return set(spec)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _bounded(call: Callable[[], Any], seconds: float, refusal: str, late: Callable[[Any], None] | None = None) -> Any:
    """`call()` if it returns within `seconds` of wall-clock time, whatever it waits for; else ClusterError(`refusal`).

    It runs in a daemon thread, left behind if it overruns (a daemon thread never holds up the exit);
    `late` gets its value should it return after all.
    """
    lock = threading.Lock()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            value = call()
        except BaseException as e:  # noqa: BLE001 -- handed to the caller's thread
            outcome = ("error", e)
        else:
            outcome = ("value", value)
        with lock:
            if "abandoned" not in box:
                box[outcome[0]] = outcome[1]
                return
        if late is not None and outcome[0] == "value":
            late(outcome[1])

    thread = threading.Thread(target=run, daemon=True, name="breadth-cluster-call")
    thread.start()
    thread.join(seconds)
    with lock:
        if "value" not in box and "error" not in box:
            box["abandoned"] = True
            raise ClusterError(refusal)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _quiet_dask() -> None:
    """Dask's client logs to stderr (tracebacks when its scheduler goes away): the sweep says what matters itself.

    Dask gives each logger it configures (`distributed`, `distributed.client`, `tornado`, ...) its own stderr
    handler; those handlers are replaced.
    """
    for name, log in list(logging.Logger.manager.loggerDict.items()):
        if (
            isinstance(log, logging.Logger)
            and log.handlers
            and name.split(".")[0] in ("distributed", "tornado", "bokeh")
        ):
            log.handlers = [logging.NullHandler()]
            log.propagate = False


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
