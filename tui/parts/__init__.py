"""The app's parts: each owns one concern's state and hears the messages about it; none has a look of its own.

A part's handler is marked `@hears(MessageType)`. The app delivers each message that reaches it (from the
engine's reader, from a view or a widget, from another part) to every part that hears its type, in the order
the app lists its parts, on the UI thread; a part tells the others something by posting a message to the app.
An engine event is heard by its protocol type (`@hears(p.Step)`, `@hears(messages.failed("train"))`), and the
handler gets the event itself.
"""

from __future__ import annotations

from collections.abc import Callable


def hears(*kinds: object):
    """Mark a part's method as the handler of messages of exactly these types (or engine events, as above)."""

    def mark(handler):
        handler.hears = kinds
        return handler

    return mark


class Part:
    """One concern of the app: its state, and the handlers of the messages it hears."""

    def __init__(self, app) -> None:
        self.app = app  # BreadthApp: the panels, the shared state the panels show (current, training), the parts

    def handlers(self) -> list[tuple[object, Callable]]:
        """(what it hears, bound handler) for each `@hears` method of this part."""
        out = []
        for name in dir(type(self)):
            kinds = getattr(getattr(type(self), name), "hears", ())
            out += [(kind, getattr(self, name)) for kind in kinds]
        return out
