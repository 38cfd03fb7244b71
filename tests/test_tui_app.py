"""The app's frame: fast start without torch, layout at any size, keys, help, switching, saving and loading models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fake_engine import FakeEngine
from textual.widgets import Input
from tui_helpers import fake_app, other_cells, screen_lines, type_text, unfold, wait_for

from breadth.core.storage.presets import PRESETS
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import header
from breadth.tui.app import BreadthApp
from breadth.tui.keys import APP_KEYS
from breadth.tui.parts.engine_watch import STARTING
from breadth.tui.screens.help import HelpScreen
from breadth.tui.screens.path_prompt import PathPrompt

FIRST_FRAME_PROBE = """
import sys, asyncio
from breadth.tui.app import BreadthApp

async def main():
    app = BreadthApp(start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print("torch" in sys.modules, len(app.entries), app.focused.id)

asyncio.run(main())
"""


def test_the_ui_process_does_not_import_torch_before_its_first_frame():
    """Up to and including the first frame (panels, shipped models' scores), the UI process has no torch."""
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME_PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    torch_loaded, entries, focused = out.stdout.split()
    assert torch_loaded == "False"
    assert int(entries) == 3 and focused == "sum"


class FirstFrame(BreadthApp):
    """The app, keeping the text of its first frame (Textual sends Ready once that frame is on screen)."""

    CSS_PATH = Path(sys.modules[BreadthApp.__module__].__file__).parent / BreadthApp.CSS_PATH  # beside the app
    first_frame: list[str] = []

    def on_ready(self) -> None:
        self.first_frame = screen_lines(self)


async def test_the_first_frame_at_80x24_shows_the_footer_keys_and_that_the_model_is_starting():
    """At 80x24 the very first frame, long before the engine is ready, has the footer's keys and the line saying
    the model is starting, under the sum box where the cursor is (it had neither: the keys came a refresh later,
    the status with the engine's start)."""
    app = FirstFrame(engine_factory=lambda: FakeEngine(ready=False))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.first_frame, what="the first frame")
        frame = app.first_frame
        assert not app.supervisor.ready
        footer = frame[-1]
        for binding in [b for b in APP_KEYS if b.show][:6]:
            assert f"{app.get_key_display(binding)} {binding.description}" in footer, (binding.key, footer)
        assert STARTING in frame[app.query_one("#sum-message").region.y]
        assert STARTING in "\n".join(screen_lines(app))  # and it stays until the engine is ready


async def test_start_shows_three_panels_with_the_shipped_mix_loaded():
    """At start the train, score and playground panels are on screen and the shipped mix model is current:
    its own families with solved/total, every other environment with its percentage."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for panel in (app.train_panel, app.score_panel, app.playground):
            region = panel.region
            assert region.width > 0 and region.height > 0
            assert region.right <= 80 and region.bottom <= 24
        assert app.current == "shipped:mix_35_35"
        shown = str(app.score_panel.query_one("#environment-scores").render())
        scores = app.entries["shipped:mix_35_35"].scores
        assert len(scores) == len(REGISTERED)
        for name, s in scores.items():
            own = name in ("add_2x2", "add_3x1")
            if own:
                assert f"{s.solved}/{s.total}" in shown, f"{name} score not shown"
            else:  # under its matrix column's words (`add 2` over `0-9`)
                assert other_cells(shown)[header(REGISTERED[name])] == f"{100 * s.rate:.0f}", f"{name} score not shown"


async def test_layout_survives_resizing_between_small_and_large_terminals():
    """Resizing from 80x24 to 200x60 and to 60x20 and back keeps every panel and the sum box on screen."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for size in [(200, 60), (60, 20), (120, 40), (80, 24)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            box = app.query_one("#sum", Input)
            assert box.region.height >= 1 and box.region.bottom <= size[1], f"sum box off screen at {size}"
            for panel in (app.train_panel, app.score_panel, app.playground):
                assert panel.region.right <= size[0] and panel.region.bottom <= size[1]


async def test_help_opens_with_f1_and_closes_with_escape():
    """F1 shows the help screen over the app; Escape returns to the sum box."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert app.focused.id == "sum"


async def test_ctrl_n_switches_model_and_the_score_panel_follows():
    """Shift+F9 moves to the next model: the engine is asked to load it and the score panel shows its scores."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        first = app.current
        await pilot.press("f21")
        await pilot.pause()
        assert app.current != first
        loads = [c for c in app.supervisor.engine.sent if type(c).__name__ == "Load"]
        assert loads[-1].key == app.current
        assert app.entries[app.current].title in app.score_panel.heading


async def test_choosing_a_row_in_the_runs_table_switches_model():
    """Enter on a runs-table row makes that model current."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()  # the first layout puts the cursor on the current model: move it after, as a person would
        table = app.score_panel.query_one("#runs")
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current == "shipped:two_digit_70"


async def test_presets_fill_counts_and_hand_edits_switch_to_custom():
    """Choosing a preset fills its counts; editing a count by hand marks the mix as custom."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        select = app.train_panel.query_one("#preset")
        select.value = "two_digit_70"
        await pilot.pause()
        two = app.train_panel.query_one("#count-add_2x2", Input)
        three = app.train_panel.query_one("#count-add_3x1", Input)
        assert (two.value, three.value) == ("70", "0")
        three.value = "5"
        await pilot.pause()
        assert select.value == "custom"
        mix, settings, _ = app.train_panel.request()
        assert dict(mix.counts) == {"add_2x2": 70, "add_3x1": 5} and settings.steps == 400


async def test_bad_training_settings_are_refused_inline():
    """A count over the pool, zero demonstrations or a setting FinetuneSettings refuses give one red line; no job."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        await unfold(pilot, "advanced")  # lr, held-out and dropout are typed there
        for field, value in [
            ("count-add_2x2", "999"),
            ("lr", "fast"),
            ("steps", "0"),
            ("held-out", "0"),
            ("dropout", "0.95"),
        ]:
            original = panel.query_one(f"#{field}", Input).value
            panel.query_one(f"#{field}", Input).value = value
            await pilot.press("f2")
            await pilot.pause()
            assert panel.status_is_error and panel.status, f"{field}={value!r} was accepted"
            assert app.training is None
            panel.query_one(f"#{field}", Input).value = original
        for name in ("add_2x2", "add_3x1"):
            panel.query_one(f"#count-{name}", Input).value = "0"
        await pilot.press("f2")
        await pilot.pause()
        assert panel.status_is_error and app.training is None


async def test_save_copies_the_current_checkpoint_and_refuses_to_overwrite(tmp_path):
    """Ctrl+S writes the loaded model to the path typed; an existing file is refused inline."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        target = tmp_path / "mine.safetensors"
        for attempt in range(2):
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, PathPrompt)
            box = app.screen.query_one("#path", Input)
            box.value = str(target)
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: (
                    not isinstance(app.screen, PathPrompt) or app.screen.query_one("#path-message").has_class("error")
                ),
                timeout=5,
                what="the check",
            )
            if attempt == 0:
                assert not isinstance(app.screen, PathPrompt)
                assert target.read_bytes() == Path(PRESETS["mix_35_35"].shipped).read_bytes()
            else:
                assert isinstance(app.screen, PathPrompt)
                assert "exists" in str(app.screen.query_one("#path-message").render())
                await pilot.press("escape")


