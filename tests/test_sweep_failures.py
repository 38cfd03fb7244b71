"""Sweeps under failure: no hang, no stray process, no lost or rerun result, one line for what went wrong.

A cluster address that never answers, workers that cannot run breadth, workers lost late or all at once,
a scheduler that goes away, a store that refuses a write, and a sweep killed with SIGKILL.
Jobs are faked where training is beside the point (`_fake_job`, by monkeypatching `sweep._run_job`).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time
from contextlib import closing
from pathlib import Path

import distributed  # a test dependency (the cluster extra)
import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.grid import Grid
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoreError
from breadth.core.sweeps import cluster, sweep
from breadth.core.sweeps.sweep import ClusterError, run_jobs
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

pytestmark = pytest.mark.slow  # worker processes, Dask clusters
PYTHON = sys.executable
BREADTH = Path(PYTHON).parent / "breadth"
REPO = Path(__file__).resolve().parents[1]
SITE = Path(sysconfig.get_paths()["purelib"])  # this environment's site-packages
TESTS = Path(__file__).resolve().parent


def _fake_job(log: str, seconds: float, spec: dict) -> dict:
    """Stands in for run_job: notes its pid, mix and seed in `log`, waits `seconds`, returns a record."""
    settings = FinetuneSettings.from_dict(spec["settings"])
    with open(log, "a") as f:
        f.write(f"{os.getpid()} {spec['mix']} {settings.seed}\n")
    time.sleep(seconds)
    record = RunMeta("finetune", settings, spec["mix"], settings.seed, spec["held_out"], {}, (1.0,), seconds)
    return {"record": record.to_dict(), "versions": {"breadth": "fake", "torch": "none"}}


def _fake_jobs(monkeypatch, log: Path, seconds: float) -> None:
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_fake_job, str(log), seconds))


def _executions(log: Path) -> list[tuple[int, str]]:
    """(pid, seed) of each execution of a fake job."""
    if not log.exists():
        return []
    return [(int(pid), seed) for pid, _, seed in (line.split() for line in log.read_text().splitlines())]


def _stored_count(path: Path) -> int:
    """Runs in the store at `path`, read as another process would (0 before its tables exist)."""
    try:
        with closing(sqlite3.connect(path)) as db:
            return db.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _jobs(n: int):
    base_hash = weights_hash(BASE)
    return Grid((Mix.parse("two_digit=4"),), FinetuneSettings(), (), tuple(range(n)), 3).jobs(base_hash), base_hash


def _within(seconds: float, call):
    """`call()`'s value, or the test fails if it has not returned within `seconds` (a hang fails, not hangs)."""
    box: dict = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 -- handed back to the test
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds:g} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _sweep(path: Path, jobs, base_hash: str, store_class=Store, **how):
    """run_jobs into the store at `path`, opened here (SQLite keeps a connection to the thread that made it)."""
    with store_class(path) as store:
        return run_jobs(jobs, store, BASE, base_hash, "test", **how)


