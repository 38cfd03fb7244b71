"""A small modal that asks for a path and checks it off the UI thread (a file named by a person can block).

The check (and whatever it leads to, such as copying a checkpoint) runs in a thread worker; meanwhile
the prompt says "checking...", keeps taking keys, and Escape closes it at once. A result that comes
back after Escape, or after a newer Enter, is ignored. Every refusal is one line in the prompt. What is
typed or pasted is text: a pasted ESC or bidi override shows as its escape (`\x1b`), never acts on the screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from breadth.core.storage.header import CheckpointError
from breadth.core.world.text.shown import shown
from breadth.tui.guard import app_log, guarded, log_error, one_line
from breadth.tui.widgets.bounded_input import BoundedInput

CHECKING = "checking..."
PATH_MAX = 4096  # characters in a path: Linux's PATH_MAX (a longer one can name no file)


class PathBox(BoundedInput):
    """The path box: a paste is written as `shown` writes it (keys cannot type a control character; a paste can),
    then cut to PATH_MAX characters."""

    def _on_paste(self, event: events.Paste) -> None:
        event.text = shown(event.text, newlines=True)  # handlers run subclass first: BoundedInput's pastes it


class PathPrompt(ModalScreen[object]):
    """Ask for a path; dismisses with what `resolve` makes of it, or None on Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    @dataclass
    class Checked(Message):
        """Attempt `attempt` was checked: `answer` to dismiss with, or `problem` to show."""

        attempt: int
        answer: object = None
        problem: str = ""

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.attempt = 0  # Enter presses so far: only the latest one's result counts

    def compose(self) -> ComposeResult:
        with Vertical(id="path-box"):
            yield Label(self.title_text)
            yield PathBox(self.value, id="path", max_length=PATH_MAX)
            yield Static("Enter to confirm, Escape to cancel", id="path-message")

    @on(BoundedInput.Overflow, "#path")
    @guarded
    def say_overflow(self, message: BoundedInput.Overflow) -> None:
        left_out = f"pasted text cut ({message.dropped:,} characters left out): " if message.dropped else ""
        self.say(f"{left_out}a path is at most {PATH_MAX} characters", error=True)

    @on(Input.Submitted, "#path")
    @guarded
    def confirm(self, event: Input.Submitted) -> None:
        """Check the path in a thread worker; the prompt closes once it passes, or says why not."""
        text = event.value.strip()
        self.attempt += 1
        if not text:
            self.say("a path is needed", error=True)
            return
        self.say(CHECKING)
        self.run_worker(
            partial(self._check, self.attempt, text), name="check path", group="check", thread=True, exclusive=True
        )

    def _check(self, attempt: int, text: str) -> None:
        """Run `resolve` (a thread worker) and post its answer, or its refusal as one line."""
        answer, problem = None, ""
        try:
            answer = self.resolve(text)
        except (CheckpointError, OSError) as e:
            problem = one_line(e)
        except Exception as e:  # noqa: BLE001 -- a bug must not end the app: log it, say it
            problem = f"unexpected error: {one_line(e)}"
            if log_error(e, f"{type(self).__name__}.resolve"):
                problem += f" (details in {app_log()})"
        self.post_message(self.Checked(attempt, answer, problem))

    @on(Checked)
    @guarded
    def settle(self, message: Checked) -> None:
        """Close with the answer, or show the refusal; a stale result (a newer Enter, or Escape) is ignored."""
        if message.attempt != self.attempt or not self.is_current:
            return
        if message.problem:
            self.say(message.problem, error=True)
        else:
            self.dismiss(message.answer)

    def resolve(self, text: str) -> object:
        """What the prompt answers for `text` (runs in a thread; raise OSError or CheckpointError to refuse)."""
        return text

    def say(self, text: str, error: bool = False) -> None:
        """Show one line under the path box, as text (a path typed may hold '[/]' or an ESC: neither acts)."""
        msg = self.query_one("#path-message", Static)
        msg.set_class(error, "error")
        msg.update(Content(shown(text)))

    @property
    def message(self) -> str:
        """The line under the path box (what the person reads)."""
        return str(self.query_one("#path-message", Static).render())

    @guarded
    def action_cancel(self) -> None:
        """Close at once; a check still running is abandoned and its result ignored."""
        self.attempt += 1
        self.workers.cancel_group(self, "check")
        self.dismiss(None)