async def test_load_refuses_a_bad_file_inline_and_adds_a_good_one(tmp_path):
    """Ctrl+O with a corrupt file says why in the prompt; a valid checkpoint becomes a new current row."""
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint at all")
    good = tmp_path / "good.safetensors"
    good.write_bytes(Path(PRESETS["two_digit_70"].shipped).read_bytes())
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+o")
        await pilot.pause()
        box = app.screen.query_one("#path", Input)
        box.value = str(bad)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.screen.query_one("#path-message").has_class("error"), timeout=5, what="the check"
        )
        assert isinstance(app.screen, PathPrompt)
        assert "bad.safetensors" in str(app.screen.query_one("#path-message").render())
        box.value = str(good)
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, PathPrompt), timeout=5, what="the load")
        assert app.entries[app.current].origin == "loaded"
        assert len(app.score_panel.query_one("#runs").rows) == 4


async def test_typing_while_a_modal_is_open_then_playing_still_works():
    """After closing help, typing a sum and Enter plays it (focus returns to the sum box): `4+5` is the one probe,
    played to its verdict, and the verdict is on screen."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.press("escape")
        app.playground.pace = 0
        await type_text(pilot, "4+5")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the probe")
        (view,) = app.playground.probes.values()
        assert view.state.problem.prompt == "4+5=" and "correct" in view.state.verdict.plain
        await pilot.pause()
        assert any(view.state.verdict.plain in line for line in screen_lines(app)), screen_lines(app)


async def test_the_mouse_works_too():
    """Clicking Train starts a job, clicking Stop asks the engine to stop, clicking a runs row switches model."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.click("#train")
        await pilot.pause()
        trains = [c for c in app.supervisor.engine.sent if type(c).__name__ == "Train"]
        assert len(trains) == 1 and trains[0].mix == "add_2x2=35,add_3x1=35"
        await pilot.click("#stop")
        await wait_for(pilot, lambda: app.training is None, what="the stop")
        assert any(type(c).__name__ == "Stop" for c in app.supervisor.engine.sent)
        table = app.score_panel.query_one("#runs")
        await pilot.click("#runs", offset=(5, 3))  # the header is rows 0 and 1: this is the second model
        await pilot.click("#runs", offset=(5, 3))  # a second click on the cursor row selects it
        await pilot.pause()
        assert app.current == list(app.entries)[table.cursor_row]
        assert app.current == "shipped:three_digit_70"


