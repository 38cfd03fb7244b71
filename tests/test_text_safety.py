"""Stored and typed strings are text to show: `shown` leaves no control, format or bidi character, and Rich,
Textual and matplotlib draw what it returns literally (no markup, no mathtext, no legend entry hidden)."""

from __future__ import annotations

import html
import io
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from textual.content import Content

from breadth.core.results.figures import pyplot
from breadth.core.world.text.shown import figure_text, shown, shown_text

HOSTILE = (  # pieces a hostile or unlucky string is made of
    "\x1b",
    "\x1b[2J",  # CSI: clear the screen
    "\x1b]0;pwned\x07",  # OSC: set the terminal's title, ended by BEL
    "\x1b]8;;file:///etc/passwd\x1b\\",  # OSC 8: a hyperlink
    "\x07",
    "\x00",
    "\x7f",
    "\x9b31m",  # C1 CSI
    "\x85",  # C1 next line
    "\r",
    "\n",
    "\r\n",
    "\t",
    "\b",
    "[",
    "]",
    "\\",
    "[/x]",
    "[b]",
    "[link=file:///etc/passwd]",
    "[/link]",
    "[$accent]",  # a Textual markup variable
    ":smile:",  # a Rich emoji code
    "$\\foo$",  # matplotlib mathtext that does not parse
    "$",
    "_",
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u200d",  # zero-width joiner
    "\u200b",  # zero-width space
    "\ufeff",  # byte order mark
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\ud800",  # a lone surrogate (JSON can hold one)
    "\ufffe",  # a noncharacter (not allowed in SVG)
    "\U000e0041",  # a tag character
    "2d 35+3d 35",
    "é",
    "漢",
)
ACTING = {"Cc", "Cf", "Cs", "Zl", "Zp"}
strings = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)), max_size=12).map("".join)


def _acting(text: str) -> list[str]:
    """The characters of `text` a terminal could act on, or that reorder or hide what is drawn."""
    return [c for c in text if unicodedata.category(c) in ACTING or c in "\ufffe\uffff"]


def _rich(renderable) -> str:
    """What Rich writes for `renderable`, uncoloured, on one very long line."""
    console = Console(file=io.StringIO(), width=10_000, color_system=None, highlight=False)
    console.print(renderable, soft_wrap=True, end="")
    return console.file.getvalue()


@settings(max_examples=300, deadline=None)
@given(strings)
def test_shown_leaves_nothing_the_terminal_acts_on_and_rich_and_textual_draw_it_as_it_is(text):
    """Any string, shown: no control, format, separator or surrogate character; Rich writes it and Textual
    draws it character for character (no markup read, no emoji code replaced); one line unless asked."""
    out = shown(text)
    assert _acting(out) == [] and "\n" not in out
    assert _rich(shown_text(text)) == out
    content = Content.from_rich_text(shown_text(text))
    assert content.plain == out
    assert "".join(segment.text for segment in content.render_segments()) == out
    out.encode("utf-8")  # a lone surrogate would fail here (and on the terminal)


@settings(max_examples=200, deadline=None)
@given(strings)
def test_shown_with_newlines_keeps_only_the_newlines(text):
    """With `newlines`, a newline (and CR LF) stays a newline; everything else is as on one line."""
    out = shown(text, newlines=True)
    assert _acting(out.replace("\n", "")) == []
    assert out.split("\n") == [shown(line) for line in text.replace("\r\n", "\n").split("\n")]


@settings(max_examples=200, deadline=None)
@given(st.text().filter(str.isprintable))
def test_printable_text_is_shown_unchanged(text):
    """Text with nothing to escape (including `[`, `$` and backslashes) is shown exactly as it is."""
    assert shown(text) == text


def test_escapes_are_written_as_python_writes_them():
    """ESC, C1 CSI, BEL, a newline, a bidi override, a surrogate and a tag character read as their escapes."""
    assert shown("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert shown("\x9b2J\n\t\u202eabc\ud800\U000e0041") == "\\x9b2J\\n\\t\\u202eabc\\ud800\\U000e0041"


def _svg_texts(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # characters DejaVu lacks show as boxes
@settings(max_examples=40, deadline=None)
@given(strings.filter(lambda text: shown(text).strip()))  # matplotlib draws no text for an empty string
def test_figure_text_is_drawn_literally_as_a_title_a_tick_and_a_legend_entry(text):
    """Any string through `figure_text`: matplotlib draws it as shown (mathtext never parsed, a leading `_` kept
    in the legend) in a title, a tick label and a legend entry, and writes a PNG and a valid SVG."""
    plt = pyplot()
    label = figure_text(text)
    expected = shown(text)
    expected = " " + expected if expected.startswith("_") else expected
    with plt.rc_context({"svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0, 1], label=label)
        ax.set_title(label)
        ax.set_yticks([0.5], [label])
        ax.legend()
        svg, png = io.BytesIO(), io.BytesIO()
        fig.savefig(svg, format="svg")
        fig.savefig(png, format="png")
    plt.close(fig)
    assert _svg_texts(svg.getvalue().decode()).count(expected) == 3  # title, tick and legend
