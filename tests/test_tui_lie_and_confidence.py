"""The lying calculator (F7) and confidence shading (F6) in the playground, through the engine protocol."""

from __future__ import annotations

from textual.widgets import Input, Static
from tui_helpers import fake_app, type_text, wait_for

from breadth.tui.widgets.race import LIE_STYLE, shade, verdict_text


def _tool(app) -> str:
    return str(app.playground.query_one("#tool", Static).render())


def _styled(view, style: str) -> bool:
    """True if some run of the probe's line is drawn in `style` (as given to rich)."""
    return any(style in str(span.style) for span in view.content.spans)


async def _play(pilot, text: str):
    app = pilot.app
    app.playground.pace = 0  # instant
    before = set(app.playground.probes)
    app.playground.focus_sum()
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: set(app.playground.probes) - before and not app.playground.busy(), what="the probe")
    return app.playground.probes[max(app.playground.probes)]


async def test_an_off_by_one_calculator_marks_its_results_and_the_verdict_says_the_model_ignored_it():
    """F7: the calculator adds one to every result; its characters are marked as lies, the engine got the lie,
    and a model that works the sum out itself gets `true result: ignored the lie`."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f7")
        assert "lies +1" in _tool(app)
        view = await _play(pilot, "23+45")
        told = [c for c in view.state.shown if c.role == "environment"]
        assert "".join(c.char for c in told) == "69|" and all(c.lied for c in told)
        assert "ignored the lie" in view.state.verdict.plain
        assert _styled(view, LIE_STYLE)
        sent = [c for c in app.supervisor.engine.sent if type(c).__name__ == "Probe"]
        assert sent[-1].lie == "off by one"


async def test_the_third_lie_is_a_number_typed_inline_and_a_fourth_press_is_honest_again():
    """F7 twice opens an inline box for the number the calculator always answers (no modal); Enter sets it
    and returns to the sum box; F7 again makes the calculator honest."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f7", "f7")
        box, row = app.playground.query_one("#lie-value", Input), app.playground.query_one("#lie-row")
        assert app.focused is box and row.display
        box.value = ""
        await type_text(pilot, "5")
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused.id == "sum" and "lies =5" in _tool(app)
        view = await _play(pilot, "3+4")
        assert "".join(c.char for c in view.state.shown if c.role == "environment") == "5|"
        await pilot.press("f7")
        assert "honest" in _tool(app) and not row.display
        honest = await _play(pilot, "3+4")
        assert not any(c.lied for c in honest.state.shown) and "correct" in honest.state.verdict.plain


async def test_shading_picks_the_least_sure_character_and_shows_its_alternatives():
    """F6 shades the model's characters by probability; after a probe the least sure one is picked and the line
    above the legend gives its probability and alternatives; Alt+Right picks the next character of the model's."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f6")
        view = await _play(pilot, "23+45")
        picked = view.state.shown[view.picked]
        assert picked.role == "action" and picked.p == 0.55  # the scripted model is least sure after a `|`
        line = str(app.playground.query_one("#alternatives", Static).render())
        assert f"{picked.char!r} at 55%" in line and "instead: " in line and "2%" in line
        assert _styled(view, shade(0.55))
        first = view.picked
        await pilot.press("alt+right")
        assert view.picked > first and view.state.shown[view.picked].role == "action"
        await pilot.press("f6")
        assert not app.playground.query_one("#alternatives", Static).display


def test_snapshot_lie_and_shading(snap_compare):
    """At 80x24: shading on, an honest probe, then an off-by-one lie with its results in red and the verdict."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for box in app.query(Input):
            box.cursor_blink = False
        await pilot.press("f6")
        await _play(pilot, "23+45")
        await pilot.press("f7")
        await _play(pilot, "3+4+5")
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(fake_app(), terminal_size=(80, 24), run_before=run_before)


def test_a_copied_lie_after_calls_the_procedure_does_not_make_says_both():
    """Under a lie, a lane that copied the tool's reply after the right calls says the copy; one that copied after
    the wrong calls says the procedure's failure and the copy (it used to say the copy alone)."""
    assert verdict_text(False, "answer differs from tool", copied=True).plain == "✗ copied the tool's lie"
    both = verdict_text(False, "wrong number of calls", copied=True).plain
    assert both == "✗ wrong number of calls, and copied the tool's lie"
    assert verdict_text(True, None, copied=False).plain == "✓ true result: ignored the lie"
