"""The help screen's key lines are made from the app's bindings: every key, grouped, one line a key, keys first;
the prose after them names a key by its binding too."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from textual.binding import Binding

sys.path.insert(0, str(Path(__file__).parent))
from tui_helpers import fake_app, screen_lines  # noqa: E402

from breadth.tui.app import BreadthApp  # noqa: E402
from breadth.tui.keys import APP_KEYS  # noqa: E402
from breadth.tui.screens.help import (  # noqa: E402
    GROUPS,
    HELP,
    KEYS_WIDTH,
    HelpScreen,
    app_bindings,
    key_lines,
    key_name,
    prose,
)
from breadth.tui.widgets.playground import PACES  # noqa: E402


def expanded(keys: str) -> set[str]:
    """The key names a help line's keys stand for: `Shift/Alt+←/→ F1` -> Shift+←, Shift+→, Alt+←, Alt+→, F1."""
    names = set()
    for part in keys.split():
        mods, _, lasts = part.rpartition("+")
        for mod in mods.split("/") if mods else [""]:
            names |= {f"{mod}+{last}" if mod else last for last in lasts.split("/")}
    return names


def test_every_app_key_shows_in_the_help_on_its_actions_line():
    """Each key bound on the app appears on the line saying what its action does, in the binding's own words (its
    tooltip, the one place a key's words are written), and every key has them."""
    lines = key_lines(app_bindings(BreadthApp))
    for binding in app_bindings(BreadthApp):
        if binding.system:
            continue
        assert binding.tooltip, binding
        (keys,) = [keys for _, keys, does in lines if binding.tooltip in does.split("; ")]
        for key in binding.key.split(","):
            assert key_name(key.strip()) in expanded(keys), (key, keys)


def test_every_action_is_in_a_group_and_each_line_is_one_line():
    """Every bound action is placed in a named group (none falls to `more`), and no line is a table of keys."""
    grouped = {name for _, lines in GROUPS for line in lines for name in (line if isinstance(line, tuple) else (line,))}
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
        first_page = set().union(*(expanded(keys) for _, keys, _ in lines[:in_view]))
        assert {"F2", "F4", "F6"} <= first_page


async def test_help_at_80x24_shows_every_key_without_scrolling():
    """At 80x24 every key line of the help is on screen as it opens, F11, Shift+F4, F12 and Ctrl+Q among them
    (they were below the fold: 25 lines in a box of 20 rows)."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(screen_lines(app))
        lines = key_lines(app_bindings(BreadthApp))
        on_screen = set().union(*(expanded(keys) for _, keys, does in lines if f"{keys:<{KEYS_WIDTH}}{does}" in shown))
        for binding in (b for b in app_bindings(BreadthApp) if not b.system):
            assert {key_name(key.strip()) for key in binding.key.split(",")} <= on_screen, binding
        assert {"F11", "Shift+F4", "F12", "Ctrl+Q", "Enter"} <= on_screen


def test_the_help_after_the_keys_speaks_plain_words():
    """The help's prose names no plate, no Wilson interval and no grid code (a2x2) before its last section, which
    explains the short labels the tables use."""
    plain, _, labels = HELP.partition("## Short labels")
    assert labels and re.search(r"\ba2x2\b", labels)
    assert not re.search(r"\b[as]\dx\d\b", plain), re.findall(r"\b[as]\dx\d\b", plain)
    assert "plate" not in HELP.lower() and "wilson" not in HELP.lower()


def test_the_prose_names_each_key_by_its_binding():
    """The prose spells no function key itself: it says F6 for shading and F5 for the stage layout because they are
    bound so, and after a rebinding it names the new key."""
    assert not re.search(r"\bF\d+\b", HELP), re.findall(r"\bF\d+\b", HELP)
    text = prose(app_bindings(BreadthApp))
    assert "**Shading** (F6)" in text and "**Stage layout** (F5;" in text and "F5 again for the panels" in text
    rebound = [
        Binding("ctrl+t", b.action, b.description) if b.action == "stage" else b for b in app_bindings(BreadthApp)
    ]
    assert "**Stage layout** (Ctrl+T;" in prose(rebound) and "Ctrl+T again for the panels" in prose(rebound)
