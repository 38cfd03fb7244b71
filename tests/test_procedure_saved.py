"""The procedure view (F9) on models saved with their snapshots: open at once, already scored, showing few families."""

from __future__ import annotations

from fake_engine import FakeEngine
from textual.widgets import Input, Static
from tui_helpers import fake_app, wait_for

from breadth.core.engine import protocol as p
from breadth.core.storage.header import read_metadata
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.snapshot_file import sidecar_of
from breadth.core.world.environments.environment import REGISTERED
from breadth.tui.app import BreadthApp
from breadth.tui.catalog import ModelEntry
from breadth.tui.screens.procedure_view import ProcedureView, saved_run

SHIPPED_STEPS = [0, 80, 160, 240, 320, 400]


def _shown(app) -> list[str]:
    """The families whose lines the procedure view shows, in order."""
    return [line.problem.environment for line in app.screen.lines if app.screen._shown(line)]


def _line(app, family: str) -> str:
    i = list(REGISTERED).index(family)
    return str(app.screen.query_one(f"#procedure-line-{i}", Static).render())


async def test_right_after_start_the_shipped_mix_models_procedure_view_opens_already_scored():
    """F9 as the app starts opens the shipped mix model's saved snapshots at once, every step's scores there
    before anything is replayed; its last step's probes then play through the engine."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(app.screen, ProcedureView)
        run = app.screen.run
        assert run.key == "shipped:mix_35_35" and run.saved and run.kept == SHIPPED_STEPS
        assert sorted(run.scores) == SHIPPED_STEPS and run.scores[400]["add_2x2"].percent() == "100%"
        status = str(app.screen.query_one("#procedure-status", Static).render())
        assert "step 400 of 400" in status and "scores come" not in status
        assert "100%" in _line(app, "add_2x2")
        await wait_for(pilot, lambda: "✓" in _line(app, "add_2x2"), what="the last step's two-digit probe")
        await pilot.press("home")
        await wait_for(pilot, lambda: "✗" in _line(app, "add_2x2"), what="step 0's probe")
        assert "step 0 of 400" in str(app.screen.query_one("#procedure-status", Static).render())


async def test_the_procedure_view_shows_the_models_own_families_and_one_held_out_and_a_shows_all():
    """By default the mix model's two families and the first it never trained on; `a` shows and replays all ten,
    `a` again goes back to three."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f9")
        await pilot.pause()
        assert _shown(app) == ["add_2x2", "add_3x1", "add_2x1"]
        lines = [app.screen.query_one(f"#procedure-line-{i}", Static) for i in range(len(REGISTERED))]
        assert [line.display for line in lines] == [True, True, True] + [False] * (len(REGISTERED) - 3)
        await wait_for(pilot, lambda: all(line.verdict for line in app.screen.lines[:3]), what="three replays")
        assert all(line.probe == 0 for line in app.screen.lines[3:])  # hidden lines are not played
        await pilot.press("a")
        assert _shown(app) == list(REGISTERED) and all(line.display for line in lines)
        await wait_for(pilot, lambda: all(line.verdict for line in app.screen.lines), what="every family's replay")
        await pilot.press("a")
        assert _shown(app) == ["add_2x2", "add_3x1", "add_2x1"]


async def test_a_single_family_models_held_out_family_is_the_other_plate_family():
    """On the shipped two-digit model the procedure view shows two-digit sums and, held out, three single digits."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.catalogue.switch_to("shipped:two_digit_70")
        await pilot.press("f9")
        await pilot.pause()
        assert app.screen.run.key == "shipped:two_digit_70" and _shown(app) == ["add_2x2", "add_3x1"]


async def test_a_bad_snapshot_file_is_one_line_and_no_view(tmp_path):
    """A model whose sidecar is damaged: F9 says so in one warning line and opens nothing; the app goes on."""
    path = tmp_path / "m.safetensors"
    path.write_bytes(PRESETS["mix_35_35"].shipped.read_bytes())
    sidecar_of(path).write_bytes(sidecar_of(PRESETS["mix_35_35"].shipped).read_bytes()[:5000])
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.catalogue.add_loaded_model(ModelEntry.loaded(str(path), read_metadata(path)))
        await pilot.pause()
        await pilot.press("f9")
        await pilot.pause()
        assert not isinstance(app.screen, ProcedureView)
        (note,) = [str(n.message) for n in app._notifications if "snapshots not shown" in str(n.message)]
        assert "truncated" in note and "\n" not in note


async def test_saving_a_copy_of_a_model_copies_its_snapshots_too(tmp_path):
    """Ctrl+S on the shipped mix model writes the checkpoint and, beside it, its snapshots: the copy opens in the
    procedure view with the same steps and scores."""
    target = tmp_path / "mine.safetensors"
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: target.exists() and sidecar_of(target).exists(), timeout=5, what="the copy")
    assert sidecar_of(target).read_bytes() == sidecar_of(PRESETS["mix_35_35"].shipped).read_bytes()
    copy = saved_run("file:mine", "mine", str(target), read_metadata(target))
    assert copy is not None and copy.kept == SHIPPED_STEPS and copy.scores[240]["add_2x2"].solved == 17


class _BusyEngine(FakeEngine):
    """An engine that takes commands but has not played any yet (still importing torch, say)."""

    def send(self, command) -> bool:
        return True if isinstance(command, p.Probe) else super().send(command)


async def test_before_the_engine_plays_the_saved_scores_show_and_each_line_says_it_is_replaying():
    """While the engine has not played the probes yet, the scores are there and each shown line says
    `replaying…` instead of staying blank."""
    app = BreadthApp(engine_factory=_BusyEngine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(app.screen, ProcedureView)
        for family in ("add_2x2", "add_3x1", "add_2x1"):
            line = _line(app, family)
            assert "%" in line and line.endswith("replaying…"), line
