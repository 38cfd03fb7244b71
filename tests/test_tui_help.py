"""The help screen's key lines are made from the app's bindings: every key, grouped, one line a key, keys first."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from tui_helpers import fake_app  # noqa: E402

from breadth.tui.app import BreadthApp  # noqa: E402
from breadth.tui.keys import APP_KEYS  # noqa: E402
from breadth.tui.screens.help import DOES, GROUPS, HelpScreen, app_bindings, key_lines, key_name  # noqa: E402
from breadth.tui.widgets.playground import PACES  # noqa: E402


def test_every_app_key_shows_in_the_help_with_its_own_line():
    """Each key bound on the app appears on its action's line, and each action has a line saying what it does."""
    lines = key_lines(app_bindings(BreadthApp))
    for binding in app_bindings(BreadthApp):
        if binding.system:
            continue
        action = binding.action.split("(")[0]
        assert action in DOES
        (keys,) = [keys for _, keys, does in lines if does == DOES[action]]
        for key in binding.key.split(","):
            mods, _, last = key_name(key).rpartition("+")
            assert (mods + "+" if mods else "") in keys and last in keys, (key, keys)


def test_every_action_is_in_a_group_and_each_line_is_one_key():
    """Every bound action is placed in a named group (none falls to `more`), and no line is a table of keys."""
    grouped = {name for _, names in GROUPS for name in names}
    actions = {b.action.split("(")[0] for b in app_bindings(BreadthApp) if not b.system}
    assert actions <= grouped
    lines = key_lines(app_bindings(BreadthApp))
    assert [group for group, _, _ in lines if group] == [group for group, _ in GROUPS]
    assert all("\n" not in does for _, _, does in lines)


def test_the_pace_line_lists_every_pace():
    """The pace key's line names all five paces it cycles through (it once listed four of five)."""
    (does,) = [does for _, keys, does in key_lines(app_bindings(BreadthApp)) if keys == "F8"]
    assert all(name in does for name, _ in PACES) and len(PACES) == 5


def test_every_shift_function_key_is_bound_under_both_names_terminals_send():
    """Terminals send Shift+F2 as f14, but Textual in tmux names it shift+f2: a key bound under one name only never
    fires there (Shift+F2, Shift+F9 and Shift+F11 did not in tmux), so each is bound under both."""
    for binding in APP_KEYS:
        keys = [k.strip() for k in binding.key.split(",")]
        for key in keys:
            if key[0] == "f" and key[1:].isdigit() and 13 <= int(key[1:]) <= 24:
                assert f"shift+f{int(key[1:]) - 12}" in keys, binding


def test_function_keys_past_f12_read_as_shift():
    """What terminals send for Shift+F2 and Shift+F9 (F14, F21) is named as the key pressed."""
    assert key_name("f14") == "Shift+F2" and key_name("f21") == "Shift+F9" and key_name("f12") == "F12"


async def test_help_at_80x24_shows_keys_on_its_first_page_each_on_one_line():
    """At 80x24 the help opens on its keys (today's first page had none): at least 18 key lines in view, none cut
    or wrapped, the train, race, stage and shade keys among them."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = app.screen.query_one("#help-keys")
        box = app.screen.query_one("#help-box")
        lines = key_lines(app_bindings(BreadthApp))
        assert keys.region.height == len(lines)  # one line a key: nothing wrapped
        width = keys.content_region.width
        assert all(7 + 18 + len(does) <= width for _, _, does in lines)  # nothing cut
        in_view = box.content_region.bottom - keys.region.y
        assert in_view >= 18
        first_page = [keys for _, keys, _ in lines[:in_view]]
        assert {"F2", "F4", "F6"} <= set(first_page)
