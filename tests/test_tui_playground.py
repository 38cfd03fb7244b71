"""The playground, driven through Pilot on a scripted engine: typing sums, streaming, verdicts, bad input."""

from __future__ import annotations

import time

from textual.widgets import Input
from tui_helpers import fake_app, type_text, wait_for

from breadth.core.world.environments.environment import REGISTERED
from breadth.tui.widgets.playground import PACES


def _roles_and_text(view) -> list[tuple[str, str]]:
    """The shown characters of a probe merged into (role, text) runs."""
    runs: list[list[str]] = []
    for char in view.state.shown:
        role, ch = char.role, char.char
        if runs and runs[-1][0] == role:
            runs[-1][1] += ch
        else:
            runs.append([role, ch])
    return [tuple(r) for r in runs]


async def _play_one(pilot, text: str):
    """Type `text`, press Enter at the instant pace, and return the finished probe view."""
    app = pilot.app
    app.playground.pace = 0
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the probe")
    return list(app.playground.probes.values())[-1]


async def test_sum_box_has_focus_at_start_and_enter_plays():
    """Typing at once goes to the sum box; Enter plays the sum with the loaded model."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.focused is not None and app.focused.id == "sum"
        app.playground.pace = 0  # instant
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the probe")
        (view,) = app.playground.probes.values()
        assert view.state.problem.operands == (23, 45)


async def test_segments_stream_in_order_with_their_roles():
    """A three-digit probe shows prompt, call, result, call, result, answer, each marked by who wrote it."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _play_one(pilot, "3+4+5")
        assert _roles_and_text(view) == [
            ("prompt", "3+4+5="),
            ("action", "B3+4|"),
            ("environment", "7|"),
            ("action", "B7+5|"),
            ("environment", "12|"),
            ("action", "12|"),
        ]
        assert "correct" in view.state.verdict.plain


async def test_wrong_procedure_gets_its_failure_kind():
    """A model that makes one call on a three-digit sum is judged 'malformed call' against the true sum."""
    app = fake_app(script=lambda ops: "B" + "+".join(map(str, ops)) + "|" + "0|")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _play_one(pilot, "1+5+4")
        assert ("environment", "?|") in _roles_and_text(view)
        assert "malformed call" in view.state.verdict.plain and "10" in view.state.verdict.plain


async def test_streaming_reveals_characters_gradually_at_a_slow_pace():
    """At the slow pace the episode is not all on screen at once; it completes later. (On a machine so loaded that
    the verdict comes after every character was due, all may be shown by then, and rightly: only that is allowed.)"""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.playground.pace = [name for name, _ in PACES].index("slow")  # 6 characters a second
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: app.playground.probes and next(iter(app.playground.probes.values())).state.verdict is not None,
            what="the verdict",
        )
        (view,) = app.playground.probes.values()
        st, rate = view.state, PACES[app.playground.pace][1]
        due = st.revealed_at_start + 1 + int((time.monotonic() - st.started) * rate)  # what the pace allows by now
        assert st.started, "the characters were not paced at the slow pace"
        assert st.pending or len(st.shown) <= due, "all characters were shown at once at the slow pace"
        app.playground.pace = 0
        await wait_for(pilot, lambda: not app.playground.busy(), what="the rest of the episode")
        assert "".join(c.char for c in view.state.shown) == "23+45=B23+45|68|68|"


