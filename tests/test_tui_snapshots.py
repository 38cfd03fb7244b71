"""Snapshots of the app's main states at 80x24: start, training, a probe shown, help.

Each runs on the scripted engine (no torch, no timing), with the cursor blink frozen, so a picture
changes only when the layout or the rendering changes. Update with `pytest --snapshot-update`.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from textual.widgets import Input

sys.path.insert(0, str(Path(__file__).parent))
from tui_helpers import fake_app, type_text  # noqa: E402

from breadth.tui.widgets.loss_plot import LossPlot  # noqa: E402

SIZE = (80, 24)


def _steady(app) -> None:
    for box in app.query(Input):
        box.cursor_blink = False


async def _start(pilot) -> None:
    _steady(pilot.app)
    await pilot.pause()


def test_snapshot_start(snap_compare):
    """At start: the three panels, the shipped mix model's scores, its loss curve, the sum box focused."""
    assert snap_compare(fake_app(), terminal_size=SIZE, run_before=_start)


def test_snapshot_training(snap_compare):
    """During training: Train disabled, Stop enabled, a seeded live loss curve over the reference, the step line."""

    async def run_before(pilot) -> None:
        app = pilot.app
        _steady(app)
        mix, settings, _ = app.train_panel.request()
        app.training = 1
        app.train_panel.started(mix, settings)
        for step in range(1, 201):
            app.train_panel.step(step, 400, 2.5 * math.exp(-step / 40) + 0.01, step * 0.012)
        app.train_panel.query_one(LossPlot).draw()  # each is drawn on its timer; now, for the picture
        app.train_panel.show_step_line()
        await pilot.pause()

    assert snap_compare(fake_app(), terminal_size=SIZE, run_before=run_before)


def test_snapshot_probe_shown(snap_compare):
    """After probes: coloured episodes with verdicts, a one-call model failing 3+4+5, a sum outside every family."""

    async def run_before(pilot) -> None:
        app = pilot.app
        _steady(app)
        app.playground.pace = 0
        for text in ("23+45", "3+4+5", "123+4"):
            await type_text(pilot, text)
            await pilot.press("enter")
        while app.playground.busy() or len(app.playground.probes) < 3:
            await pilot.pause(0.05)

    assert snap_compare(
        fake_app(script=lambda ops: f"B{ops[0]}+{ops[1]}|{ops[0] + ops[1]}|"), terminal_size=SIZE, run_before=run_before
    )


def test_snapshot_help(snap_compare):
    """The help screen over the app."""
    assert snap_compare(fake_app(), terminal_size=SIZE, press=["f1"], run_before=_start)
