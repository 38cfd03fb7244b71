"""The app and a results store that fails: a run it could not record is saved, listed and says why; a store that
cannot be read is one inline line, whatever it raises."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from textual.widgets import Input
from tui_helpers import fake_app, wait_for

from breadth.core.storage.store import StoreError
from breadth.tui.screens.matrix_view import MatrixView

SIZE = (100, 32)
NOT_RECORDED = "not recorded in the results store ("


@pytest.fixture(autouse=True)
def quick_steps(monkeypatch):
    """Scripted training steps take no time."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)


def _negative_store(tmp_path: Path) -> Path:
    """An SQLite file whose schema version is -1 (`PRAGMA user_version = -1`)."""
    path = tmp_path / "negative.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = -1")
    return path


def _store_raising(monkeypatch, where: str, error: Exception) -> None:
    """`Store()` in module `where` raises `error`."""

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(f"{where}.Store", broken)


async def _train(pilot) -> None:
    """Train a two-step run and wait until it is the current model (or training ended without one)."""
    app = pilot.app
    app.train_panel.query_one("#steps", Input).value = "2"
    app.train_panel.set_value("held-out", "2")
    await pilot.press("f2")
    await wait_for(
        pilot, lambda: app.training is None and app.training_jobs.job == 1, timeout=20, what="the run to end"
    )


def _messages(app, severity: str | None = None) -> list[str]:
    return [n.message for n in app._notifications if severity is None or n.severity == severity]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (StoreError("/ro/grid.sqlite: attempt to write a readonly database"), "attempt to write a readonly database"),
        (KeyError(0), "KeyError: 0"),  # what a store of schema -1 raised before it was refused by name
    ],
)
async def test_a_run_the_store_did_not_record_is_saved_listed_and_says_why(monkeypatch, error, reason):
    """Training against a failing store: 'Trained and saved', the model current in the runs table, and the
    engine's note (not recorded, and why) in the status line and in a warning, never 'training failed'."""
    _store_raising(monkeypatch, "breadth.core.engine.session", error)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await _train(pilot)
        assert app.current == "run:1" and Path(app.entries["run:1"].path).is_file()
        panel = app.train_panel
        assert panel.status_is_error and "saved" in panel.status and NOT_RECORDED in panel.status
        assert reason in panel.status and "training failed" not in panel.status
        assert any(m.startswith("Trained and saved: ") for m in _messages(app))
        warnings = _messages(app, "warning")
        assert any(NOT_RECORDED in m and reason in m for m in warnings), warnings


async def test_a_store_of_schema_minus_one_leaves_the_model_listed_with_a_note(tmp_path, monkeypatch):
    """With BREADTH_STORE a real file of `user_version` -1, the trained model joins the list and the note says why
    its run was not recorded; the store read at start says so inline too."""
    monkeypatch.setenv("BREADTH_STORE", str(_negative_store(tmp_path)))
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: _messages(app, "warning"), timeout=10, what="the store read at start")
        assert _messages(app, "warning")[0].startswith("results store not read: ")
        await _train(pilot)
        assert app.current == "run:1" and app.entries["run:1"].path
        assert "run:1" in [str(key.value) for key in app.score_panel.query_one("#runs").rows]
        assert NOT_RECORDED in app.train_panel.status
        assert any(NOT_RECORDED in m for m in _messages(app, "warning"))


STORE_ERRORS = [
    StoreError("/s.sqlite: not a usable SQLite store (file is not a database)"),
    KeyError(0),
    sqlite3.DatabaseError("database disk image is malformed"),
    ValueError("invalid literal for int()"),
    RecursionError("maximum recursion depth exceeded"),
    PermissionError(13, "Permission denied"),
]


@pytest.mark.parametrize("error", STORE_ERRORS, ids=lambda e: type(e).__name__)
async def test_a_store_that_cannot_be_read_at_start_is_one_warning_naming_why(monkeypatch, error):
    """Whatever reading the store at start raises, the app runs on with the shipped models and one warning that
    names the reason (an error nobody foresaw by its type: `KeyError: 0`, not `0`)."""
    _store_raising(monkeypatch, "breadth.tui.catalog", error)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: _messages(app, "warning"), timeout=10, what="the warning")
        (warning,) = _messages(app, "warning")
        assert warning.startswith("results store not read: ") and str(error).strip("'") in warning
        if not isinstance(error, (StoreError, OSError)):
            assert f"{type(error).__name__}: " in warning
        assert app.is_running and len(app.entries) == 3 and "\n" not in warning


@pytest.mark.parametrize("error", STORE_ERRORS, ids=lambda e: type(e).__name__)
async def test_the_matrix_view_shows_a_store_it_cannot_read_inline(monkeypatch, error):
    """F10 on a store that raises anything: the view stays, its status line says the store was not read."""
    _store_raising(monkeypatch, "breadth.tui.screens.matrix_view", error)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView), timeout=5, what="the matrix")
        status = app.screen.query_one("#matrix-status")
        await wait_for(pilot, lambda: "not read" in str(status.render()), timeout=10, what="the status line")
        assert app.is_running and isinstance(app.screen, MatrixView)
