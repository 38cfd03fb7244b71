"""Running a grid of fine-tunes: on a local process pool, or on a Dask cluster; every result into the store.

Runs already in the store are skipped, so a sweep stopped by Ctrl-C or `kill -9` finishes when the
same command runs again, with no run lost and none repeated; a fine-tune it was training alone on a local
worker goes on from the state it saved beside the store (`unfinished`, `core.learning.resume`). Workers (one
torch thread each) get plain data and give plain data back (`core.learning.experiment.run_job`, or
`run_group` for runs in lockstep: a `Group` is sent to one worker and trained there together); this process is the only
writer of the store, one transaction per finished run, and a run it cannot store stops the sweep
(the StoreError is raised, the workers stopped). Each result is let go once stored, so a worker lost
late reruns only what it was running. A group of which some runs are stored trains again whole (its
runs' numbers are that group's) and stores only the runs missing.

Nothing a machine does can hang a sweep or outlive it. Local workers die with the sweep however it
dies (`kill -9` included). Every question to a Dask cluster has a wall-clock bound, whatever Dask
does; its workers are checked before any run is sent (breadth at this version, and torch, with
stdlib functions only, since breadth's own could not be unpickled where it is missing); a scheduler
that goes away, or workers that all leave, end the sweep in one line (ClusterError), the runs
stored so far kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from breadth.core.results.grid import Job
from breadth.core.results.groups import Group
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun
from breadth.core.sweeps.cluster import WATCH_SECONDS, ClusterError, DaskCluster
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.recipes import FINETUNE, recipe_of
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.shown import one_line

RESUME_EVERY = 1_000  # steps between a local run's saved states: about a minute of a long run here, a few MB each
PARENT_SECONDS = 0.5  # how often a local worker looks whether the sweep that started it is still there
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): the signal this process gets when its parent dies


@dataclass
class SweepOutcome:
    """What a sweep did: the runs of its grid now in the store, those it stored, and those that failed."""

    stored: dict[str, StoredRun] = field(default_factory=dict)  # key -> run (skipped or new), as the store holds it
    ran: int = 0  # runs this sweep trained and stored
    stored_first: int = 0  # runs this sweep trained that another writer (a second sweep) stored first: theirs kept
    failed: list[tuple[Job, str]] = field(default_factory=list)  # (job, one line)
    seconds: float = 0.0


OnRun = Callable[[Job, StoredRun | None, int, int], None]  # (job, its run or None, done, total)


def run_jobs(
    jobs: Sequence[Job | Group],
    store: Store,
    base: Path,
    base_hash: str,
    source: str,
    workers: int = 2,
    cluster: str | None = None,
    on_run: OnRun | None = None,
) -> SweepOutcome:
    """Run every job not yet stored (each alone, or each `Group` together in lockstep on one worker); store each
    result as it arrives, then let it go. Progress (`on_run`) and the outcome count runs, not groups.

    Ctrl-C stops the workers at once, and so does a run the store cannot keep (its StoreError is raised:
    every later run would fail the same way) or a cluster that cannot go on (ClusterError).
    """
    outcome = SweepOutcome()
    existing = {run.key: run for run in store.runs()}
    todo = []
    for task in jobs:
        members = _members(task)
        outcome.stored |= {job.key: existing[job.key] for job in members if job.key in existing}
        if any(job.key not in existing for job in members):
            todo.append(task)
    total = sum(len(_members(task)) for task in jobs)
    done = len(outcome.stored)
    if on_run is not None:
        on_run(None, None, done, total)
    if not todo:
        return outcome
    start = time.perf_counter()
    runner = _LocalPool(workers) if cluster is None else DaskCluster(cluster)
    try:
        where = _base_for_workers(base, remote=cluster is not None)  # read once, not once per job
        states = None if cluster is not None else unfinished(store.path)  # remote workers may share no folder
        run_job = _run_job()
        pending = {runner.submit(run_job, _task_spec(task, base_hash, where, states)): task for task in todo}
        for future in _finished(pending, runner.watch):
            task = pending.pop(future)
            for job, run, why in _results(task, future, runner, base_hash, source):
                if job.key in outcome.stored:
                    continue  # stored before its group trained again
                if run is None:
                    outcome.failed.append((job, why))
                elif store.add(run):  # a StoreError ends the sweep here: the store would refuse every later run too
                    outcome.stored[job.key] = run
                    outcome.ran += 1
                else:  # another writer stored this run while it trained here: the store keeps theirs
                    run = next(iter(store.runs(keys=[job.key])), run)
                    outcome.stored[job.key] = run
                    outcome.stored_first += 1
                if states is not None and run is not None:  # stored: its saved state is of no more use (a failed
                    (states / f"{job.key}.safetensors").unlink(missing_ok=True)  # run's is kept for the next try)
                done += 1
                if on_run is not None:
                    on_run(job, run, done, total)
            runner.release(future)  # stored: no worker keeps it, so none reruns it when lost
    except BaseException:
        runner.close(abort=True)
        raise
    runner.close(abort=False)
    if states is not None:
        with contextlib.suppress(OSError):  # gone, or holding another sweep's states
            states.rmdir()
    outcome.seconds = time.perf_counter() - start
    return outcome


def going_on(jobs: Sequence[Job | Group], store: Path) -> int:
    """How many of the runs trained alone have a state saved beside `store` to go on from (see `unfinished`)."""
    states = unfinished(store)
    return sum((states / f"{task.key}.safetensors").is_file() for task in jobs if not isinstance(task, Group))


def unfinished(store: Path) -> Path:
    """The folder beside a store where its sweeps' local runs keep their states until stored (see
    `core.learning.resume`): a run stopped partway (Ctrl-C, kill, a lost machine) goes on from there."""
    return store.with_name(f"{store.name}.unfinished")


def _members(task: Job | Group) -> tuple[Job, ...]:
    """The runs a task trains: a job alone, or a group's."""
    return task.jobs if isinstance(task, Group) else (task,)


