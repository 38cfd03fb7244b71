"""A stage the speaker can trust: keys that leave the sum box its editing keys, the stage layout at 80x24 with every
lane in view, focus back in the sum box after training, plain notes that hide neither the sum box nor the lanes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rich.style import Style
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

sys.path.insert(0, str(Path(__file__).parent))
from fake_engine import FakeEngine  # noqa: E402
from tui_helpers import fake_app, screen_lines, type_text, wait_for  # noqa: E402

from breadth.tui.app import BreadthApp  # noqa: E402
from breadth.tui.screens.help import app_bindings  # noqa: E402
from breadth.tui.story import default_story  # noqa: E402
from breadth.tui.widgets.race import SHADES, LaneView  # noqa: E402

READLINE = {f"ctrl+{c}" for c in "abdefhklnprtuwxy"} | {"ctrl+underscore"}  # readline's editing and history keys


def _keys(app_type=BreadthApp) -> set[str]:
    return {key.strip() for b in app_bindings(app_type) if not b.system for key in b.key.split(",")}


def _small(app) -> None:
    """A four-step run on three held-out sums: training ends within a second on the fake engine."""
    app.train_panel.query_one("#steps", Input).value = "4"
    app.train_panel.set_value("held-out", "3")


def test_no_app_key_is_an_editing_key_of_the_sum_box_or_of_readline():
    """No app binding is a key Textual's Input binds (Ctrl+W, Ctrl+K, Ctrl+D, Ctrl+X...) or one readline edits with;
    Shift+Left/Right pick a character only while shading (the app checks), the box's selection keys otherwise."""
    box = {key.strip() for b in Input.BINDINGS for key in b.key.split(",")}
    assert _keys() & box == {"shift+left", "shift+right"}
    assert not _keys() & READLINE, _keys() & READLINE


async def test_readline_keys_edit_the_sum_box_and_start_nothing():
    """In the sum box, Ctrl+A then Ctrl+K empties the line, Ctrl+W deletes a word, Ctrl+T trains nothing."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        box = app.query_one("#sum", Input)
        await type_text(pilot, "23+45")
        await pilot.press("ctrl+a", "ctrl+k")
        assert box.value == ""
        await type_text(pilot, "12 34")
        await pilot.press("ctrl+w")
        assert box.value == "12 "
        await pilot.press("shift+left")
        assert box.selection.start != box.selection.end  # not shading: Shift+Left selects in the box
        await pilot.press("ctrl+t", "ctrl+r", "ctrl+d", "ctrl+x")
        await pilot.pause()
        assert app.training_jobs.job == 0 and not app.playground.racing and app.focused is box


async def test_ctrl_c_says_how_to_quit_in_plain_words():
    """Ctrl+C away from a text box says `press Ctrl+Q`, with no markup left in the text (it showed `[b]ctrl+q[/b]`)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.set_focus(None)
        await pilot.press("ctrl+c")
        await pilot.pause()
        (note,) = [n.message for n in app._notifications]
        assert "Ctrl+Q" in note and "[" not in note and "\\" not in note


async def test_focus_returns_to_the_sum_box_when_training_ends():
    """Train clicked, then done: the sum box has the focus again, so a typed sum is played (it was stranded on the
    preset list)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        _small(app)
        await pilot.click("#train")
        await wait_for(pilot, lambda: app.training_jobs.job == 1 and app.training is None, what="training to end")
        await pilot.pause()
        assert app.focused is app.query_one("#sum", Input)


async def test_focus_the_user_moved_during_training_stays_where_it_was_put(monkeypatch):
    """A user who moved to the runs table while a model trained keeps it there when training ends."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        _small(app)
        app.train_panel.query_one("#steps", Input).value = "400"  # 20 s at the fake's pace: time to move focus
        await pilot.click("#train")
        await wait_for(pilot, lambda: app.training_jobs.job == 1, what="training to start")
        table = app.score_panel.query_one("#runs")
        table.focus()
        monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)  # focus moved: the steps left run at once
        await wait_for(pilot, lambda: app.training is None, what="training to end")
        await pilot.pause()
        assert app.focused is table


