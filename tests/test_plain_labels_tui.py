"""Plain words on the app's screens: the race header names the sum's family in words (no second sum beside the one
posed), and the runs table's column headers stand apart at 80x24 now that the plate's short labels are four wide."""

from __future__ import annotations

from tui_helpers import fake_app, type_text, wait_for


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


async def test_the_runs_table_headers_stand_apart_at_80x24():
    """`model  seed a2x2 a3x1 own other`: each score header has a space before it and none is cut."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.score_panel.query_one("#runs")
        headers = [str(c.label) for c in table.columns.values()]
        assert [h.strip() for h in headers] == ["model", "seed", "a2x2", "a3x1", "own", "other"]
        assert all(h.startswith(" ") for h in headers[2:])  # `seed` follows `model`'s blank tail
        assert len(headers[0].strip()) < table.columns[next(iter(table.columns))].width
        assert table.virtual_size.width <= table.scrollable_content_region.width  # the last column is not cut


def test_help_says_what_a_short_label_means_and_that_the_old_ones_still_work():
    """F1's text reads `a3x2` as adding 3 numbers of 2 digits and names the plate's `a2x2`, `a3x1` (once `2d`, `3d`)."""
    from breadth.tui.screens.help import HELP

    plain = " ".join(HELP.replace("**", "").split())  # one line, as the screen wraps it
    assert "`a3x2` adds 3 numbers of 2 digits" in plain
    assert "the plate's are `a2x2` and `a3x1` (`2d`, `3d` still work)" in plain