def _results(task: Job | Group, future, runner, base_hash: str, source: str) -> list[tuple[Job, StoredRun | None, str]]:
    """Per run of a finished task: (job, its run to store, '') or (job, None, why it failed, in one line)."""
    members = _members(task)
    try:
        result = runner.result(future)
        answers = result["runs"] if isinstance(task, Group) else [result]
        if not isinstance(answers, list) or len(answers) != len(members):
            raise TypeError(f"{len(members)} runs sent, results for {len(answers)} returned")
    except ClusterError:
        raise
    except (MetadataError, KeyError, TypeError) as e:
        return [(job, None, f"a worker sent back an unexpected result ({e})") for job in members]
    except Exception as e:  # noqa: BLE001 -- a failed run is reported, the others go on
        return [(job, None, one_line(e, typed=True)) for job in members]
    out = []
    for job, answer in zip(members, answers, strict=True):
        try:
            if isinstance(answer, dict) and "error" in answer:  # a run of a group that failed alone (diverged)
                out.append((job, None, one_line(str(answer["error"]))))
                continue
            record = RunMeta.from_dict(answer["record"])
            versions = result.get("versions", {})
            out.append((job, StoredRun(job.key, record, base_hash, source, versions=versions), ""))
        except (MetadataError, KeyError, TypeError) as e:
            out.append((job, None, f"a worker sent back an unexpected result ({e})"))
    return out


def _run_job() -> Callable[[dict], dict]:
    """What each worker is sent to run (tests send a stand-in)."""
    return _run_on_worker


def _run_on_worker(spec: dict) -> dict:
    """`core.learning.experiment.run_job` (or `run_group`, for a lockstep group's spec), imported where it runs: the
    sweep's own process never imports torch, nor does a Dask scheduler, which unpickles each task it is sent (so
    this, and not run_job, is sent)."""
    from breadth.core.learning.experiment import run_group, run_job

    return run_group(spec) if "group" in spec else run_job(spec)


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


def _task_spec(task: Job | Group, base_hash: str, where: dict, states: Path | None = None) -> dict:
    """What a worker is sent: a job's spec, or a group's (its runs' specs and their keys alone; the base once). A
    fine-tune on demonstrations trained alone keeps its state in `states` (when given) and goes on from it."""
    if not isinstance(task, Group):
        spec = _spec(task, base_hash, where)
        if states is not None and spec["recipe"] == FINETUNE:
            path = states / f"{task.key}.safetensors"
            spec["resume"] = {"path": str(path), "key": task.key, "every": RESUME_EVERY}
        return spec
    return {"runs": [_spec(job, base_hash, {}) for job in task.jobs], "group": list(task.alone)} | {
        "base_hash": base_hash,
        **where,
    }


def _spec(job: Job, base_hash: str, where: dict) -> dict:
    return {
        "mix": job.cell.mix.spec(),
        "recipe": recipe_of(job.settings).name,
        "settings": job.settings.to_dict(),
        "held_out": job.held_out,
        **({} if job.environments is None else {"families": list(job.environments)}),  # spec key: see run_job
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