async def test_a_wedged_engine_is_killed_after_the_stop_grace_and_replaced(monkeypatch):
    """If the engine never confirms a Stop, the app kills it, says so, and starts a fresh engine."""
    monkeypatch.setattr("breadth.tui.supervisor.STOP_GRACE", 0.2)
    app = fake_app(answers_stop=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        first = app.supervisor.engine
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.supervisor.engine is not first, timeout=5, what="a new engine")
        assert app.training is None
        assert app.train_panel.status_is_error and "restarted" in app.train_panel.status
        assert not first.alive()


def test_runs_of_one_mix_on_several_seeds_get_a_mean_and_spread():
    """Seeds of one mix and settings give a mean and 95% interval line; other settings or one seed give none."""
    from breadth.core.world.runs.records import RunMeta
    from breadth.tui.catalog import ModelEntry
    from breadth.tui.widgets.score_lines import across_seeds

    def entry(seed, two, three, lr=0.002):
        meta = {
            "mix": "add_2x2=35,add_3x1=35",
            "seed": seed,
            "held_out": 30,
            "settings": {"seed": seed, "lr": lr, "steps": 400},
            "scores": {"add_2x2": {"solved": two, "total": 30}, "add_3x1": {"solved": three, "total": 30}},
        }
        return ModelEntry(f"k{seed}{lr}", "t", "/p", RunMeta.from_dict(meta), "trained")

    assert across_seeds([entry(0, 20, 28)]).plain == ""
    assert across_seeds([entry(0, 20, 28), entry(1, 30, 30, lr=0.001)]).plain == ""
    line = across_seeds([entry(0, 21, 27), entry(1, 27, 30)]).plain
    assert "×2" in line and "two-digit 80 [0-100]" in line and "3 singles 95 [31-100]" in line  # t(1): two seeds wide
    four = [entry(s, 21 + s, 27) for s in range(4)] + [entry(9, 3, 3, lr=0.001), entry(8, 3, 3, lr=0.001)]
    line = across_seeds(four, current=four[0]).plain  # only the current model's group
    assert line.startswith("mix 35+35 ×4: two-digit 75 [68-82] 3 singles 90 [90-90]") and "\n" not in line
    coded = across_seeds(four, current=four[0], codes=True).plain  # Shift+F5: the codes
    assert coded.startswith("a2x2 35+a3x1 35 ×4: a2x2 75 [68-82] a3x1 90 [90-90]")


async def test_an_engine_that_keeps_dying_is_restarted_three_times_then_left_dead():
    """Within the restart window the engine is replaced three times; the fourth death is reported, not restarted."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.engine is not None, what="the engine")
        for _ in range(3):
            dying = app.supervisor.engine
            dying.kill()
            await wait_for(pilot, lambda dying=dying: app.supervisor.engine is not dying, what="a new engine")
        last = app.supervisor.engine
        last.kill()
        await wait_for(
            pilot, lambda: app.engine_status == "engine keeps failing: restart breadth-tui", what="giving up"
        )
        assert app.supervisor.engine is last and not last.alive()


async def test_the_step_line_follows_a_burst_of_steps_to_the_latest_without_a_redraw_per_step():
    """200 steps arriving at once redraw the step line a few times, not 200 (a redraw per step cost the app a
    quarter of a core beside the engine), and within a moment it shows the latest step, never an older one."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel, shown = app.train_panel, []
        show = panel.show
        panel.show = lambda text: (shown.append(text), show(text))[1]
        for step in range(1, 201):
            panel.step(step, 400, 1.0, step * 0.01)
        assert 1 <= len(shown) <= 3, shown
        await wait_for(pilot, lambda: panel.status.startswith("200/400 "), timeout=5, what="the latest step's line")
        assert len(shown) <= 4
        panel.step(400, 400, 0.5, 4.0)  # the last step shows at once
        assert panel.status.startswith("400/400 ")
