"""Text from outside the program made safe to show: on a terminal, in Rich and Textual, and in matplotlib figures.

Anything read from a file, a store or a checkpoint, and anything a person typed, is text to show: never an
escape sequence the terminal obeys, never markup, never mathtext. `shown` is the one place that decides how
such a string looks: every character that could act on the terminal or move what is on screen (C0 and C1
controls, DEL, and so ESC and every CSI/OSC sequence; format characters such as bidi overrides and
zero-width joiners; lone surrogates; line and paragraph separators; noncharacters) is written out as its
escape, `\\x1b`, `\\u202e`, so a person sees that it was there. `shown_text` hands Rich and Textual a `Text`,
which neither parses (a markup string would be: Rich reads `[link=...]`, Textual also `[$variable]`, which
`rich.markup.escape` leaves alone). `figure_text` also keeps matplotlib from reading `$...$` as mathtext and
a legend from hiding a label that starts with `_`; `FIGURE_RC` makes sure no text goes to LaTeX.
"""

from __future__ import annotations

import unicodedata

from rich.text import Text

from breadth.core.world.text.transcript import Transcript, visible

ACTING = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})  # controls, format (bidi, zero-width), surrogates, separators
NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}  # escapes written by name, as Python writes them
FIGURE_RC = {"text.usetex": False, "text.parse_math": True}  # matplotlib: no LaTeX; `\$` is a literal dollar


def shown(text: object, newlines: bool = False) -> str:
    """`text` (its str()) as it may be shown: each character that could act on the terminal or reorder the
    screen written out as its escape (`\\x1b`, `\\x9b`, `\\u202e`, `\\ud800`), the rest as it is.

    A newline is escaped too (`\\n`), so the result stays on one line (a table cell, a title, a label);
    with `newlines`, newlines are kept (and a CR LF pair becomes one newline) for text meant to span lines.
    """
    text = str(text)
    if text.isprintable():  # every character this escapes is unprintable: the common case costs one scan
        return text
    if newlines:
        text = text.replace("\r\n", "\n")
    return "".join(_escape(c) if _acts(c) and not (newlines and c == "\n") else c for c in text)


def _acts(c: str) -> bool:
    """True for a character that is not text to the terminal (or not valid in an SVG: the noncharacters)."""
    code = ord(c)
    return unicodedata.category(c) in ACTING or 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def _escape(c: str) -> str:
    code = ord(c)
    if c in NAMED:
        return NAMED[c]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown_text(text: object, style: str = "", newlines: bool = False) -> Text:
    """`text` made safe by `shown`, as a Rich `Text` in `style`: Rich and Textual draw it as it is, no markup read."""
    return Text(shown(text, newlines), style=style)


def figure_text(text: object) -> str:
    """`text` made safe by `shown` for a matplotlib title, label, tick or legend entry (with FIGURE_RC in force):
    `$` escaped (`\\$`), so no mathtext is parsed, and a space before a leading `_`, which a legend would hide."""
    out = shown(text).replace("$", "\\$")
    return " " + out if out.startswith("_") else out


def clip(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut with `…` where a word ends (after a space or `+`) so no word is
    cut in half, unless that would keep less than half the width (`3 singles 36+two-digit minus 36` in 17:
    `3 singles 36+…`)."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    if text[width - 1] not in " +":  # the cut falls inside a word: back to where the last one ended
        end = max(head.rfind(" "), head.rfind("+")) + 1
        head = head[:end] if end > width // 2 else head
    return head.rstrip() + "…"


def clip_title(title: str, width: int) -> str:
    """A model's title cut by `clip`, keeping a trailing run number, which tells it from its mix's others
    (`trained just now: mix 35+35 #1` -> `trained… #1`)."""
    if len(title) <= width:
        return title
    head, sep, tail = title.rpartition(" #")
    if sep and tail.isdigit() and len(tail) + 3 < width:
        return clip(head + " ", width - len(tail) - 2).removesuffix(" ") + " #" + tail
    return clip(title, width)


def one_line(what: object, limit: int = 400, typed: bool = False) -> str:
    """An error (or any text) as one line to show: the first line of its message (an error without one: its
    type's name), with `typed` its type's name before it, made safe by `shown`, cut to `limit` characters."""
    lines = str(what).strip().splitlines()
    name = type(what).__name__ if isinstance(what, BaseException) else ""
    text = lines[0] if lines else name
    if typed and name and lines:
        text = f"{name}: {text}"
    text = shown(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def episode_text(transcript: Transcript) -> Text:
    """A transcript on one line, each segment in its writer's colour, made safe to show."""
    return Text.assemble(*((shown(visible(seg.text)), seg.role.style) for seg in transcript.segments))
