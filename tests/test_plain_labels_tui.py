"""Plain words on the app's screens: the race header names the sum's family in words (no second sum beside the one
posed), the runs table's column headers stand apart at 80x24 now that the plate's short labels are four wide, and
lanes, runs, the sum box's hint and the matrix name mixes and families in words, with codes where a person asks
(Shift+F5)."""

from __future__ import annotations

import re

import pytest
from fake_engine import FakeEngine
from textual.widgets import DataTable, Input, Static
from tui_helpers import fake_app, type_text, wait_for

from breadth.tui.app import BreadthApp
from breadth.tui.story import default_story


async def test_the_race_header_names_the_family_in_words_without_an_example_sum():
    """`race 3+4+5 = 12  (three single digits)`: the family's words, not its label's `3+4+5` again or `three-digit`."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        app.playground.pace = 0
        await type_text(pilot, "45+91")
        await pilot.press("enter")
        head = app.playground.race.query_one("#race-head")
        await wait_for(pilot, lambda: "45+91" in head.render().plain, what="the race head")
        assert head.render().plain.rstrip().endswith("45+91 = 136  (two-digit sums)")
        assert "23+45" not in head.render().plain


def _header_lines(table) -> list[list[str]]:
    """The runs table's two header lines as drawn, each split into its words (headers that touched would be one)."""
    lines = ["", ""]
    for column in table.ordered_columns:
        label = str(column.label).split("\n")
        for i in range(2):
            lines[i] += (label[i] if i < len(label) else "").ljust(column.get_render_width(table))
    return [line.split() for line in lines]


async def test_the_runs_table_headers_are_words_that_stand_apart_at_80x24_and_codes_after_shift_f5():
    """The runs table's headers at 80x24 name the plate's families as the matrix names its columns (`add 2` over
    `10-99`, `add 3` over `0-9`), each header with a space before it, none cut; Shift+F5 gives `a2x2 a3x1`, and
    again the words."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.score_panel.query_one("#runs")
        words = [["add", "2", "add", "3", "own"], ["model", "seed", "10-99", "0-9", "other"]]
        assert _header_lines(table) == words
        assert len("model") < table.columns[next(iter(table.columns))].width
        assert table.virtual_size.width <= table.scrollable_content_region.width  # the last column is not cut
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _header_lines(table) == [["own"], ["model", "seed", "a2x2", "a3x1", "other"]]
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _header_lines(table) == words


def test_help_says_what_a_short_label_means_and_that_the_old_ones_still_work():
    """F1's text reads `a3x2` as adding 3 numbers of 2 digits and names the two families' `a2x2`, `a3x1` (once
    `2d`, `3d`)."""
    from breadth.tui.screens.help import HELP

    plain = " ".join(HELP.replace("**", "").split())  # one line, as the screen wraps it
    assert "`a3x2` adds 3 numbers of 2 digits" in plain
    assert "The two-digit sums are `a2x2`, the three single digits `a3x1` (`2d` and `3d` still work)" in plain


CODE = re.compile(r"\b[as][234]x[12]\b")  # a family's coordinate code: `a2x2`, `s4x1`


def _lane_texts(app) -> list[str]:
    """Every race lane's title (its border's, stacked: its first column) and its text."""
    return [text for lane in app.playground.race.views() for text in (str(lane.border_title), lane.render().plain)]


def _runs_titles(app) -> list[str]:
    """The runs table's model column, as drawn."""
    table = app.score_panel.query_one("#runs", DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def _labels(app) -> list[str]:
    """Where the app names models and families for an audience: lanes, sum box hint, runs table, across-seeds line."""
    sum_box = app.playground.query_one("#sum", Input)
    across = str(app.score_panel.query_one("#across-seeds", Static).render())
    return [*_lane_texts(app), sum_box.placeholder, *_runs_titles(app), across]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_story_mode_names_every_lane_the_hint_and_the_runs_in_words_and_shift_f5_brings_the_codes(size):
    """In story mode (the stage layout) at 80x24 and 120x40 the race's lanes are `two-digit 70`, `3 singles 70`,
    `mix 35+35`, the sum box's hint and the runs table hold no coordinate code; Shift+F5 shows the codes
    (`a2x2 70`, `a3x2: 12+34+56`) and pressing it again gives the words back."""
    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: not app.playground.busy() and app.playground.race.views(), what="the race")
        assert app.stage
        titles = [lane.state.title for lane in app.playground.race.views()]
        assert titles == ["two-digit 70", "3 singles 70", "mix 35+35"]
        assert [str(lane.border_title) for lane in app.playground.race.views()] == titles  # whole, in the border
        assert not [text for text in _labels(app) if CODE.search(text)]
        await pilot.press("shift+f5")
        await pilot.pause()
        assert [lane.state.title for lane in app.playground.race.views()] == ["a2x2 70", "a3x1 70", "a2x2 35+a3x1 35"]
        assert "a3x2: 12+34+56" in app.playground.query_one("#sum", Input).placeholder
        assert any(CODE.search(title) for title in _runs_titles(app))
        await pilot.press("f17")  # what most terminals send for Shift+F5
        await pilot.pause()
        assert [lane.state.title for lane in app.playground.race.views()] == titles
        assert not [text for text in _labels(app) if CODE.search(text)]


