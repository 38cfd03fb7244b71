"""Running a sweep's jobs on a Dask cluster, with a wall-clock bound on every question asked of it.

Dask's own timeouts do not cover its handshake, so every call to it runs in a daemon thread with a
bound (reaching the scheduler: CONNECT_SECONDS; anything else: ANSWER_SECONDS), whatever Dask does.
Before any run is sent, the scheduler and every worker are checked with stdlib functions only (breadth's
own could not be unpickled where it is missing): breadth at this version, and torch. A scheduler that
goes away, or workers that all leave, end the sweep in one line (ClusterError). Dask's loggers are kept
off the terminal.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from breadth.core.world.text.shown import one_line

CONNECT_SECONDS = 5.0  # reaching a Dask scheduler, its handshake included (wall clock, whatever Dask does)
ANSWER_SECONDS = 10.0  # any other question to a Dask cluster: checking its workers, listing them, closing
WORKERLESS_SECONDS = 30.0  # how long a sweep waits with no Dask worker (at the start, or having lost them all)
WORKER_INSTALL = "install it there from a clone at this version: pip install -c constraints.txt '.[cluster]'"
WATCH_SECONDS = 1.0  # with no result for this long, the sweep looks at its cluster's scheduler and workers


class ClusterError(Exception):
    """The Dask cluster cannot be used (not installed, unreachable, unfit workers, gone); one line."""


class DaskCluster:
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
                lambda: _connect(Client, address),
                CONNECT_SECONDS,
                f"{reach} (it does not answer)",
                late=lambda client: client.close(),
            )
        except ClusterError:
            raise
        except MemoryError:  # its first bytes read as a message of exabytes: a web server, say
            raise ClusterError(f"{reach} (what answers there does not speak Dask's protocol)") from None
        except Exception as e:  # noqa: BLE001 -- a bad address, TLS without its context: one line
            raise ClusterError(f"{reach} ({one_line(e, typed=True)})") from None
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


def _connect(client_class: type, address: str):
    """A Dask client connected to `address`. If connecting fails, the half-made client is let go here: Dask's
    finaliser would otherwise try to close it as the process exits, wait 10 s for a scheduler it never reached and
    print "Exception ignored in: <function Client.__del__ ...>" and a traceback after the sweep's one line."""
    client = client_class.__new__(client_class)  # kept, so that a failing __init__ leaves it in our hands
    try:
        client.__init__(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except BaseException:
        _let_go(client)
        raise
    return client


def _let_go(client) -> None:
    """Stop a client that never connected: its event loop's thread ended, and nothing left for Dask to close."""
    runner = getattr(client, "_loop_runner", None)
    client.status = "closed"  # what Client.close (and so Client.__del__) takes as closed already
    if runner is not None:
        try:
            runner.stop(timeout=ANSWER_SECONDS)
        except Exception:  # noqa: BLE001 -- a loop that will not stop dies with the process
            pass


def _check_scheduler(client, address: str) -> None:
    """ClusterError unless the scheduler can unpickle the sweep's tasks: breadth importable, at this version."""
    ask = f"the Dask scheduler at {address} did not answer a check"
    where = f"the Dask scheduler at {address}"
    try:
        _bounded(
            lambda: client.run_on_scheduler(importlib.util.find_spec, "breadth.core.sweeps.sweep"), ANSWER_SECONDS, ask
        )
    except ClusterError:
        raise
    except Exception as e:  # noqa: BLE001 -- whatever stops the import there, said in one line
        raise ClusterError(f"{where} cannot import breadth ({one_line(e, typed=True)}); {WORKER_INSTALL}") from None
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

    spec = ask(importlib.util.find_spec, "breadth.core.learning.experiment")
    breadth = ask(importlib.metadata.version, "breadth")
    torch = ask(importlib.metadata.version, "torch")
    for worker in sorted(spec.keys() & breadth.keys() & torch.keys()):
        found = spec[worker]
        if found is None or isinstance(found, BaseException):
            why = (
                one_line(found, typed=True)
                if isinstance(found, BaseException)
                else "no module core.learning.experiment"
            )
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
