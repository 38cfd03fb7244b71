"""Shared fixtures for the engine's tests: the shipped base checkpoint and one torch thread."""

from __future__ import annotations

from pathlib import Path

import pytest


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