async def test_focus_returns_after_stop_too():
    """Train clicked, then F3: once stopped, the sum box has the focus."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click("#train")
        await wait_for(pilot, lambda: app.training is not None, what="training to start")
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, what="training to stop")
        await pilot.pause()
        assert "stopped" in app.train_panel.status and app.focused is app.query_one("#sum", Input)


async def test_the_score_panel_says_whose_scores_show_while_a_model_trains():
    """While training, the score panel's border says the scores are the playing model's; after, it says nothing."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.training is not None, what="training to start")
        assert "training" in str(app.score_panel.border_subtitle) and "playing" in str(app.score_panel.border_subtitle)
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, what="training to stop")
        assert not app.score_panel.border_subtitle


def _overlaps(a, b) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


async def test_the_trained_note_hides_neither_the_sum_box_nor_the_lanes():
    """`Trained and saved` (one line, the file's name) sits clear of the sum box, in both layouts, racing too."""
    app = fake_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for stage in (False, True):
            app.stage = stage
            await pilot.press("f4") if not app.playground.racing else None
            _small(app)
            await pilot.press("f2")
            job = 1 + stage
            await wait_for(
                pilot, lambda job=job: app.training_jobs.job == job and app.training is None, what="training"
            )
            await wait_for(pilot, lambda: bool(app.screen.query(Toast)), what="the note")
            await pilot.pause()
            sum_box = app.query_one("#sum").region
            for toast in app.screen.query(Toast):
                assert not _overlaps(toast.region, sum_box)
                for lane in app.query(LaneView):
                    assert not _overlaps(toast.region, lane.region), (stage, str(toast.render()))
            app.clear_notifications()
            await pilot.pause()


async def test_shading_has_a_key_in_race_mode_and_shift_arrows_pick():
    """F6 shades in race mode; Shift+Right moves the picked character, Shift+Down the lane (Alt+arrows too)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.playground.pace = 0
        await pilot.press("f4")
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
        await pilot.press("f6")
        await pilot.pause()
        assert app.playground.shaded
        view = app.playground._focus_view()
        before = view.picked
        await pilot.press("shift+left")
        assert view.picked != before
        await pilot.press("shift+down")
        assert app.playground.lane_picked == 1


def test_shades_differ_without_colour():
    """Each shading level has its own text attributes, so a monochrome projector still tells them apart."""
    attributes = set()
    for _, style in SHADES:
        s = Style.parse(style)
        attributes.add((s.italic, s.underline, s.reverse))
    assert len(attributes) == len(SHADES)


async def test_the_footer_shows_its_keys_whole_at_80x24():
    """Every key the footer shows fits in 80 columns, named as the help names it (`F2`, not `^t`)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        keys = list(app.screen.query(FooterKey))
        assert len(keys) >= 8
        assert all(k.region.right <= 80 and k.region.width > 0 for k in keys)
        shown = " ".join(str(k.render()) for k in keys)
        assert re.search(r"F2 Train", shown) and "^" not in shown


async def _four_lanes(pilot, app, race_key: bool = True) -> None:
    """Train a fourth model (it joins the race), race 3+4+5 at the instant pace, shade (F4 first unless racing)."""
    app.playground.pace = 0
    if race_key:
        await pilot.press("f4")
    _small(app)
    await pilot.press("f2")
    await wait_for(pilot, lambda: app.current.startswith("run:"), what="training")
    app.clear_notifications()
    await type_text(pilot, "3+4+5")
    await pilot.press("enter")
    await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
    await pilot.press("f6")
    await pilot.pause()


