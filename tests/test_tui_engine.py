"""The app with its real engine process: training streams loss, Stop cancels, failures are survived."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from textual.widgets import Button
from tui_helpers import type_text, wait_for

from breadth.core.world.environments.environment import REGISTERED
from breadth.tui.app import BreadthApp
from breadth.tui.widgets.loss_plot import LossPlot

pytestmark = pytest.mark.slow  # the real engine process: torch, training


@pytest.fixture
def runs(tmp_path, monkeypatch) -> Path:
    """A fresh runs folder for models trained in the app."""
    monkeypatch.setenv("BREADTH_RUNS", str(tmp_path / "runs"))
    return tmp_path / "runs"


def _set(app, field: str, value: str) -> None:
    app.train_panel.set_value(field, value)


async def test_train_streams_loss_then_scores_and_saves_the_model(runs):
    """Train on a short run: the loss plot fills step by step, then the new model's scores and row appear."""
    app = BreadthApp()
    async with app.run_test(size=(100, 32)) as pilot:
        _set(app, "steps", "40")
        _set(app, "count-add_2x2", "8")
        _set(app, "count-add_3x1", "8")
        _set(app, "held-out", "12")
        await pilot.press("f2")
        plot = app.train_panel.query_one(LossPlot)
        train_off: list[bool] = []  # Train's state whenever a poll saw the job running (a quiet machine runs 40 steps
        #                             before a later check could catch it)

        def ten_points() -> bool:
            if app.training is not None:
                train_off.append(app.train_panel.query_one("#train", Button).disabled)
            return len(plot.live) >= 10

        await wait_for(pilot, ten_points, what="ten loss points")
        assert train_off and all(train_off)  # the job was seen running, and no second job could start meanwhile
        await wait_for(pilot, lambda: app.training is None, timeout=60, what="training to end")
        assert len(plot.live) == 40
        entry = app.entries[app.current]
        assert entry.origin == "trained" and entry.run.mix == "add_2x2=8,add_3x1=8"
        assert len(entry.run.losses) == 40
        assert set(entry.scores) == set(REGISTERED)  # every family of the grid is scored
        assert all(s.total == 12 for s in entry.scores.values())  # the held-out size asked for
        assert Path(entry.path).parent == runs and Path(entry.path).is_file()
        assert len(app.score_panel.query_one("#runs").rows) == 4  # three shipped + this run
        assert str(entry.scores["add_2x2"].solved) in str(app.score_panel.query_one("#environment-scores").render())
        assert not app.train_panel.status_is_error


async def test_stop_cancels_and_keeps_the_previous_model(runs):
    """Sums play during a long run; Stop ends it early, the model loaded before stays and nothing is saved."""
    app = BreadthApp()
    async with app.run_test(size=(100, 32)) as pilot:
        before = app.current
        _set(app, "steps", "50000")
        app.playground.pace = 0
        await type_text(pilot, "3+4+5")  # typed before, entered during the run (a key press waits for an idle app)
        await pilot.press("f2")
        plot = app.train_panel.query_one(LossPlot)
        await wait_for(pilot, lambda: len(plot.live) >= 5, what="training to start")
        # sums still play while the engine trains
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="a probe mid-run")
        played = [view.state for view in app.playground.probes.values()]
        assert [state.problem.operands for state in played] == [(3, 4, 5)] and played[0].verdict is not None
        assert app.training is not None
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, timeout=10, what="the stop")
        assert "stopped at step" in app.train_panel.status
        assert len(plot.live) < 50000
        assert app.current == before
        assert not runs.exists() or not any(runs.iterdir())
        assert not app.train_panel.query_one("#train", Button).disabled
        # the app is still usable: a sum plays on the previous model
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.playground.probes) == 2 and not app.playground.busy(), what="the probe")
        last = app.playground.probes[max(app.playground.probes)].state
        assert last.problem.operands == (23, 45) and last.verdict is not None


async def test_a_killed_engine_is_restarted_and_the_app_recovers(runs):
    """Killing the engine mid-training reports it, ends the job, restarts the engine; sums play again."""
    app = BreadthApp()
    async with app.run_test(size=(100, 32)) as pilot:
        _set(app, "steps", "50000")
        await pilot.press("f2")
        plot = app.train_panel.query_one(LossPlot)
        await wait_for(pilot, lambda: len(plot.live) >= 3, what="training to start")
        first = app.supervisor.engine
        os.kill(first.pid, signal.SIGKILL)
        await wait_for(
            pilot, lambda: app.supervisor.engine is not first and app.supervisor.ready, timeout=30, what="a new engine"
        )
        assert app.training is None
        assert app.train_panel.status_is_error and "engine stopped" in app.train_panel.status
        app.playground.pace = 0
        await type_text(pilot, "3+4+5")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: app.playground.probes and not app.playground.busy(),
            timeout=30,
            what="the probe on the new engine",
        )
        (view,) = app.playground.probes.values()
        assert "".join(c.char for c in view.state.shown).startswith("3+4+5=")


async def test_training_that_raises_shows_the_error_and_the_app_carries_on(runs, tmp_path, monkeypatch):
    """A fine-tune that fails (here: a corrupt base checkpoint) shows one line in red; Train works again."""
    corrupt = tmp_path / "base.safetensors"
    corrupt.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage")
    monkeypatch.setattr("breadth.tui.parts.training.BASE", corrupt)
    app = BreadthApp()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("f2")
        await wait_for(
            pilot, lambda: app.training is None and app.train_panel.status_is_error, timeout=30, what="the failure"
        )
        assert app.train_panel.status.startswith("training failed:")
        assert "\n" not in app.train_panel.status
        assert not app.train_panel.query_one("#train", Button).disabled
        assert app.supervisor.engine.alive()


def test_the_engine_runs_even_where_its_log_cannot_be_written(tmp_path):
    """An engine whose log folder cannot be created still starts, answers Ready, and quits cleanly."""
    from breadth.tui.engine import EngineProcess

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    engine = EngineProcess(blocker / "sub" / "engine.log")
    engine.start()
    try:
        assert type(engine.read()).__name__ == "Ready"
    finally:
        engine.close()
    assert not engine.alive()
