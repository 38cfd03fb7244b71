"""Demo mode (`breadth-tui --demo`): the shipped models race at the audience pace and PageDown steps through probes."""

from __future__ import annotations

from fake_engine import FakeEngine
from textual.widgets import Input, Static
from tui_helpers import wait_for

from breadth.tui.app import BreadthApp
from breadth.tui.story import Act, Probe, Story
from breadth.tui.widgets.playground import AUDIENCE, PACES


def demo_app(probes: list[str], skipped: list[str] = ()) -> BreadthApp:
    """The app in demo mode on the scripted engine, telling a story of one untitled act (a plain probes file)."""
    return BreadthApp(engine_factory=FakeEngine, demo=Story((Act(probes=tuple(map(Probe, probes))),), tuple(skipped)))


def _message(app) -> str:
    return str(app.playground.query_one("#sum-message", Static).render())


async def test_demo_mode_races_the_shipped_models_and_pagedown_steps_through_the_probes():
    """At start: racing, the audience pace, three lanes; PageDown plays the first probe, again the second, PageUp
    goes back; the playground names which probe of how many; past the last, the story's end is said; Up recalls
    the probes like typed sums."""
    app = demo_app(["23+45", "3+4+5"])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.playground.racing and PACES[app.playground.pace][0] == "audience" == PACES[AUDIENCE][0]
        assert len(app.playground.race.views()) == 3 and "PageDown next" in _message(app)
        app.playground.pace = 0  # instant, for the test
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: not app.playground.busy() and app.playground.race.by_probe, what="the race")
        assert "probe 1 of 2: 23+45" in _message(app)
        assert "23+45" in str(app.playground.query_one("#race-head", Static).render())
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: "3+4+5" in str(app.playground.query_one("#race-head", Static).render()))
        await pilot.press("pagedown")  # past the last: the story says it has ended
        await pilot.pause()
        assert "end of the story" in _message(app)
        await pilot.press("pageup")  # back to the last probe
        await wait_for(pilot, lambda: "probe 2 of 2" in _message(app), what="the last probe again")
        await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
        await pilot.press("pageup")
        await wait_for(pilot, lambda: "probe 1 of 2" in _message(app), what="the first probe again")
        await pilot.press("up")
        assert app.playground.query_one("#sum").value == "23+45"


async def test_lines_skipped_from_the_probes_file_are_named_inline_and_nothing_blocks():
    """A probes file's bad lines are named under the sum box (no modal); the app takes keys at once."""
    app = demo_app(["23+45"], ["line 2: 'abc' is not a sum"])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "skipped line 2: 'abc' is not a sum" in _message(app)
        assert app.screen is app.screen_stack[0] and app.focused.id == "sum"


async def test_pagedown_outside_demo_mode_does_nothing():
    """Without --demo, PageDown plays nothing."""
    app = BreadthApp(engine_factory=FakeEngine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("pagedown")
        await pilot.pause()
        assert not app.playground.probes and not app.playground.race.by_probe


def test_snapshot_demo_mode(snap_compare):
    """Demo mode at 80x24 after the second probe: three lanes at the audience pace, the probe counter."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for box in app.query(Input):
            box.cursor_blink = False
        await pilot.pause()
        app.playground.pace = 0
        for _ in range(2):
            await pilot.press("pagedown")
            await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
        app.playground.pace = AUDIENCE
        await pilot.pause()

    assert snap_compare(demo_app(["23+45", "45+91", "3+4+5"]), terminal_size=(80, 24), run_before=run_before)
