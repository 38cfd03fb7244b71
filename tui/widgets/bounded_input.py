"""A text box that never grows past its `max_length`: a paste is cut to fit, keys past the limit are refused quietly.

Textual's Input refuses a paste that does not fit as a whole and rings the terminal bell for every key it
refuses. A 100 kB paste a terminal types as keystrokes rang it 100,000 times (about 4.5 of the 14.5 s the
app froze for, measured in tmux). Here the bell rings once, the app drops keys a full box would refuse
before routing them (`BreadthApp.on_event`, counting the keys already on their way as `incoming`), and one
`Overflow` message lets the box's owner say inline what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import Input


class BoundedInput(Input):
    """An Input of at most `max_length` characters that says, once, when text did not fit."""

    @dataclass
    class Overflow(Message):
        """Text did not fit in `box`: `dropped` characters of a paste were left out (0: typed keys were refused)."""

        box: BoundedInput
        dropped: int = 0

        @property
        def control(self) -> BoundedInput:
            """The box, so that handlers can select it (`@on(BoundedInput.Overflow, "#sum")`)."""
            return self.box

    def __init__(self, value: str = "", *, max_length: int, **kwargs) -> None:
        super().__init__(value, max_length=max_length, **kwargs)
        self.told = False  # an Overflow was posted since the value last changed (one message, not one a key)
        self.rang = False  # the bell rang for a refused character since the value last changed
        self.incoming = 0  # printable keys the app routed here that the box has not handled yet

    def full(self) -> bool:
        """True if a character typed now will be refused: once the keys on their way are in, the box is at its
        limit, nothing is selected and every character it takes made it longer (no type or restriction)."""
        takes_any = self.type == "text" and not self.restrict
        return takes_any and len(self.value) + self.incoming >= self.max_length and self.selection.is_empty

    def refuse_key(self) -> None:
        """A character typed into a full box: post Overflow once, until the value changes."""
        if not self.told:
            self.told = True
            self.post_message(self.Overflow(self))

    def restricted(self) -> None:
        """A key past the limit is refused quietly; another refusal (a letter in a number) rings the bell once."""
        if len(self.value) >= self.max_length:
            self.refuse_key()
        elif not self.rang:
            self.rang = True
            super().restricted()

    def watch_value(self) -> None:
        self.told = self.rang = False

    def _on_blur(self, event: events.Blur) -> None:
        """Leaving the box shows its text from its first character: a value as wide as the box (the learning rate's
        `0.0015` in its 6 cells) had been scrolled one cell for the cursor past its end, and read `.0015` until the
        box was focused again."""
        self.scroll_to(x=0, animate=False, immediate=True)

    def _on_key(self, event: events.Key) -> None:
        """A key the app routed here arrived (Input's own handler runs next)."""
        if event.is_printable and self.incoming:
            self.incoming -= 1

    def _on_paste(self, event: events.Paste) -> None:
        """Insert the paste's first line (as Input does), cut to the room left; say how much was left out."""
        event.stop()
        event.prevent_default()  # Input's own handler would refuse the whole paste
        if not event.text:
            return
        line = event.text.splitlines()[0]
        start, end = sorted(self.selection)
        room = max(self.max_length - (len(self.value) - (end - start)), 0)
        if line[:room]:
            self.replace(line[:room], start, end)
        if len(line) > room:
            self.post_message(self.Overflow(self, len(line) - room))
