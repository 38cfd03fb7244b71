"""The app is an assembly of parts that hear messages; views post messages instead of calling the app."""

from __future__ import annotations

import re
from pathlib import Path

from textual.message import Message
from tui_helpers import fake_app

from breadth.core.engine import protocol as p
from breadth.tui import messages as m
from breadth.tui.app import BreadthApp
from breadth.tui.parts import Part

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
    assert owners == [app.catalogue, app.engine_watch, app.training_jobs, app.play_router, app.board]
    assert isinstance(app, BreadthApp)


def test_parts_hear_engine_events_by_their_protocol_names():
    """An engine event has one name: the parts hear `p.Step`, `p.ProbeFinished`, ..., never an app message renaming
    one."""
    app = fake_app()
    renamed = [k for k in app.hearers if isinstance(k, type) and issubclass(k, m.FromEngine)]
    events = {k for k in app.hearers if not (isinstance(k, type) and issubclass(k, Message))}
    assert not renamed
    assert {p.Step, p.ProbeFinished, p.Trained, p.Char, p.Ready, p.Failed} <= events
    assert all(k in vars(p).values() or k[0] is p.Failed for k in events), events


def test_a_failure_reaches_the_part_that_answers_for_what_failed_and_others_the_engine_watch():
    """A train, probe, save or scoring failure goes to its own part only; any other failure is the engine watch's."""
    app = fake_app()
    owners = {
        what: [h.__self__ for h in app.hearers[m.heard_as(p.Failed(what, "boom", 1))]]
        for what in ("train", "probe", "save", "scoreenvironments", "load", "protocol")
    }
    assert owners == {
        "train": [app.training_jobs],
        "probe": [app.play_router],
        "save": [app.catalogue],
        "scoreenvironments": [app.board],
        "load": [app.engine_watch],
        "protocol": [app.engine_watch],
    }


def test_each_part_is_kept_under_its_class_name():
    """A part is found on the app under its class's name (`app.catalogue` is the Catalogue), never a second word."""
    app = fake_app()
    parts = {name: value for name, value in vars(app).items() if isinstance(value, Part)}
    assert len(parts) == 7
    assert {name: re.sub(r"(?<!^)(?=[A-Z])", "_", type(part).__name__).lower() for name, part in parts.items()} == {
        name: name for name in parts
    }