async def test_earlier_probes_stay_visible_above():
    """Each Enter adds a probe below the earlier ones, which stay."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.playground.pace = 0
        for text in ("23+45", "3+4+5", "123+4"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.playground.probes) == 3 and not app.playground.busy(), what="3 probes")
        views = list(app.playground.query(".probe"))
        assert [v.state.problem.prompt for v in views] == ["23+45=", "3+4+5=", "123+4="]
        assert views[2].state.problem.environment == ""  # a probe outside every family is allowed


async def test_bad_sums_get_an_inline_message_and_nothing_plays():
    """Letters, empty input, doubled operators and over-long sums are refused inline; no probe starts."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        box = app.query_one("#sum", Input)
        message = app.query_one("#sum-message")
        for text in ("abc", "", "2++3", "1+2+3+4+5+6+7+8+9+1+2+3", "23+45*2"):
            box.value = text
            await pilot.press("enter")
            await pilot.pause()
            assert "error" in message.classes, f"{text!r} was not refused"
            assert str(message.render()).strip(), f"{text!r} got no message"
        assert not app.playground.probes
        assert box.value == "23+45*2"  # a refused sum stays in the box to be corrected
        box.value = ""
        await type_text(pilot, "2+3")
        await pilot.press("enter")
        await pilot.pause()
        assert "error" not in message.classes  # a good sum clears the message
        assert len(app.playground.probes) == 1


async def test_a_probe_naming_a_family_plays_its_sums_and_refuses_an_operand_outside_it():
    """`a3x2: 12+34+5` is refused inline (5 is outside the family's range); `a3x2: 12+34+56` plays as a3x2's."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        box, message = app.query_one("#sum", Input), app.query_one("#sum-message")
        app.playground.pace = 0
        await type_text(pilot, "a3x2: 12+34+5")
        await pilot.press("enter")
        await pilot.pause()
        assert "error" in message.classes and "5 is outside a3x2's range" in str(message.render())
        assert not app.playground.probes and box.value == "a3x2: 12+34+5"
        box.value = ""
        await type_text(pilot, "a3x2: 12+34+56")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the probe")
        (view,) = app.playground.probes.values()
        assert view.state.problem.environment == "add_3x2" and "(three two-digit numbers)" in str(view.render())


async def test_pace_key_cycles_the_streaming_pace():
    """F8 steps through every pace (instant, fast, normal, audience, slow), even while typing in the sum box."""
    from breadth.tui.widgets.playground import PACES

    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        seen = []
        for _ in range(len(PACES)):
            await pilot.press("f8")
            seen.append(PACES[app.playground.pace][0])
        assert sorted(seen) == sorted(name for name, _ in PACES) and len(PACES) == 5
        assert app.focused.id == "sum"


async def test_the_probe_log_keeps_the_last_probes_only(monkeypatch):
    """Past MAX_PROBES the oldest finished probe's view is reused for the next: a talk makes no new widgets."""
    from breadth.tui.widgets.playground import ProbeView

    monkeypatch.setattr("breadth.tui.widgets.playground.MAX_PROBES", 3)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for i in range(6):
            view = await _play_one(pilot, f"{i}+1")
            assert view.state.verdict is not None
            if i == 2:
                first_views = {id(v) for v in app.playground.probes.values()}
        await pilot.pause()
        log = app.playground.query_one("#probes")
        views = [w for w in log.children if isinstance(w, ProbeView)]
        assert [v.state.problem.operands[0] for v in views] == [3, 4, 5]  # the last three, in order
        assert {id(v) for v in views} == first_views  # the same three widgets, reused
        assert len(log.children) == 4  # the model line naming their model, then the three probes


async def test_a_difference_plays_and_its_verdict_names_its_family():
    """`9-4-3` plays with two calls of `-`, and the verdict names its family (sub_3x1) in words that say it
    subtracts (not the words of 3+4+5's family)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert "9-4-3" in str(app.playground.query_one("#hint").render())
        view = await _play_one(pilot, "9-4-3")
        assert view.state.problem.environment == "sub_3x1"
        assert _roles_and_text(view)[1:3] == [("action", "B9-4|"), ("environment", "5|")]
        shown = str(view.render())
        assert "correct" in shown and "(three single digits subtracted)" in shown
        assert REGISTERED["sub_3x1"].words != REGISTERED["add_3x1"].words
        outside = await _play_one(pilot, "123+4")
        assert "(outside every environment)" in str(outside.render())
