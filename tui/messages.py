"""Messages from the engine's reader thread to the app."""

from __future__ import annotations

from textual.message import Message


class EngineEvent(Message):
    """An event from the engine process (one of the `core.frontends.protocol` event types)."""

    def __init__(self, event: object) -> None:
        super().__init__()
        self.event = event


class EngineDied(Message):
    """The engine process ended without being asked to."""

    def __init__(self, exitcode: int | None, last_words: str = "") -> None:
        super().__init__()
        self.exitcode = exitcode
        self.last_words = last_words  # last line of the engine's log
