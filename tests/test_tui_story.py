"""Story mode (`breadth-tui --demo`): PageDown walks acts and probes, each with its caption, views and lies; the
engine's start, the story's end and its start are said, never lost or replayed."""

from __future__ import annotations

import re
import time

from fake_engine import FakeEngine
from textual.widgets import Input, Static
from tui_helpers import wait_for

from breadth.core.engine import protocol as p
from breadth.tui import messages as m
from breadth.tui.app import BreadthApp
from breadth.tui.parts import demo
from breadth.tui.screens import curve_store
from breadth.tui.screens.curve_view import CurvePlot, CurveView
from breadth.tui.screens.procedure_view import ProcedureView
from breadth.tui.story import Act, Probe, Story, default_story, read_story
from breadth.tui.widgets.caption import Caption
from breadth.tui.widgets.playground import AUDIENCE

LONG = "a caption longer than both of the caption's lines hold at eighty columns, " * 4


def _message(app) -> str:
    return str(app.playground.query_one("#sum-message", Static).render())


def _head(app) -> str:
    return str(app.playground.query_one("#race-head", Static).render())


def _caption(app) -> str:
    return app.screen.query_one(Caption).plain()


def _status(app) -> str:
    """The curve view's line over its chart: which curve it shows."""
    return str(app.screen.query_one("#curve-status", Static).render())


async def _step(pilot, key: str = "pagedown") -> None:
    """Press `key` and let a race it starts finish (the pace is instant in these tests)."""
    await pilot.press(key)
    await pilot.pause()
    await wait_for(pilot, lambda: not pilot.app.playground.busy(), what="the race")


async def test_the_finale_never_shows_the_act_befores_curve_under_its_caption_and_opens_in_bounded_time(monkeypatch):
    """PageDown from the first curve act to the next (acts 6 and 7, the shipped store read afresh): at no frame does
    the second act's caption sit over the first act's curve, its rows or its status (the view clears at once), the
    second act's curve shows within 10 s, and neither act numbers its curve among the store's ("curve 1 of 7")."""
    monkeypatch.setattr(curve_store, "_SHIPPED", {}, raising=False)  # this process has read no shipped curve yet
    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    frames: list[tuple[str, str, list, object]] = []  # (caption, status, curve points, rows) as each frame is drawn
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        draw = app._display

        def display(screen, renderable) -> None:
            if isinstance(screen, CurveView) and screen.query(Caption):
                rows = screen.query_one("#curve-rows", Static).content
                frames.append((_caption(app), _status(app), list(screen.query_one(CurvePlot).found), rows))
            draw(screen, renderable)

        app._display = display
        while not isinstance(app.screen, CurveView):
            await _step(pilot)
        await wait_for(pilot, lambda: app.screen.query(Caption), what="the caption on the curve")
        first = _caption(app).split(":")[0]  # `act 6 of 7`
        await wait_for(pilot, lambda: "2 numbers ·" in _status(app), what="the first curve act's curve")
        before, before_rows = list(app.screen.query_one(CurvePlot).found), app.screen.query_one("#curve-rows").content
        start = time.monotonic()
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: "3 numbers ·" in _status(app), timeout=10, what="the next act's curve")
        took = time.monotonic() - start
        await pilot.pause()
        second = _caption(app).split(":")[0]
        print(f"\n{first} -> {second}: its curve shown after {took:.2f} s")
        assert second != first and isinstance(app.screen, CurveView)
        under_second = [f for f in frames if f[0].startswith(second + ":")]
        assert under_second, "no frame drawn under the second act's caption"
        for caption, status, found, rows in under_second:
            assert "2 numbers" not in status and found != before and rows is not before_rows, (caption, status)
        assert [f for f in frames if f[0].startswith(first + ":")]  # the first act's frames were seen too
        assert not any(re.search(r"curve \d+ of \d+", status) for _, status, _, _ in frames)


