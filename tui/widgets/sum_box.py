"""The sum box: a bounded text box that recalls the sums played before (Up older, Down newer)."""

from __future__ import annotations

from textual.binding import Binding

from breadth.tui.widgets.bounded_input import BoundedInput

MAX_HISTORY = 100  # sums the sum box remembers for Up and Down
MAX_SUM = 40  # characters in the sum box (a whole episode, sum and calls, fits in the model's context)
HINT = "a sum: 23+45, 3+4+5, 9-4-3 or 12+34+56"  # what the empty box shows: sums a listener reads
CODED_HINT = (
    "a sum: 23+45, 3+4+5, 9-4-3, or a3x2: 12+34+56"  # with codes on (Shift+F5): an environment may be named first
)


class SumBox(BoundedInput):
    """The sum box: Up recalls the sums played before, newest first; Down goes back towards what was typed."""

    BINDINGS = [Binding("up", "older", "Earlier sum", show=False), Binding("down", "newer", "Later sum", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder=HINT, max_length=MAX_SUM, **kwargs)
        self.history: list[str] = []  # sums played, oldest first
        self.recalled: int | None = None  # index into history on show, None while editing a new sum
        self.draft = ""  # what was typed before Up was first pressed

    def show_codes(self, codes: bool) -> None:
        """The hint names an environment by its code (`a3x2: 12+34+56`) only where a person asked for codes."""
        self.placeholder = CODED_HINT if codes else HINT

    def remember(self, text: str) -> None:
        """Keep a played sum (not twice in a row), and start the next recall from the newest."""
        if not self.history or self.history[-1] != text:
            self.history = [*self.history, text][-MAX_HISTORY:]
        self.recalled = None

    def action_older(self) -> None:
        if not self.history or self.recalled == 0:
            return
        if self.recalled is None:
            self.draft, self.recalled = self.value, len(self.history)
        self.recalled -= 1
        self._show(self.history[self.recalled])

    def action_newer(self) -> None:
        if self.recalled is None:
            return
        self.recalled += 1
        if self.recalled == len(self.history):
            self.recalled = None
        self._show(self.draft if self.recalled is None else self.history[self.recalled])

    def _show(self, text: str) -> None:
        self.value = text
        self.cursor_position = len(text)
