"""Helpers for the app's Pilot tests: an app on a fake engine, and waiting for a condition."""

from __future__ import annotations

import asyncio
import re
import time

from fake_engine import FakeEngine
from textual import events
from textual.keys import _character_to_key

from breadth.tui.app import BreadthApp


def fake_app(**engine_kwargs) -> BreadthApp:
    """The app driving a FakeEngine (no torch, scripted models)."""
    return BreadthApp(engine_factory=lambda: FakeEngine(**engine_kwargs))


async def wait_for(pilot, condition, timeout: float = 30.0, what: str = "condition") -> None:
    """Pause the pilot until `condition()` holds; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    if condition():
        await asyncio.sleep(0)
        return
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)  # the app runs meanwhile (a pilot.pause a poll redrew the screen: a fifth of a core)
    await pilot.pause(0)  # then the screen has handled what is pending


async def type_text(pilot, text: str) -> None:
    """Type `text` into whatever has focus, as a terminal delivers typed keys in a burst: one key event per
    character (named as `Pilot.press` names them), all queued at once, then a pause until the app has handled
    them. (`Pilot.press` waits for an idle app after each key: about 90 ms a key here, minutes over the suite.)"""
    app = pilot.app
    for ch in text:
        event = events.Key(ch if ch.isalnum() else _character_to_key(ch), ch)
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause()


async def unfold(pilot, *sections: str) -> None:
    """Open the training form's folded sections by id (`more`, `advanced`), as clicking their titles does: their
    inputs are made then."""
    for section in sections:
        pilot.app.train_panel.query_one(f"#{section}").collapsed = False
    await pilot.pause()


def screen_lines(app) -> list[str]:
    """The text of each row of the app's current screen, as the terminal would show it now."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def other_cells(shown: str) -> dict[tuple[str, str], str]:
    """The score panel's other environments read back from its words table: (`add 3`, `0-9`) -> the cell's text, a
    family found by the column it stands under (its operation, then its count) and the row it stands in (its range)."""
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] in (["add"], ["sub"]))
    columns, op = {}, ""
    for word in re.finditer(r"\S+", lines[at]):
        if word.group().isdigit():
            columns[word.end()] = f"{op} {word.group()}"  # cells are right-justified under their count
        else:
            op = word.group()
    cells = {}
    for line in lines[at + 1 :]:
        for end, what in columns.items():
            text = line[end - 3 : end].strip()
            if text:
                cells[what, line.split()[0]] = text
    return cells
