"""A small modal that asks for a checkpoint path (to save to, or to load from)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class PathPrompt(ModalScreen[str | None]):
    """Ask for a path; dismisses with the text, or None on Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", check=None) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.check = check  # path -> error text or None, run before dismissing

    def compose(self) -> ComposeResult:
        with Vertical(id="path-box"):
            yield Label(self.title_text)
            yield Input(self.value, id="path")
            yield Static("Enter to confirm, Escape to cancel", id="path-message")

    @on(Input.Submitted, "#path")
    def confirm(self, event: Input.Submitted) -> None:
        """Accept the path unless the check refuses it (then say why, inline)."""
        path = event.value.strip()
        problem = "a path is needed" if not path else (self.check(path) if self.check else None)
        if problem:
            msg = self.query_one("#path-message", Static)
            msg.add_class("error")
            msg.update(problem)
            return
        self.dismiss(self.accept(path))

    def accept(self, path: str):
        """What the prompt answers once `path` passed the check: here the path itself."""
        return path

    def action_cancel(self) -> None:
        self.dismiss(None)
