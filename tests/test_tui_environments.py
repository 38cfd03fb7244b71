"""The environments view (Shift+F4): the playing model scored on every environment, shown by dimension."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static
from tui_helpers import fake_app, wait_for

from breadth.core.engine import protocol as p
from breadth.core.world.environments.registry import environments
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.tui.screens.environments_view import EnvironmentsView

SOLVED = {"add_2x2": 30, "add_3x1": 27, "2a1": 15, "2a2_postfix": 6, "1a1s1": 3}  # of 30; every other 0
HOSTILE = "[bold red]no call[/] \x1b[31m"  # a failure kind that is markup and an escape, if read as such


def scripted(name: str, held_out: int) -> HeldOutScore:
    """SOLVED's sums solved of `held_out`; the rest failed in a kind that would be markup if shown as markup."""
    solved = SOLVED.get(name, 0) * held_out // 30
    return HeldOutScore(name, solved, held_out, {HOSTILE: held_out - solved} if solved < held_out else {})


def environments_app(**engine):
    """The app on a fake engine that answers ScoreEnvironments with `scripted` scores."""
    return fake_app(env_score=scripted, **engine)


def _view(app) -> EnvironmentsView | None:
    return app.screen if isinstance(app.screen, EnvironmentsView) else None


async def _open_drawn(pilot, key: str = "f16") -> EnvironmentsView:
    """Press `key` and wait for the heat map."""
    await pilot.press(key)
    await wait_for(pilot, lambda: _view(pilot.app) is not None and _view(pilot.app).scoring is not None, what="map")
    return _view(pilot.app)


def _cells(view: EnvironmentsView) -> dict[tuple[str, str], str]:
    """(row label, column header) -> the cell's text, stripped."""
    table = view.query_one(DataTable)
    headers = [str(c.label).strip() for c in table.columns.values()]
    out = {}
    for i, row in enumerate(table.ordered_rows):
        label = str(row.label).strip()
        for header, cell in zip(headers, table.get_row_at(i), strict=True):
            out[(label, header)] = str(cell).strip()
    return out


def _text(view, selector: str) -> str:
    return str(view.query_one(selector, Static).render())


def _sent(app) -> list:
    return [c for c in app.supervisor.engine.sent if isinstance(c, p.ScoreEnvironments)]


