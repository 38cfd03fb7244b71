"""The app is an assembly of parts that hear messages; views post messages instead of calling the app."""

from __future__ import annotations

import re
from pathlib import Path

from tui_helpers import fake_app

from breadth.tui import messages as m
from breadth.tui.app import BreadthApp

TUI = Path(__file__).resolve().parent.parent / "tui"
TEXTUAL_APP = {  # Textual's own App API (the footer draws its keys as Textual's Footer does)
    *("theme_changed_signal", "notify", "pop_screen", "push_screen", "exit", "screen"),
    *("get_key_display", "ENABLE_COMMAND_PALETTE"),
}


def test_views_and_widgets_call_no_method_of_breadth_app():
    """A view or widget reaches the app only through Textual's own API; everything else is a posted message."""
    used = set()
    for path in [*TUI.glob("screens/*.py"), *TUI.glob("widgets/*.py")]:
        used |= set(re.findall(r"self\.app\.(\w+)", path.read_text()))
    assert used <= TEXTUAL_APP, used - TEXTUAL_APP


def test_an_engine_death_is_heard_by_each_part_in_order_and_the_restart_comes_after_the_catalogue():
    """The catalogue judges the model it died loading before the engine is restarted; the job and probes fail too."""
    app = fake_app()
    owners = [handler.__self__ for handler in app.hearers[m.EngineDied]]
    assert owners == [app.models, app.engine_watch, app.jobs, app.play, app.board]
    assert isinstance(app, BreadthApp)