async def test_outside_the_stage_the_runs_table_and_stacked_lanes_say_words_whole_at_80x24():
    """The normal layout at 80x24: the runs table's titles and the stacked lanes' names are words, none cut inside a
    word (a cut ends with `…` after a whole word), no coordinate code anywhere the app names a model."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await wait_for(pilot, lambda: len(app.playground.race.views()) == 3, what="the lanes")
        await pilot.pause()
        assert not [text for text in _labels(app) if CODE.search(text)]
        titles = _runs_titles(app)
        assert titles[:3] == ["two-digit 70", "3 singles 70", "mix 35+35"]
        stacked = [lane.render().plain.split("  ")[0].strip() for lane in app.playground.race.views()]
        assert stacked == ["two-digit 70", "3 singles 70", "mix 35+35"]


def test_a_cut_title_ends_after_a_whole_word_and_keeps_its_run_number():
    """`clip` cuts after a space or `+` (never inside a word unless the word fills half the width) and a title keeps
    its `#n`: `two-digit 35+3 singles 35` in 17 is `two-digit 35+3…`."""
    from breadth.core.world.text.shown import clip, clip_title

    assert clip("two-digit 35+3 singles 35", 17) == "two-digit 35+3…"
    assert clip("3 singles 36+two-digit minus 36", 17) == "3 singles 36+…"
    assert clip("mix 35+35", 9) == "mix 35+35"
    assert clip("abcdefghijklmnop", 8) == "abcdefg…"  # one long word: cut, as before
    assert clip_title("trained just now: mix 35+35 lr 0.01 #12", 26) == "trained just now: mix… #12"
    assert clip_title("trained just now: mix 35+35 lr 0.01 #12", 24) == "trained just now:… #12"
    for width in range(6, 30):
        for text in ("two-digit 35+3 singles 35", "4 envs 72 #2", "trained just now: two-digit 70 #3"):
            cut = clip_title(text, width)
            assert len(cut) <= width and (cut == text or "…" in cut)


def _whole_words(shown: str, name: str) -> bool:
    """True if `shown` is `name`, or `name` cut with `…` right after a whole word (a space or `+` follows)."""
    if shown == name:
        return True
    kept = shown.removesuffix("…")
    return shown.endswith("…") and name.startswith(kept) and (kept.endswith("+") or name[len(kept)] in " +")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_matrix_names_rows_and_columns_in_words_that_fit_and_shift_f5_shows_the_codes(
    size, tmp_path, monkeypatch
):
    """At 80x24 and 120x40 the matrix's rows are `two-digit 70`, `mix 35+35`, `4 envs 72 #1`..., its columns
    `add 3` over `0-9`: no coordinate code, every word whole, no two rows alike, the table as wide as the screen;
    Shift+F5 names them `a2x2 70` and `a3x1` again."""
    from test_matrix_stage import FOUR_ADD, FOUR_SUB, PLATE, _store

    from breadth.core.results.matrix import row_names
    from breadth.tui.screens.matrix_view import MatrixView

    _store(tmp_path, monkeypatch, [*PLATE, FOUR_ADD, FOUR_SUB, "add_3x1=36,sub_2x2=36", "sub_3x2=70"])
    app = fake_app()
    async with app.run_test(size=size) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and app.screen.lines, what="the rows")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        labels = [row.label.plain.strip() for row in table.rows.values()]
        names = row_names(app.screen.lines, codes=False)
        assert labels[:3] == ["two-digit 70", "3 singles 70", "mix 35+35"]
        assert "4 envs 72 #1" in labels and "4 envs 72 #2" in labels and len(set(labels)) == len(labels)
        assert all(_whole_words(label, name) for label, name in zip(labels, names, strict=True)), labels
        headers = [str(c.label) for c in table.columns.values()]
        assert not [text for text in [*labels, *headers] if CODE.search(text)]
        for header, column in zip(headers, table.columns.values(), strict=True):
            top, bottom = (line.strip() for line in header.split("\n"))
            assert re.fullmatch(r"(add|sub) [234]", top) and re.fullmatch(r"0-9|10-99", bottom), header
            assert column.width > max(len(top), len(bottom))  # a space before it: neighbours never touch
        assert ("add 3", "0-9") in [tuple(line.strip() for line in h.split("\n")) for h in headers]  # 3+4+5
        assert table.virtual_size.width <= table.scrollable_content_region.width  # nothing off screen
        detail = str(app.screen.query_one("#matrix-detail", Static).render())
        assert detail and not CODE.search(detail)
        await pilot.press("shift+f5")
        await pilot.pause()
        labels = [row.label.plain.strip() for row in table.rows.values()]
        headers = [str(c.label) for c in table.columns.values()]
        assert labels[:3] == ["a2x2 70", "a3x1 70", "a2x2 35+a3x1 35"]
        assert any(h.split("\n")[1].strip() == "a3x1" for h in headers)
        assert CODE.search(str(app.screen.query_one("#matrix-detail", Static).render()))  # `(a2x1)`


def test_the_help_lists_the_key_that_toggles_the_codes():
    """F1's key table has Shift+F5 (what terminals send as F17 too): labels in codes or in words."""
    from breadth.tui.screens.help import app_bindings, key_lines

    lines = {keys: does for _, keys, does in key_lines(app_bindings(BreadthApp))}
    assert lines["Shift+F5"] == "labels in codes (a2x2 70) or in words"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_on_stage_the_lanes_take_the_playgrounds_rows_and_each_verdict_its_own_line(size):
    """Story mode: three lanes fill the rows between the race's head and the legend (at 120x40 they left 20 empty
    rows under them) and, where a lane has two lines inside its border, its verdict stands on a line of its own."""
    app = BreadthApp(engine_factory=FakeEngine, demo=default_story())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        for _ in range(2):  # act 1's opening, then its first probe
            await pilot.press("pagedown")
            await pilot.pause()
            await wait_for(pilot, lambda: not app.playground.busy(), what="the race")
        await pilot.pause()
        views = app.playground.race.views()
        legend = app.playground.query_one("#legend-row")
        assert len(views) == 3 and legend.region.y - views[-1].region.bottom <= 1, (views[-1].region, legend.region)
        lanes = app.playground.query_one("#lanes").region
        assert all(view.region.bottom <= lanes.bottom for view in views)  # every border whole, none scrolled
        last = app.playground.query_one("#sum-message").region.bottom  # the story's line, under the sum box
        assert app.playground.content_region.bottom - last <= 1, (last, app.playground.content_region)
        if size == (120, 40):
            assert all(view.region.height >= 8 and view.roomy for view in views)
        for view in views:
            text = view.render().plain
            assert ("\n✓" in text or "\n✗" in text) if view.roomy else ("  ✓" in text or "  ✗" in text), text


