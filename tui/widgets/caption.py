"""The caption line of a talk (`breadth-tui --demo`): where the story is and what the presenter says about it.

It shows the act (`2/5 The lie`) in bold and the caption of the current probe, or of the act on its
opening step, as plain text that is never read as markup. It sits last on its screen, above the footer:
at most two lines, taken from the screen's flexible parts, and hidden while it has nothing to say, so it
never pushes the race's lanes off the screen. The demo part mounts one on each view an act opens, so the
caption stays in sight there.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from breadth.core.world.text import shown

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

    def show(self, where: str, say: str) -> None:
        """Show `where` (the act) in bold, then `say`; nothing at all hides the line."""
        self.said = (where, say)
        text = Text(overflow="ellipsis")
        if where:
            text.append(shown(where), "bold")
            text.append("  " if say else "")
        text.append(shown(say))
        self.set_class(bool(where or say), "said")
        self.update(text)

    def plain(self) -> str:
        """What the line says, as text (for tests and the screen captures)."""
        where, say = self.said
        return f"{where}  {say}".strip()
