"""Shared fixtures for the engine's tests: the shipped base checkpoint, one torch thread, a plain install."""

from __future__ import annotations

import fcntl
import gc
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_finish(session) -> None:
    """Freeze what importing and collecting made (torch, Textual, every test module: 230,000 objects) out of the
    garbage collector's reach, so a collection scans only what the tests make. Pytest collects five times as a
    session ends, and execnet sends a worker still ending 5 s after it is asked to a SIGINT: it landed in one.

    Then the youngest generation is collected every 10,000 allocations, not every 700: an app test makes that many
    objects in a few milliseconds, and the collections took a seventh of an app start's CPU (0.031 of 0.233 s against
    0.020 of 0.225 s, 10 starts timed by `gc.callbacks`). A test that needs garbage gone still calls `gc.collect()`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch):
    """Every test writes its runs, logs and results store under its own BREADTH_HOME, never the user's."""
    home = tmp_path_factory.mktemp("breadth-home")
    monkeypatch.setenv("BREADTH_HOME", str(home))
    monkeypatch.delenv("BREADTH_RUNS", raising=False)
    monkeypatch.delenv("BREADTH_STORE", raising=False)
    monkeypatch.delenv("BREADTH_NO_FILES", raising=False)  # one test's served app never makes the next refuse files
    return home


@pytest.fixture(scope="session")
def base_path() -> Path:
    """The shipped pre-trained checkpoint, where the CLI looks for it."""
    from breadth.core.storage.paths import BASE

    assert BASE.is_file(), f"the shipped base checkpoint is missing: {BASE}"
    return BASE


@pytest.fixture(scope="session")
def one_thread() -> None:
    """One torch thread for the session: repeatable numbers and no OpenMP spinning on 2 cores."""
    from breadth.core.learning.train import use_one_thread

    use_one_thread()


@pytest.fixture(scope="session")
def base_model(base_path, one_thread):
    """The base model, loaded once; tests must not train it (load their own copy for that)."""
    from breadth.core.learning import checkpoint

    model, _ = checkpoint.load(base_path)
    return model


@pytest.fixture(scope="session")
def installed(tmp_path_factory, worker_id) -> Path:
    """A fresh venv holding breadth installed from a built wheel; its dependencies come from this interpreter's.

    Built once per test run: xdist's workers share the run's temporary folder, and the first to get its lock
    builds while the other waits (each file of installed-package tests built its own, 10-25 s a build).
    """
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    venv, built = shared / "installed-venv", shared / "installed-venv.built"
    with open(shared / "installed-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not built.exists():
            shutil.rmtree(venv, ignore_errors=True)  # a build that failed half-way in the other worker
            _install_from_a_wheel(venv, tmp_path_factory.mktemp("source") / "breadth")
            built.touch()
    return venv


def _install_from_a_wheel(venv: Path, source: Path) -> None:
    """Build a wheel of a copy of the source tree (pip builds in-tree and leaves build/ behind) into a new `venv`."""
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # the dependencies (torch, textual...) from the running interpreter, after the venv's own packages: a path
    # added by a .pth file is searched after site-packages, and its own .pth files (the editable hook) are not run
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