async def test_the_stage_layout_shows_every_lane_and_its_prompt_at_80x24():
    """F5 at 80x24 with four lanes and shading on: panels hidden, every lane whole on screen with the prompt in it
    and the model just trained among them; F5 again brings the panels back."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _four_lanes(pilot, app)
        await pilot.press("f5")
        await pilot.pause()
        assert app.stage and app.query_one("#top").region.height == 0
        views = list(app.query(LaneView))
        assert len(views) == 4 and app.current in [v.state.key for v in views]
        race = app.query_one("#lanes").region
        for view in views:
            assert view.region.height >= 3 and view.region.bottom <= race.bottom and view.region.bottom <= 23
            assert "3+4+5=" in str(view.render())
        assert app.query_one("#sum").region.bottom <= 23
        assert app.playground.region.bottom == 23  # the whole screen but the footer
        await pilot.press("f5")
        await pilot.pause()
        assert not app.stage and app.query_one("#top").region.height > 0


async def test_the_normal_layout_keeps_all_four_lanes_in_view_at_80x24():
    """Racing four models with shading on at 80x24, without the stage layout: every lane is on screen (the model just
    trained fell below the fold)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _four_lanes(pilot, app)
        lanes = app.query_one("#lanes").region
        views = list(app.query(LaneView))
        assert len(views) == 4
        assert all(v.region.height >= 1 and v.region.bottom <= lanes.bottom for v in views)


async def test_demo_mode_starts_in_the_stage_layout():
    """`breadth-tui --demo` opens on the stage layout (panels hidden); F5 brings the panels back."""
    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.stage and app.query_one("#top").region.height == 0
        await pilot.press("f5")
        await pilot.pause()
        assert not app.stage and app.query_one("#top").region.height > 0


async def test_the_stage_layout_starts_at_the_top_row_at_80x24_with_f5_and_in_story_mode():
    """On stage (F4 then F5, and `--demo` with a caption shown) the playground's border is the screen's first row
    and the race's head line its second: no rows left blank over the stage (two were kept empty for notes)."""
    for demo in (None, default_story()):
        app = BreadthApp(engine_factory=FakeEngine, demo=demo)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda app=app: app.supervisor.ready, what="the engine")
            await pilot.press(*(["pagedown"] if demo else ["f4", "f5"]))  # the race, on stage
            await pilot.pause()
            lines = screen_lines(app)
            assert app.stage and app.playground.region.y == 0, demo
            assert lines[0].startswith("╭─ ") and lines[1].strip().startswith("│ race"), lines[:2]


async def test_the_first_frame_of_story_mode_shows_the_lanes():
    """`breadth-tui --demo`: the first frame drawn already shows each shipped model's lane, titled, on stage (the
    lanes came a few frames later, after an empty playground), while the model is still starting."""
    app = BreadthApp(engine_factory=lambda: FakeEngine(ready=False), demo=default_story())
    frames: list[tuple[int, list[str]]] = []
    draw = app._display

    def display(screen, renderable) -> None:
        frames.append((len(screen.query(LaneView)), [strip.text for strip in screen._compositor.render_strips()]))
        draw(screen, renderable)

    app._display = display
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: frames, what="the first frame")
        lanes, lines = frames[0]
        assert lanes == 3 and app.stage, lines
        shown = "\n".join(lines)
        for view in app.playground.race.views():
            assert f" {view.state.title} " in shown, (view.state.title, shown)
        assert "starting" in shown  # the engine is named as starting meanwhile


class _OwnFigures(Screen):
    """A view with figures of its own on F12."""

    BINDINGS = [Binding("f12", "own_figures", "Figures")]
    pressed = 0

    def action_own_figures(self) -> None:
        type(self).pressed += 1


async def test_a_view_with_its_own_figures_key_gets_f12():
    """F12 over a view that binds it runs the view's figures, not the app's (the matrix's F12 once wrote the
    current model's chart)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(_OwnFigures())
        await pilot.press("f12")
        await pilot.pause()
        assert _OwnFigures.pressed == 1 and not app.figures.saving


async def test_demo_mode_at_80x24_keeps_four_lanes_and_the_caption_in_view():
    """`--demo` at 80x24 with a fourth model trained, shading on and the story's caption shown: every lane, the sum box
    and the caption are on screen, nothing scrolled away."""
    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("pagedown")  # act 1's opening: its caption
        await _four_lanes(pilot, app, race_key=False)
        views = list(app.query(LaneView))
        lanes = app.query_one("#lanes").region
        assert len(views) == 4 and all(v.region.height >= 3 and v.region.bottom <= lanes.bottom for v in views)
        caption = app.query_one("#caption")
        assert caption.region.height >= 1 and caption.region.bottom <= 23
        assert app.query_one("#sum").region.bottom <= caption.region.y