async def test_the_training_forms_counts_name_their_families_in_words_and_shift_f5_brings_the_codes():
    """The training form's counts at 80x24 name each family as the matrix names its column (`add 2 10-99`, under
    "more environments" `add 3 10-99`, whole, each count's box in the panel), its folded title too; Shift+F5 shows the
    codes (`a2x2`, `s3x1 40`) and pressing it again gives the words back."""
    from textual.widgets import Collapsible, Label

    from breadth.core.world.environments.environment import REGISTERED
    from breadth.core.world.environments.labels import header

    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        more = panel.query_one("#more", Collapsible)
        more.collapsed = False
        await pilot.pause()
        panel.query_one("#count-sub_3x1", Input).value = "40"

        def labels() -> dict[str, str]:
            return {n: str(panel.query_one(f"#label-{n}", Label).render()).strip() for n in REGISTERED}

        words = {n: " ".join(filter(None, header(f))) for n, f in REGISTERED.items()}
        assert labels() == words and words["add_2x2"] == "add 2 10-99" and words["add_3x2"] == "add 3 10-99"
        right = panel.content_region.right
        for name in REGISTERED:
            label, box = panel.query_one(f"#label-{name}", Label), panel.query_one(f"#count-{name}", Input)
            assert label.region.width > len(words[name]) and box.region.right <= right, name  # whole, in view
        more.collapsed = True
        await pilot.pause()
        assert more.title == "more environments: sub 3 0-9 40"
        await pilot.press("shift+f5")
        await pilot.pause()
        assert labels() == {n: f.short for n, f in REGISTERED.items()} and more.title == "more environments: s3x1 40"
        await pilot.press("shift+f5")
        await pilot.pause()
        assert labels() == words and more.title == "more environments: sub 3 0-9 40"
        assert not CODE.search(" ".join(labels().values()))
