"""The help screen's key table is made from the app's bindings, so it names every key the app has."""

from __future__ import annotations

from breadth.tui.app import BreadthApp
from breadth.tui.screens.help import DOES, app_bindings, key_name, key_rows
from breadth.tui.widgets.playground import PACES


def test_every_app_key_shows_in_the_help_with_its_own_line():
    """Each key bound on the app appears in the table, and each action has a line saying what it does."""
    table = key_rows(app_bindings(BreadthApp))
    for binding in app_bindings(BreadthApp):
        if not binding.system:
            assert f"`{key_name(binding.key)}`" in table
            assert binding.action.split("(")[0] in DOES


def test_the_pace_line_lists_every_pace():
    """Ctrl+O's line names all the paces Ctrl+O cycles through (it once listed four of five)."""
    (row,) = [line for line in key_rows(app_bindings(BreadthApp)).splitlines() if "`Ctrl+O`" in line]
    assert all(name in row for name, _ in PACES) and len(PACES) == 5
