"""Helpers for the app's Pilot tests: an app on a fake engine, and waiting for a condition."""

from __future__ import annotations

import asyncio
import time

from fake_engine import FakeEngine

from breadth.tui.app import BreadthApp


def fake_app(**engine_kwargs) -> BreadthApp:
    """The app driving a FakeEngine (no torch, scripted models)."""
    return BreadthApp(engine_factory=lambda: FakeEngine(**engine_kwargs))


async def wait_for(pilot, condition, timeout: float = 30.0, what: str = "condition") -> None:
    """Pause the pilot until `condition()` holds; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await pilot.pause(0.05)
    await asyncio.sleep(0)


async def type_text(pilot, text: str) -> None:
    """Type `text` key by key into whatever has focus."""
    for ch in text:
        await pilot.press(ch)


def screen_lines(app) -> list[str]:
    """The text of each row of the app's current screen, as the terminal would show it now."""
    return [strip.text for strip in app.screen._compositor.render_strips()]
