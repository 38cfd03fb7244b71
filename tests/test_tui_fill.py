"""Filling the form's counts by coordinates: a selector from the registry and a count under "more environments"."""

from __future__ import annotations

from textual.widgets import Collapsible, Input, Select
from tui_helpers import fake_app, type_text, wait_for

from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import label
from breadth.core.world.environments.mix import select
from breadth.core.world.environments.registry import where
from breadth.tui.widgets.train_form import fill_choices


def _counts(panel) -> dict[str, str]:
    """Every family's count field as typed."""
    return {name: panel.query_one(f"#count-{name}", Input).value for name in REGISTERED}


def test_the_choices_come_from_the_registry_and_each_names_families():
    """All families, each value of each dimension, then one leave-one-out per family; every selector parses."""
    choices = dict(fill_choices())
    assert choices["all environments"] == "all"
    assert choices["all with 2 operands"] == "operands:2" and choices["all with 1 digit"] == "digits:1"
    assert choices["all sub"] == "op:sub"
    for family in REGISTERED.values():
        assert select(choices[f"all but {label(family)}"]) == [n for n in REGISTERED if n != family.name]
    assert len(choices) == 1 + 3 + 2 + 2 + len(REGISTERED)


async def test_all_with_two_operands_fills_the_counts_and_trains_that_mix(tmp_path, monkeypatch):
    """Opening "more environments", choosing "all with 2 operands" by keyboard, count 20 and Enter sets the 2-operand
    families to 20 and the rest to 0; F2 trains exactly that mix."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("BREADTH_RUNS", str(tmp_path / "runs"))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        more = panel.query_one("#more", Collapsible)
        more.collapsed = False
        await pilot.pause()
        choose = panel.query_one("#fill-by", Select)
        choose.focus()
        await pilot.press("enter")  # open the list, move to "all with 2 operands", choose it
        await pilot.press("down", "enter")
        await pilot.pause()
        assert choose.value == "operands:2"
        count = panel.query_one("#fill-count", Input)
        assert count.value == "35"
        count.focus()
        count.value = ""
        await type_text(pilot, "20")
        await pilot.press("enter")
        await pilot.pause()
        two = [e.name for e in where(list(REGISTERED.values()), operands="2")]
        assert two == ["add_2x2", "add_2x1", "sub_2x2"]
        assert _counts(panel) == {n: "20" if n in two else "0" for n in REGISTERED}
        assert panel.query_one("#preset", Select).value == "custom" and not panel.status_is_error
        panel.query_one("#steps", Input).value = "10"
        await pilot.press("f2")
        await wait_for(
            pilot, lambda: app.training is None and app.entries[app.current].origin == "trained", what="training"
        )
        assert app.entries[app.current].run.mix == "add_2x2=20,add_2x1=20,sub_2x2=20"


async def test_a_count_over_a_family_pool_is_refused_inline_and_leaves_the_counts(tmp_path, monkeypatch):
    """70 of every family is refused in the panel's one-line message naming a2x1 and its pool of 50; no count moves,
    and Enter in the count box then fills with a count every pool holds."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        panel.query_one("#more", Collapsible).collapsed = False
        await pilot.pause()
        before = _counts(panel)
        panel.query_one("#fill-count", Input).value = "70"
        await pilot.click("#fill")
        await pilot.pause()
        pool = REGISTERED["add_2x1"].demo_pool
        assert panel.status_is_error and panel.status == f"add 2 0-9: a count from 0 to {pool}, not 70"
        assert _counts(panel) == before
        count = panel.query_one("#fill-count", Input)
        count.value = "5"
        count.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not panel.status_is_error, panel.status
        assert set(_counts(panel).values()) == {"5"}
