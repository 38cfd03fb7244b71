"""The caption line of a talk (`breadth-tui --demo`): where the story is and what the presenter says about it.

It shows the act (`2/5 The lie`) in bold and the caption of the current probe, or of the act on its
opening step, as plain text that is never read as markup. It sits last on its screen, above the footer:
at most two lines, taken from the screen's flexible parts, and hidden while it has nothing to say, so it
never pushes the race's lanes off the screen. The demo part mounts one on each view an act opens, so the
caption stays in sight there.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from breadth.core.world.text.shown import shown

MAX_LINES = 2  # a longer caption is cut with an ellipsis


class Caption(Static):
    """The act and the presenter's caption; hidden when empty."""

    DEFAULT_CSS = """
    Caption {
        height: auto;
        max-height: 2;
        padding: 0 1;
        background: $boost;
        color: $text;
        display: none;
    }
    Caption.said {
        display: block;
    }
    """  # a widget mounted on any screen (the main one, the matrix, the procedure view): its style goes with it

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.said = ("", "")  # (where in the story, the caption) as last shown
        self.text = Text()  # the caption as one line, wrapped to the width when shown

    def show(self, where: str, say: str) -> None:
        """Show `where` (the act) in bold, then `say`; nothing at all hides the line."""
        self.said = (where, say)
        text = Text()
        if where:
            text.append(shown(where), "bold")
            text.append("  " if say else "")
        text.append(shown(say))
        self.text = text
        self.set_class(bool(where or say), "said")
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Wrap the caption at words into at most MAX_LINES lines; a longer one ends with `…` on the last."""
        width = self.content_region.width or max(self.screen.size.width - 2, 1)  # before its first layout
        lines = self.text.wrap(Console(width=width), width)
        for line in lines:
            line.rstrip()  # the space a line was broken at
        if len(lines) > MAX_LINES:
            lines = lines[:MAX_LINES]
            lines[-1].truncate(width - 1)
            lines[-1].append("…")
        self.update(Text("\n").join(lines))

    def plain(self) -> str:
        """What the line says, as text (for tests and the screen captures)."""
        where, say = self.said
        return f"{where}  {say}".strip()