async def test_pagedown_before_the_engine_is_ready_keeps_the_probe_named_and_plays_it_once_ready():
    """Stepped to while torch loads, the probe waits, named under the sum box; once the engine is ready it races
    and its line stays. Several presses meanwhile play only the last probe stepped to."""
    story = Story((Act(probes=(Probe("23+45"), Probe("3+4+5"))),))
    app = BreadthApp(engine_factory=lambda: FakeEngine(ready=False), demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.playground.pace = 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert (
            "probe 1 of 2: 23+45 · waits for the model to start" in _message(app) and not app.playground.race.by_probe
        )
        await pilot.press("pagedown")
        await pilot.pause()
        assert "probe 2 of 2: 3+4+5 · waits for the model to start" in _message(app)
        app.post_message(m.FromEngine(p.Ready(1.0)))
        await wait_for(pilot, lambda: "race 3+4+5" in _head(app), what="the waiting probe's race")
        await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
        assert "probe 2 of 2: 3+4+5 · PageDown next" in _message(app)
        assert len(app.playground.race.by_probe) == 3  # one race only: the first press's probe never played


async def test_the_story_says_where_it_starts_and_ends_and_never_replays_a_probe_at_either_end():
    """PageUp before the first step says the story's start; PageDown after the last says its end; neither plays."""
    app = BreadthApp(engine_factory=FakeEngine, demo=Story((Act(probes=(Probe("23+45"),)),)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot, "pageup")
        assert "the start of the story" in _message(app) and not app.playground.race.by_probe
        await _step(pilot)
        played = dict(app.playground.race.by_probe)
        await _step(pilot)
        assert "end of the story" in _message(app) and _caption(app) == "end of the story"
        assert app.playground.race.by_probe == played  # the last probe was not raced again


async def test_a_two_line_caption_leaves_every_lane_on_screen_at_80x24_and_120x40():
    """With a caption longer than its two lines (cut with `…`), the three lanes and the sum box stay on screen."""
    story = Story((Act("A title", LONG, probes=(Probe("23+45", LONG),)),))
    for size in ((80, 24), (120, 40)):
        app = BreadthApp(engine_factory=FakeEngine, demo=story)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: pilot.app.supervisor.ready, what="the engine")
            app.playground.pace = 0
            await _step(pilot)
            await _step(pilot)
            caption = app.query_one(Caption)
            assert caption.display and caption.region.height == 2, size
            assert str(caption.render()).endswith("…"), size  # cut at two lines, and seen to be
            lanes = app.playground.query_one("#lanes")
            for lane in app.playground.race.views():
                assert lanes.region.contains_region(lane.region), (size, lane.region, lanes.region)
            screen = app.screen.region
            assert screen.contains_region(app.playground.query_one("#sum").region), size
            assert not caption.region.overlaps(app.playground.region), size


async def test_outside_demo_mode_pageup_and_pagedown_are_left_to_the_focused_widget():
    """The story's keys are the app's only in demo mode (elsewhere they scroll what has the focus); no caption."""
    app = BreadthApp(engine_factory=FakeEngine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.check_action("demo_step", (1,)) is False and not app.query_one(Caption).display
    demo = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    async with demo.run_test(size=(80, 24)) as pilot:
        assert demo.check_action("demo_step", (1,)) is True


async def test_a_failure_kind_is_said_in_plain_words_the_first_time_it_ends_a_lane_and_never_again():
    """A talk's first `no call` verdict is explained under the sum box; the next race's is not; a kind the caption
    already quotes is not repeated under it."""

    def answers_without_calling(operands: tuple[int, ...]) -> str:
        return f"{sum(operands) + 1}|"  # a wrong answer, and no call

    story = Story((Act(probes=(Probe("23+45"), Probe("3+4+5"))),))
    app = BreadthApp(engine_factory=lambda: FakeEngine(answers_without_calling), demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot)
        assert _message(app) == 'probe 1 of 2 · "no call": it answered without the calculator'  # place, then words
        await _step(pilot)
        assert "probe 2 of 2: 3+4+5 · PageDown next" in _message(app)
    quoted = Story((Act(probes=(Probe("23+45", '"no call": it answered without asking the calculator'),)),))
    app = BreadthApp(engine_factory=lambda: FakeEngine(answers_without_calling), demo=quoted)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: pilot.app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot)
        assert "probe 1 of 1: 23+45 · PageDown next" in _message(app)


async def test_a_failure_kinds_plain_words_keep_the_storys_place_beside_them_at_80x24():
    """At a probe of a titled story, the line under the sum box says the act and probe, then the failure kind in
    plain words, all of it on screen at 80 columns (it used to replace the place with the words)."""

    def answers_without_calling(operands: tuple[int, ...]) -> str:
        return f"{sum(operands) + 1}|"

    story = read_story("# act: Race\n# say: three models\n23+45\n3+4+5\n# act: Two\n1+2\n")
    app = BreadthApp(engine_factory=lambda: FakeEngine(answers_without_calling), demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot)
        await _step(pilot)
        line = 'act 1 · probe 1 of 2 · "no call": it answered without the calculator'
        assert _message(app) == line
        message = app.playground.query_one("#sum-message", Static)
        assert message.content_region.width >= len(line)  # nothing of it cut at 80 columns


async def test_a_moment_of_the_procedure_act_shows_its_snapshot_going_back_and_forth():
    """A procedure act opens on its first moment's snapshot; PageUp from the next act comes back to its last
    moment's, with that moment's caption."""
    story = read_story(
        "# act: forming\n# view: procedure\n# say: the run\n# step: 80\n# say: calls\n# step: 320\n# say: solved\n"
        "# act: after\n# say: the end\n"
    )
    app = BreadthApp(engine_factory=FakeEngine, demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        await _step(pilot)
        assert isinstance(app.screen, ProcedureView)
        await wait_for(pilot, lambda: app.screen.step == 80, what="the first moment's snapshot")
        for _ in range(3):
            await _step(pilot)
        assert _caption(app).startswith("act 2 of 2: after")
        await _step(pilot, "pageup")
        assert isinstance(app.screen, ProcedureView)
        await wait_for(pilot, lambda: app.screen.step == 320, what="the last moment's snapshot")
        await wait_for(pilot, lambda: app.screen.query(Caption), what="the caption on the procedure view")
        assert _caption(app) == "act 1 of 2: forming  solved"


async def test_an_act_opened_while_the_engine_loads_stays_named_once_it_is_ready():
    """The engine's readiness clears the line under the sum box; the story's place is said again, not lost."""
    story = Story((Act("The race", "three models", probes=(Probe("23+45"),)),))
    app = BreadthApp(engine_factory=lambda: FakeEngine(ready=False), demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("pagedown")
        await pilot.pause()
        assert "act 1 of 1: The race · PageDown next" in _message(app)
        app.post_message(m.FromEngine(p.Ready(1.0)))
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        await pilot.pause()
        assert "act 1 of 1: The race · PageDown next" in _message(app)


async def test_an_act_whose_view_does_not_open_is_stepped_over_both_ways(monkeypatch):
    """A view with nothing to show (it does not open) is skipped going forward and back; its act is never shown."""
    monkeypatch.setitem(demo.VIEWS, "procedure", demo.View(ProcedureView, lambda app: None))
    story = Story((Act("one", probes=(Probe("23+45"),)), Act("watch", view="procedure"), Act("two", "the end")))
    app = BreadthApp(engine_factory=FakeEngine, demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        for _ in range(3):
            await _step(pilot)
        assert _caption(app).startswith("act 3 of 3: two") and app.screen is app.screen_stack[0]
        await _step(pilot, "pageup")
        assert "act 1 of 3 · probe 1 of 1: 23+45" in _message(app)


def test_snapshot_story_caption_at_80x24(snap_compare):
    """The default story's first probe at 80x24: the race, the line under the sum box, the two-line caption."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for box in app.query(Input):
            box.cursor_blink = False
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot)
        await _step(pilot)
        app.playground.pace = AUDIENCE
        await pilot.pause()

    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_an_act_that_lies_with_a_number_sets_it_and_the_next_act_makes_the_calculator_honest_again():
    """`# lie: 7`: the calculator always answers 7 for the act's probes (named beside the legend); the next act's
    probes are played honestly; the sum box keeps the focus (a clicker never types into the lie's box)."""
    story = read_story("# act: seven\n# lie: 7\n23+45\n# act: truth\n23+45\n")
    app = BreadthApp(engine_factory=FakeEngine, demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await _step(pilot)
        await _step(pilot)
        assert app.playground.lie_spec() == "7" and app.playground.tool_name() == "lies: always 7"
        assert app.focused.id == "sum"
        await _step(pilot)
        assert app.playground.lie_spec() == ""


async def test_a_caption_is_shown_as_written_never_as_markup_or_terminal_escapes():
    """A probes file's caption holding Textual markup and an escape sequence shows the markup as text and the
    escape written out (a typo or a hostile file never styles the screen or reaches the terminal)."""
    story = read_story("# act: [b]bold[/b]\n# say: [red]x[/red] \x1b[31mred\n23+45\n")
    app = BreadthApp(engine_factory=FakeEngine, demo=story)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        await _step(pilot)
        shown = str(app.query_one(Caption).render())
        assert "[b]bold[/b]" in shown and "[red]x[/red]" in shown and "\x1b" not in shown
