"""The training form's folded sections ("more environments", "advanced") make their inputs when first opened: until
then the form holds their values, so what trains, what the folded title says and what opening shows are the same."""

from __future__ import annotations

from textual.widgets import Collapsible, Input, Label, Select
from tui_helpers import fake_app, unfold

from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HELD_OUT
from breadth.core.world.runs.recipes import REWARD, recipe
from breadth.tui.widgets.train_form import MORE


async def test_an_unopened_form_trains_its_defaults_and_makes_no_folded_input():
    """At start neither section's inputs exist, and the form asks for the default mix, settings and held-out size."""
    app = fake_app()
    async with app.run_test(size=(80, 24)):
        panel = app.train_panel
        assert not panel.query("#held-out") and not panel.query("#lr") and not panel.query(f"#count-{MORE[0]}")
        mix, settings, held_out = panel.request()
        assert dict(mix.counts) == {"add_2x2": 35, "add_3x1": 35}
        assert (settings.lr, settings.dropout, settings.steps, held_out) == (0.0015, 0.2, 400, HELD_OUT)


async def test_a_recipe_chosen_while_advanced_is_folded_shows_its_defaults_when_opened():
    """Choosing "learn from reward" with "advanced" folded: the section, opened later, holds the reward recipe's
    defaults, and the form asks for them."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        panel.query_one("#recipe", Select).value = REWARD
        await pilot.pause()
        await unfold(pilot, "advanced")
        shown = {s.label: s.show(s.default) for s in recipe(REWARD).settings.settings() if s.form == "advanced"}
        assert {label: panel.query_one(f"#{label}", Input).value for label in shown} == shown
        assert panel.request()[1] == recipe(REWARD).settings()


async def test_codes_asked_for_before_opening_name_the_opened_counts_and_a_folded_count_is_in_the_title():
    """Shift+F5 before "more environments" is first opened: its labels are made as codes (`s3x1`); a count the form
    sets while it is folded is named in the folded title and shown in its box once opened."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        await pilot.press("shift+f5")
        panel.set_value("count-sub_3x1", "40")
        await pilot.pause()
        more = panel.query_one("#more", Collapsible)
        assert more.title == "more environments: s3x1 40"
        await unfold(pilot, "more")
        assert str(panel.query_one("#label-sub_3x1", Label).render()).strip() == REGISTERED["sub_3x1"].short
        assert panel.query_one("#count-sub_3x1", Input).value == "40"
        assert dict(panel.request()[0].counts) == {"add_2x2": 35, "add_3x1": 35, "sub_3x1": 40}


async def test_a_value_as_wide_as_its_box_reads_from_its_first_character_after_tabbing_away():
    """At 80x24 the learning rate's `0.0015` fills its 6-cell box; focused, the cursor's cell past the end scrolls the
    text one cell, and leaving the box by Tab used to keep it there, so the form read `.0015` (a rate ten times too
    small to the eye) until the box was focused again. Left, every setting box shows its value from its start."""
    from tui_helpers import wait_for

    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await unfold(pilot, "advanced")
        lr = app.train_panel.query_one("#lr", Input)
        lr.focus()
        await wait_for(pilot, lambda: lr.has_focus, what="the lr box focused")
        assert lr.scroll_offset.x == 1  # focused, the cursor sits past the text's end
        await pilot.press("tab")
        await wait_for(pilot, lambda: not lr.has_focus, what="the lr box left")
        assert lr.scroll_offset.x == 0 and lr.render_line(0).text.strip() == "0.0015"
