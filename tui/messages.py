"""Messages to the app that are not a view's or a widget's: the engine's events, its death, the store's runs.

An engine event keeps its protocol name (`breadth.core.engine.protocol`): the reader posts each as `FromEngine`
and the parts hear it by the event's own type. None sets `can_replace`: every loss point and every character must
arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from breadth.core.engine import protocol as p


@dataclass
class FromEngine(Message):
    """An event the engine sent: the one message the reader posts for every event.

    The app hands the event itself to the parts that hear its protocol type (`@hears(p.Step)`); a failure of a
    command in `FAILURES_BY_WHAT` only to those that hear that command's failure (`@hears(failed("train"))`).
    """

    event: object


FAILURES_BY_WHAT = ("train", "probe", "save", "scoreenvironments")  # p.Failed.what heard on its own; others as p.Failed


def failed(what: str) -> tuple[type, str]:
    """What a part hears the failures of command `what` by (`@hears(failed("train"))`): not by p.Failed."""
    if what not in FAILURES_BY_WHAT:
        raise ValueError(f"failures of {what!r} are heard as p.Failed, not by what failed")
    return (p.Failed, what)


def heard_as(event: object) -> object:
    """What the parts hear `event` by: its protocol type, or `failed(what)` for a failure heard by what failed."""
    if isinstance(event, p.Failed) and event.what in FAILURES_BY_WHAT:
        return failed(event.what)
    return type(event)


@dataclass
class EngineDied(Message):
    """The engine process ended without being asked to."""

    exitcode: int | None
    last_words: str = ""  # last line of the engine's log


@dataclass
class StoreRead(Message):
    """The results store's runs, read in a worker (or why they could not be)."""

    entries: list
    error: str = ""
