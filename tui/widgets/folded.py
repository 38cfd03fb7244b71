"""A folded section that makes its widgets the first time it opens, so that while folded it costs nothing.

The training form's two folded sections ("more environments", "advanced") hold two fifths of the work the app does to
start (Python calls counted with cProfile over `run_test` at 80x24: 1.13 M with neither made against 1.86 M with both),
and most people never open them. Their fields' values live in the form until then (`TrainPanel.value`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.widget import Widget
from textual.widgets import Collapsible


class FoldedSection(Collapsible):
    """A `Collapsible` whose contents are made by `make` when it is first opened, not when it is composed."""

    def __init__(self, make: Callable[[], Iterable[Widget]], *, title: str, id: str) -> None:
        super().__init__(title=title, collapsed=True, id=id)
        self.make = make
        self.made = False  # its widgets exist (it has been opened once)

    def watch_collapsed(self, collapsed: bool) -> None:
        """Opened the first time: make the widgets (they join the DOM at once, so a query right after finds them)."""
        if not collapsed and not self.made:
            self.made = True
            self.query_one(Collapsible.Contents).mount_all(self.make())
