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