def _alive(pid: int) -> bool:
    """True if `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.fixture
def spawn():
    """Start processes in their own session; every one of them (and its children) is killed after the test."""
    started: list[subprocess.Popen] = []

    def start(argv, **kwargs) -> subprocess.Popen:
        kwargs.setdefault("stdout", subprocess.DEVNULL)
        kwargs.setdefault("stderr", subprocess.DEVNULL)
        proc = subprocess.Popen([str(a) for a in argv], start_new_session=True, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# ---- local workers ----


def test_a_sweep_killed_with_sigkill_takes_its_workers_with_it(spawn, tmp_path):
    """`kill -9` of `breadth sweep --workers 2` (the parent alone): both worker processes are gone within 5 s."""
    store = tmp_path / "s.sqlite"
    argv = [BREADTH, "sweep", "--mix", "two_digit=4", "--seeds", "0-20", "--steps", "200", "--held-out", "3"]
    proc = spawn([*argv, "--workers", "2", "--store", store])
    deadline = time.monotonic() + 30
    while len(workers := _children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(workers) == 2, f"the sweep started {len(workers)} workers"
    time.sleep(2)  # inside their first run, importing torch or training
    assert proc.poll() is None and all(_alive(pid) for pid in workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in workers if _alive(pid)] == []


@pytest.mark.parametrize("pdeathsig", [True, False], ids=["prctl", "watching-thread"])
def test_a_worker_ends_with_its_parent_by_either_mechanism(spawn, tmp_path, pdeathsig):
    """A process that called die_with(its parent) ends within 3 s of the parent's SIGKILL, by each mechanism alone:
    the kernel's parent-death signal (the watching thread made to look once an hour), or the thread (no prctl)."""
    pidfile = tmp_path / "child"
    script = (
        "import os, sys, time\n"
        "from breadth.core.sweeps import sweep\n"
        f"sweep.PARENT_SECONDS = {3600 if pdeathsig else 0.5}\n"
        "parent = os.getpid()\n"
        "if os.fork() == 0:\n"
        f"    sweep.die_with(parent, pdeathsig={pdeathsig})\n"
        f"    open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    proc = spawn([PYTHON, "-c", script])
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pidfile.read_text())
    assert _alive(child)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 3
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_worker_whose_parent_died_before_it_started_exits_at_once():
    """die_with() in a process whose parent is not the one named (it died first): the process exits, status 1."""
    script = "from breadth.core.sweeps.sweep import die_with; die_with(1 << 22); import time; time.sleep(30)"
    done = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, timeout=20)
    assert done.returncode == 1 and done.stderr == ""


class _FullStore(Store):
    """A real store whose every write fails, as on a full disk."""

    def add(self, stored):
        raise StoreError(f"{self.path}: cannot store the run: database or disk is full")


def test_a_store_that_refuses_a_run_stops_the_sweep_and_its_workers(monkeypatch, tmp_path):
    """The first StoreError ends the sweep: it is raised as it was, the remaining runs are not trained, and the
    worker processes are gone when run_jobs returns."""
    log = tmp_path / "executions"
    _fake_jobs(monkeypatch, log, 0.3)
    jobs, base_hash = _jobs(12)
    with pytest.raises(StoreError, match="disk is full"):
        _within(30, lambda: _sweep(tmp_path / "s.sqlite", jobs, base_hash, _FullStore, workers=2))
    ran = _executions(log)
    assert 1 <= len(ran) <= 5  # the two running, and at most the few the pool had queued: not the twelve
    assert not any(_alive(pid) for pid, _ in ran)


