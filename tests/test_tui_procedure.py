"""Watching the procedure form (F9): a run's snapshots replayed per family, step by step, with scores by step."""

from __future__ import annotations

import re

from textual.widgets import Input, Static
from tui_helpers import fake_app, wait_for

from breadth.core.storage.header import read_metadata
from breadth.core.storage.presets import PRESETS
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import name_for
from breadth.tui.catalog import ModelEntry
from breadth.tui.screens.procedure_view import ProcedureView, probes
from breadth.tui.widgets.loss_plot import LossPlot

STEPS = 50  # the scripted run: snapshots at 0, 25 and 50; the first half of the run guesses without calling


def _line(app, family: str) -> str:
    i = list(REGISTERED).index(family)
    return str(app.screen.query_one(f"#procedure-line-{i}", Static).render())


def _status(app) -> str:
    return str(app.screen.query_one("#procedure-status", Static).render())


async def _train(pilot, app) -> None:
    app.query_one("#steps", Input).value = str(STEPS)
    await pilot.press("f2")
    await wait_for(pilot, lambda: app.current == "run:1" and app.training is None, what="the run")


async def test_the_procedure_view_replays_each_familys_probe_at_the_chosen_step_with_its_score(tmp_path):
    """After a run, F9 shows the last snapshot: the trained family's probe solved and scored, the run and its families
    in words (`mix 35+35 #1`, `*two-digit`; Shift+F5: `a2x2 35+a3x1 35 #1`, `*a2x2`, and again the words); Home goes to
    step 0, where the probe is answered without a call; each step's scores arrive from the engine's background."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _train(pilot, app)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcedureView), what="the view")
        run = app.screen.run
        await wait_for(pilot, lambda: sorted(run.scores) == [0, 25, 50], what="every snapshot scored")
        probe = probes(0)[0]
        await wait_for(pilot, lambda: "✓" in _line(app, "add_2x2"), what="the last step's verdict")
        assert "step 50 of 50" in _status(app) and "snapshot 3 of 3" in _status(app)
        line = _line(app, "add_2x2")
        assert line.startswith("*two-digit ") and "100%" in line and probe.prompt in line
        status = _status(app)
        assert status.startswith("mix 35+35 #1 · ") and not re.search(r"\ba2x2\b", status + line)
        await pilot.press("shift+f5")  # the run and its families by code
        await pilot.pause()
        assert _line(app, "add_2x2").startswith("*a2x2 ") and _status(app).startswith("a2x2 35+a3x1 35 #1 · ")
        assert f" {REGISTERED['add_3x1'].short} " in str(app.screen.query_one("#procedure-legend", Static).render())
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _line(app, "add_2x2") == line and _status(app) == status
        await pilot.press("home")
        await wait_for(pilot, lambda: "✗" in _line(app, "add_2x2"), what="step 0's verdict")
        assert "step 0 of 50" in _status(app) and "no call" in _line(app, "add_2x2")
        assert "B" not in _line(app, "add_2x2").split("=", 1)[1]  # no call written yet
        await pilot.press("right")
        await wait_for(pilot, lambda: "step 25 of 50" in _status(app), what="the middle step")
        await pilot.press("escape")
        assert not isinstance(app.screen, ProcedureView)


async def test_without_a_run_the_key_says_what_to_do(tmp_path):
    """On a model saved without snapshots, before any training in this session, F9 explains instead of opening an
    empty view."""
    bare = tmp_path / "bare.safetensors"  # a checkpoint with no snapshots beside it
    bare.write_bytes(PRESETS["two_digit_70"].shipped.read_bytes())
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.catalogue.add_loaded_model(ModelEntry.loaded(str(bare), read_metadata(bare)))
        await pilot.pause()
        await pilot.press("f9")
        await pilot.pause()
        assert not isinstance(app.screen, ProcedureView)
        assert any("snapshots are kept every 25 steps" in str(n.message) for n in app._notifications)


async def test_the_loss_chart_names_its_axes_fine_tuning_step_across_and_loss_up():
    """The procedure view's loss chart, shown to an audience in a talk, says what its axes are (it had bare ticks)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _train(pilot, app)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcedureView), what="the view")
        await pilot.pause()
        drawn = str(app.screen.query_one("#procedure-loss", LossPlot).render())
        assert "fine-tuning step" in drawn and "loss (log scale)" in drawn, drawn


async def test_the_procedure_views_families_are_named_in_words_or_in_codes_where_asked_for():
    """Each line and the score chart's legend name a family in words (`two-digit`, as on stage: codes there were
    issue 30's), in one column; with codes asked for (Shift+F5), by their codes (`a2x2`)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _train(pilot, app)
        for codes in (False, True):
            app.codes = codes
            await pilot.press("f9")
            await wait_for(pilot, lambda: isinstance(app.screen, ProcedureView), what="the view")
            await wait_for(pilot, lambda: sorted(app.screen.run.scores) == [0, 25, 50], what="every snapshot scored")
            await wait_for(pilot, lambda: "✓" in _line(app, "add_2x2"), what="the last step's verdict")
            shown = list(app.screen.run.environments)
            names = [name_for(REGISTERED[name], codes) for name in shown]
            assert len(set(names)) == len(shown) and (names[0] == "a2x2") == codes, names
            lines = [_line(app, name) for name in shown]
            for name, line in zip(names, lines, strict=True):
                assert line[1:].startswith(f"{name} "), (name, line)
            assert len({line.index("%") for line in lines}) == 1  # the scores in one column after the names
            legend = str(app.screen.query_one("#procedure-legend", Static).render())
            assert all(f" {name} " in legend for name in names), legend
            await pilot.press("escape")


def test_snapshot_procedure_view(snap_compare):
    """The procedure view at 80x24 after a scripted 50-step run, at step 25: the run's own families' probes and one
    held-out family's, scores, both curves."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for box in app.query(Input):
            box.cursor_blink = False
        await _train(pilot, app)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcedureView), what="the view")
        await wait_for(pilot, lambda: sorted(app.screen.run.scores) == [0, 25, 50], what="every snapshot scored")
        await pilot.press("left")
        await wait_for(
            pilot,
            lambda: all(line.verdict is not None for line in app.screen.lines if app.screen._shown(line)),
            what="every probe shown played",
        )
        app.clear_notifications()  # the "trained and saved" toast names a temporary path
        await pilot.pause()

    assert snap_compare(fake_app(), terminal_size=(80, 24), run_before=run_before)


async def test_the_procedure_view_replays_snapshots_while_the_run_is_still_training():
    """Opened during training, the view replays the snapshots kept so far (the engine plays them between steps)
    and takes in new ones as they are kept; scores come once training has ended."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.query_one("#steps", Input).value = "200"  # 10 s of scripted steps: time to look while it trains
        await pilot.press("f2")
        await wait_for(
            pilot,
            lambda: app.training_jobs.progress and next(iter(app.training_jobs.progress.values())).kept,
            what="a snapshot",
        )
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcedureView), what="the view")
        await wait_for(pilot, lambda: "✗" in _line(app, "add_2x2"), what="step 0 played during training")
        assert app.training is not None and "no call" in _line(app, "add_2x2")
        run = app.screen.run
        await wait_for(pilot, lambda: 125 in run.kept, what="a snapshot past half the run (the script calls there)")
        await pilot.press("end")
        await wait_for(pilot, lambda: "✓" in _line(app, "add_2x2"), what="the later step played")
        assert app.training is not None and not run.scores
        await pilot.press("escape")
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, what="the stop")
        assert run.key not in app.training_jobs.progress  # a stopped run's snapshots went with it