async def test_shift_f3_scores_the_playing_model_and_shows_a_heat_map_by_dimension_at_80x24():
    """The mix model scored on all 183 environments: each cell its environment's %, `*` on the two it trained on,
    pooled rows and the mean column as the mean of their environments, the overall mean above; all 13 columns fit
    80 columns and the lines over the table wrap, never cut."""
    app = environments_app()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _open_drawn(pilot)
        (asked,) = _sent(app)
        assert asked.key == app.current and asked.names == [] and asked.held_out == 30
        cells = _cells(view)
        assert cells[("2.2", "+")] == "*100" and cells[("1.1.1", "+")] == "*90"  # the mix's two families
        assert cells[("2.1", "+")] == "50" and cells[("2.2", "+ p")] == "20" and cells[("1.1.1", "+-")] == "10"
        assert cells[("2.1", "-")] == "0" and cells[("1.2", "-")] == "·"  # no 1.2 subtraction (it goes below zero)
        assert cells[("2.2", "+-")] == ""  # two numbers have one gap: no `+-` layout
        assert cells[("2 numbers", "+")] == "38"  # 1.1, 1.2, 2.1, 2.2 with +: 0, 0, 50, 100
        assert cells[("2.2", "mean")] == "30"  # +, -, + p, - p: 100, 0, 20, 0
        n = len(environments())
        overall = sum(SOLVED.values()) / 30 / n
        assert cells[("all", "mean")] == f"{100 * overall:.0f}"
        state = _text(view, "#env-state")
        assert (
            f"overall {100 * overall:.0f}% over {n} environments ({sum(SOLVED.values())} of {30 * n:,} sums)" in state
        )
        table = view.query_one(DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width  # every column at 80
        for selector in ("#env-title", "#env-state", "#env-key"):
            line = view.query_one(selector, Static)
            # wrapped, not cut (its height follows its text on the refresh after the text is set)
            await wait_for(
                pilot,
                lambda line=line: Text(str(line.render())).cell_len <= line.size.width * line.size.height,
                timeout=5,
                what=f"{selector} wrapped",
            )


async def test_the_cursor_cell_lists_its_environments_with_their_rates_and_failures_as_text_never_markup():
    """On a one-environment cell: its id, rate and failure kinds, shown literally; on a pooled cell: its
    environments best first, each with its own rate, the trained ones marked, named in words (`two-digit`; Shift+F5:
    `a2x2`, and again the words)."""
    app = environments_app()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _open_drawn(pilot)
        table = view.query_one(DataTable)
        labels = [str(r.label).strip() for r in table.ordered_rows]
        table.move_cursor(row=labels.index("2.1"), column=0)
        await pilot.pause()
        detail = _text(view, "#env-detail")
        assert "breadth/2a1-v1  50% (15/30)" in detail
        assert "failures: [bold red]no call[/] \\x1b[31m 15" in detail  # the escape written out, never sent
        table.move_cursor(row=labels.index("2 numbers"), column=0)
        await pilot.pause()
        detail = _text(view, "#env-detail")
        assert detail.startswith("2 numbers, + infix: mean 38% over 4 environments (45 of 120 sums)")
        assert "*two-digit 100 · 2a1 50 · " in detail  # in words; a generated environment has none: its id
        await pilot.press("shift+f5")
        await pilot.pause()
        assert "*a2x2 100 · 2a1 50 · " in _text(view, "#env-detail")
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _text(view, "#env-detail") == detail


async def test_scoring_says_how_far_it_has_got_and_reopening_shows_the_kept_scores_without_asking_again():
    """While the engine scores, the view counts environments and seconds; once scored, closing and opening again
    (under either name of Shift+F4) draws at once from what the app kept: the engine is asked once."""
    app = environments_app(env_seconds=0.05)  # 23 pieces of 8 environments: about 1.2 s
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("shift+f4")
        await wait_for(
            pilot, lambda: _view(app) is not None and " of 183 environments" in _text(_view(app), "#env-state")
        )
        assert "scoring " in _text(_view(app), "#env-state") and " s" in _text(_view(app), "#env-state")
        await wait_for(pilot, lambda: _view(app).scoring is not None, what="the heat map")
        await pilot.press("escape")
        assert _view(app) is None
        view = await _open_drawn(pilot, "f16")
        assert view.scoring is not None and len(_sent(app)) == 1


class FailsOnce:
    """Scripted scores whose first call fails, as a scoring that ran out of memory would."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, name: str, held_out: int) -> HeldOutScore:
        self.calls += 1
        if self.calls == 1:
            raise MemoryError("out of memory [/]")
        return scripted(name, held_out)


@pytest.mark.parametrize("failure", ["error", "engine died"])
async def test_a_scoring_that_fails_says_why_in_one_line_and_shift_f3_tries_again(failure):
    """A scoring that fails in the engine, or an engine that dies mid-scoring: one line on the view, no traceback;
    Shift+F4 asks again and the scores come."""
    app = fake_app(env_score=FailsOnce() if failure == "error" else scripted, env_seconds=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f16")
        if failure == "engine died":
            await wait_for(pilot, lambda: " of 183 " in _text(_view(app), "#env-state"), what="scoring")
            app.supervisor.engine.kill()
        await wait_for(pilot, lambda: "not scored: " in _text(_view(app), "#env-state"), what="the failure line")
        state = _text(_view(app), "#env-state")
        assert "\n" not in state.strip()
        assert ("out of memory [/]" if failure == "error" else "the engine stopped while scoring") in state
        await wait_for(pilot, lambda: app.supervisor.ready, what="an engine")
        view = await _open_drawn(pilot)
        assert view.scoring.scores is not None and len(_sent(app)) == (2 if failure == "error" else 1)


def test_shift_f3_is_bound_to_nothing_since_textual_reads_it_as_a_cursor_position_report():
    """xterm and tmux send Shift+F3 as CSI 1;2R, which Textual's parser turns into a CursorPosition event, never a
    key (tried in tmux: the view's key did nothing): no app key may be Shift+F3, and Shift+F4's sequence is a key."""
    from textual import events
    from textual._xterm_parser import XTermParser

    from breadth.tui.keys import APP_KEYS

    shift_f3, shift_f4 = list(XTermParser().feed("\x1b[1;2R")), list(XTermParser().feed("\x1b[1;2S"))
    assert any(isinstance(t, events.CursorPosition) for t in shift_f3)
    assert not any(isinstance(t, events.Key) for t in shift_f3)
    assert [t.key for t in shift_f4 if isinstance(t, events.Key)] == ["shift+f4"]
    keys = {key.strip() for binding in APP_KEYS for key in binding.key.split(",")}
    assert not keys & {"f15", "shift+f3"} and {"f16", "shift+f4"} <= keys