def test_two_sweeps_writing_one_store_each_say_what_they_stored(monkeypatch, tmp_path, capsys):
    """Seeds 0-2 and 1-3 swept at once into one store: 4 runs are stored, and the sweeps' "stored" counts add up to 4
    (each said "ran 3" before, 6 in all); a run the other stored first is counted apart, and the store's run is the
    one the losing sweep reports and summarises."""
    from breadth.core.cli.grids import print_outcome

    _fake_jobs(monkeypatch, tmp_path / "log", 1.0)
    jobs, base_hash = _jobs(4)
    path = tmp_path / "s.sqlite"
    Store(path).close()  # made once, before either opens it
    outcomes: dict[str, object] = {}

    def sweep_seeds(name: str, chosen) -> None:
        with Store(path) as store:
            outcomes[name] = run_jobs(chosen, store, BASE, base_hash, name, workers=1)

    threads = [threading.Thread(target=sweep_seeds, args=(n, js)) for n, js in (("A", jobs[:3]), ("B", jobs[1:]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    a, b = outcomes["A"], outcomes["B"]
    with Store(path) as store:
        kept = {run.key: run for run in store.runs()}
    assert len(kept) == 4 and a.ran + b.ran == 4
    assert (a.ran + a.stored_first, b.ran + b.stored_first) == (3, 3) and a.stored_first + b.stored_first == 2
    for outcome in (a, b):
        assert {key: run.source for key, run in outcome.stored.items()} == {k: kept[k].source for k in outcome.stored}
    print_outcome(a)
    print_outcome(b)
    said = " ".join(capsys.readouterr().out.split())
    for o in (a, b):
        race = f" (stored {o.ran}; {o.stored_first} stored first by another writer on this store, theirs kept)"
        assert f"ran 3{race if o.stored_first else ''}, already stored 0, failed 0" in said, said


def _dies_on_seed_one(log: str, spec: dict) -> dict:
    if spec["settings"]["seed"] == 1:
        os._exit(3)
    return _fake_job(log, 0.2, spec)


def test_a_local_worker_that_dies_fails_the_runs_left_instead_of_hanging(monkeypatch, tmp_path):
    """A local worker that dies mid-run breaks the pool: the sweep returns with the runs left failed, never waits."""
    log = tmp_path / "executions"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_dies_on_seed_one, str(log)))
    jobs, base_hash = _jobs(4)
    outcome = _within(30, lambda: _sweep(tmp_path / "s.sqlite", jobs, base_hash, workers=1))
    assert outcome.ran == 1 and len(outcome.failed) == 3
    assert all("BrokenProcessPool" in why for _, why in outcome.failed)


# ---- Dask ----


@pytest.fixture
def scheduler():
    """A Dask scheduler on 127.0.0.1 in this process, with no workers of its own; closed after the test."""
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def _dask_worker(spawn, address: str, env: dict, python_flags=(), cwd=None) -> subprocess.Popen:
    """A Dask worker process (no nanny, one thread) on 127.0.0.1, with its own environment."""
    argv = [PYTHON, *python_flags, "-m", "distributed.cli.dask_worker", address, "--no-nanny", "--nthreads", "1"]
    return spawn([*argv, "--host", "127.0.0.1", "--no-dashboard"], env=env, cwd=cwd)


def _dask_scheduler(spawn, tmp_path: Path, env: dict, python_flags=()) -> tuple[subprocess.Popen, str]:
    """A Dask scheduler process on 127.0.0.1 with no dashboard, with its own environment; it and its address."""
    address_file = tmp_path / "scheduler.json"
    argv = [PYTHON, *python_flags, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
    scheduler = spawn([*argv, "--no-dashboard", "--scheduler-file", address_file], env=env, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while not (address_file.exists() and address_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return scheduler, json.loads(address_file.read_text())["address"]


def _wait_for_workers(address: str, n: int) -> dict[str, int]:
    """Wait until `n` workers are connected; their pids."""
    with distributed.Client(address, timeout=10, set_as_default=False) as client:
        client.wait_for_workers(n, timeout=30)
        return client.run(os.getpid)


def test_a_cluster_address_that_never_answers_is_one_line_within_the_bound(tmp_path):
    """A server that accepts the connection and never answers: `breadth sweep --cluster` exits 2 within the
    connect bound (plus start-up), with one line naming the address and the bound."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept_and_say_nothing() -> None:
        try:
            while True:
                held.append(server.accept()[0])
        except OSError:
            pass  # closed at the end of the test

    threading.Thread(target=accept_and_say_nothing, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    argv = [BREADTH, "sweep", "--mix", "two_digit=4", "--cluster", address, "--store", tmp_path / "s.sqlite"]
    start = time.monotonic()
    try:
        done = subprocess.run(
            [str(a) for a in argv], capture_output=True, text=True, timeout=cluster.CONNECT_SECONDS + 15
        )
    finally:
        server.close()
        for connection in held:
            connection.close()
    seconds = time.monotonic() - start
    assert done.returncode == USAGE_ERROR
    assert done.stderr.strip() == (
        f"error: cannot reach a Dask scheduler at {address} within {cluster.CONNECT_SECONDS:g} s (it does not answer)"
    )
    assert seconds < cluster.CONNECT_SECONDS + 10


def _answers_http() -> tuple[socket.socket, str]:
    """A server that answers every connection as a web server would, not as Dask; (its socket, its address)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def answer() -> None:
        try:
            while True:
                connection = server.accept()[0]
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                connection.close()
        except OSError:
            pass  # closed at the end of the test

    threading.Thread(target=answer, daemon=True).start()
    return server, f"tcp://127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.parametrize(
    "address, why",
    [
        ("foo", "(ValueError: missing port number in address 'foo')"),
        ("tls://127.0.0.1:1", "(TypeError: TLS expects a `ssl_context` argument"),
        ("http", "(what answers there does not speak Dask's protocol)"),
    ],
)
def test_a_cluster_that_cannot_be_reached_is_one_line_and_nothing_after_it(address, why, tmp_path):
    """An address Dask refuses, TLS without a context or a web server where the scheduler should be: stderr is the one
    line and nothing else (no "Exception ignored in: Client.__del__" traceback as the process exits), exit 2, and
    the process does not wait at its exit for Dask to close a client that never connected (it waited 10 s)."""
    server = None
    if address == "http":
        server, address = _answers_http()
    argv = [BREADTH, "sweep", "--mix", "two_digit=4", "--cluster", address, "--store", tmp_path / "s.sqlite"]
    start = time.monotonic()
    try:
        done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60)
    finally:
        if server is not None:
            server.close()
    seconds = time.monotonic() - start
    assert done.returncode == USAGE_ERROR
    reach = f"error: cannot reach a Dask scheduler at {address} within {cluster.CONNECT_SECONDS:g} s "
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(reach + why), done.stderr
    assert seconds < cluster.ANSWER_SECONDS, seconds


def _without(site: Path, folder: Path, prefix: str) -> Path:
    """A copy of `site` as symlinks, without the entries whose names start with `prefix`."""
    folder.mkdir()
    for entry in site.iterdir():
        if not entry.name.startswith(prefix):
            (folder / entry.name).symlink_to(entry)
    return folder


def _breadth_from(repo: Path, folder: Path) -> Path:
    """A folder from which `breadth` imports as the repository's code: breadth/core, breadth/tui, ... as links."""
    (folder / "breadth").mkdir(parents=True)
    for name in ("core", "tui", "checkpoints"):
        (folder / "breadth" / name).symlink_to(repo / name)
    return folder


def _other_version(folder: Path) -> Path:
    """A folder holding only package metadata saying breadth 9.9."""
    meta = folder / "breadth-9.9.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: breadth\nVersion: 9.9\n")
    return folder


@pytest.mark.parametrize(
    "case, needle",
    [
        ("no breadth", "cannot import breadth (ModuleNotFoundError: No module named 'breadth')"),
        ("other version", "has breadth 9.9, this machine "),
        ("no torch", "has no torch"),
    ],
)
def test_a_worker_that_cannot_run_breadth_is_named_before_any_run(
    monkeypatch, capsys, spawn, scheduler, tmp_path, case, needle
):
    """A worker without breadth, with another version of it, or without torch: the sweep exits 2 at once with one
    line naming that worker and what it lacks, and sends it no run."""
    log = tmp_path / "executions"
    _fake_jobs(monkeypatch, log, 0.1)
    path = {  # python -S: only these folders, none of site-packages' .pth files (breadth's editable install)
        "no breadth": [SITE],
        "other version": [_other_version(tmp_path / "meta"), _breadth_from(REPO, tmp_path / "src-a"), SITE],
        "no torch": [_breadth_from(REPO, tmp_path / "src-b"), _without(SITE, tmp_path / "site", "torch")],
    }[case]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    _dask_worker(spawn, scheduler, env, python_flags=["-S"], cwd=tmp_path)
    (worker,) = _wait_for_workers(scheduler, 1)
    argv = ["sweep", "--mix", "two_digit=4", "--seeds", "0-1", "--cluster", scheduler, "--store", tmp_path / "s.sqlite"]
    start = time.monotonic()
    assert _within(30, lambda: main([str(a) for a in argv])) == USAGE_ERROR
    assert time.monotonic() - start < 10
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: Dask worker {worker} ") and needle in err and "\n" not in err
    assert _executions(log) == []


def test_a_scheduler_that_cannot_import_breadth_is_named_before_any_run(capsys, spawn, tmp_path):
    """A scheduler without breadth (it unpickles every task, so it needs the package): one line naming it, exit 2,
    before waiting for any worker."""
    env = {**os.environ, "PYTHONPATH": str(SITE)}  # python -S: no .pth files, so not breadth's editable install
    _, address = _dask_scheduler(spawn, tmp_path, env, python_flags=["-S"])
    argv = ["sweep", "--mix", "two_digit=4", "--cluster", address, "--store", str(tmp_path / "s.sqlite")]
    assert _within(20, lambda: main(argv)) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: the Dask scheduler at {address} cannot import breadth (ModuleNotFoundError: No mod")
    assert "\n" not in err


def test_losing_a_worker_late_reruns_only_the_run_it_was_running(monkeypatch, tmp_path):
    """Kill one of two workers once 4 of 6 runs are stored: the stored runs' results are not computed again
    (at most one execution more than runs: the one the lost worker was running), and all 6 are stored."""
    log = tmp_path / "executions"
    _fake_jobs(monkeypatch, log, 0.6)
    jobs, base_hash = _jobs(6)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        pids = _wait_for_workers(cluster.scheduler_address, 2)

        def kill_late(job, run, done, total):
            if job is not None and done == 4:
                os.kill(min(pids.values()), signal.SIGKILL)

        address = cluster.scheduler_address
        outcome = _within(60, lambda: _sweep(tmp_path / "s.sqlite", jobs, base_hash, cluster=address, on_run=kill_late))
    assert outcome.ran == 6 and not outcome.failed
    assert len(_executions(log)) <= 7


def test_losing_every_worker_ends_the_sweep_in_one_line_and_keeps_what_is_stored(
    monkeypatch, spawn, scheduler, tmp_path
):
    """The only worker dies mid-sweep and none comes back: ClusterError once the workerless bound has passed,
    and the runs stored before are kept."""
    monkeypatch.setattr(cluster, "WORKERLESS_SECONDS", 2.0)
    log = tmp_path / "executions"
    _fake_jobs(monkeypatch, log, 0.5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    worker = _dask_worker(spawn, scheduler, env)
    _wait_for_workers(scheduler, 1)

    def kill_after_two(job, run, done, total):
        if job is not None and done == 2:
            os.kill(worker.pid, signal.SIGKILL)

    jobs, base_hash = _jobs(6)
    store = tmp_path / "s.sqlite"
    with pytest.raises(ClusterError, match="every Dask worker .* has left .* within 2 s"):
        _within(30, lambda: _sweep(store, jobs, base_hash, cluster=scheduler, on_run=kill_after_two))
    assert _stored_count(store) == 2


def test_losing_the_scheduler_is_one_line_keeps_stored_runs_and_exits_non_zero(spawn, tmp_path):
    """The scheduler is killed once two runs are stored: a real `breadth sweep` prints one line on stderr saying it
    went away (no traceback, no line per run, nothing from Dask), exits 2, and the runs stored stay stored."""
    scheduler, address = _dask_scheduler(spawn, tmp_path, dict(os.environ))
    _dask_worker(spawn, address, dict(os.environ))
    _wait_for_workers(address, 1)
    store = tmp_path / "s.sqlite"
    argv = [BREADTH, "sweep", "--alone", "--mix", "two_digit=4", "--seeds", "0-9", "--steps", "3", "--held-out", "3"]
    sweeping = spawn([*argv, "--cluster", address, "--store", store], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _stored_count(store) < 2 and sweeping.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sweeping.poll() is None, "the sweep ended before its scheduler could be killed"
    os.kill(scheduler.pid, signal.SIGKILL)
    stored = _stored_count(store)
    _, err = sweeping.communicate(timeout=30)
    assert sweeping.returncode == USAGE_ERROR
    assert err == (
        f"error: the Dask scheduler at {address} went away; the runs stored so far are kept, "
        "and the same command finishes the rest\n"
    )
    assert 2 <= stored <= _stored_count(store) < 10
