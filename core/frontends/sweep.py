"""Running a grid of fine-tunes: on a local process pool, or on a Dask cluster; every result into the store.

Runs already in the store are skipped, so a sweep stopped by Ctrl-C or `kill -9` finishes when the
same command runs again, with no run lost and none repeated. Workers (one torch thread each) get
plain data and give plain data back (`core.learning.experiment.run_job`); this process is the only
writer of the store, one transaction per finished run. Past one machine, the same sweep runs on a
Dask `distributed` cluster through its `concurrent.futures` executor: workers need only the package
(and, for a base other than the shipped one, get its bytes with each job).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ..results.grid import Job
from ..results.store import Store, StoredRun
from ..world.paths import BASE
from ..world.records import MetadataError, RunMeta

CONNECT_SECONDS = 5.0  # how long to try reaching a Dask scheduler before saying it cannot be reached


class ClusterError(Exception):
    """The Dask cluster cannot be used (not installed, unreachable); one line."""


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
    """Run every job not yet stored; store each result as it arrives. Ctrl-C stops the workers at once."""
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
    executor, close = _executor(workers, cluster)
    try:
        where = _base_for_workers(base, remote=cluster is not None)  # read once, not once per job
        run_job = _run_job()
        futures: dict[Future, Job] = {executor.submit(run_job, _spec(job, base_hash, where)): job for job in todo}
        for future in as_completed(futures):
            job = futures[future]
            run = None
            try:
                result = future.result()
                run = StoredRun(
                    job.key, RunMeta.from_dict(result["record"]), base_hash, source, versions=result.get("versions", {})
                )
                store.add(run)
                outcome.stored[job.key] = run
                outcome.ran += 1
            except (MetadataError, KeyError, TypeError) as e:
                outcome.failed.append((job, f"a worker sent back an unexpected result ({e})"))
            except Exception as e:  # noqa: BLE001 -- a failed run is reported, the others go on
                outcome.failed.append((job, _one_line(e)))
            done += 1
            if on_run is not None:
                on_run(job, run, done, len(jobs))
    except BaseException:
        close(abort=True)
        raise
    close(abort=False)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _run_job():
    from ..learning.experiment import run_job  # imported here: the sweep's own process never imports torch

    return run_job


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


def _executor(workers: int, cluster: str | None) -> tuple[Executor, Callable[..., None]]:
    """A local process pool, or a Dask cluster's executor; and how to close it (abort: drop what is pending)."""
    if cluster is None:
        pool = ProcessPoolExecutor(workers, initializer=_worker_start)

        def close(abort: bool) -> None:
            if abort:
                for process in list(getattr(pool, "_processes", {}).values()):
                    process.terminate()
            pool.shutdown(wait=True, cancel_futures=abort)

        return pool, close
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("Dask is not installed: pip install 'breadth[cluster]'") from None
    try:
        client = Client(cluster, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise ClusterError(f"cannot reach a Dask scheduler at {cluster} within {CONNECT_SECONDS:g} s ({e})") from None
    executor = client.get_executor(pure=False)

    def close_client(abort: bool) -> None:
        executor.shutdown(wait=not abort)
        client.close()

    return executor, close_client


def _worker_start() -> None:
    """In a local worker: Ctrl-C is the sweep's to handle (it stops the workers), not a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
