"""Figures for slides (Ctrl+F): the screen as SVG and PNG, and the current model's slide, in the figures folder.

The screen's SVG is taken on the UI thread (it reads the screen, in about 20 ms); everything slow runs
in a thread worker: writing, turning the SVG into a PNG (cairosvg, which needs the cairo library) and
drawing the model's scores and loss curve (matplotlib, imported only then). The worker never raises:
it posts what it wrote, and why anything was not made, as one message the app shows in one line.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.screen import Screen

from breadth.core.storage.files import write_atomic
from breadth.core.storage.paths import data_dir
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.shown import shown
from breadth.tui.guard import log_error, one_line

SCREEN_SCALE = 2  # PNG pixels per SVG pixel: an 80x24 screen becomes 1988x1271, sharp on a 1920-pixel projector
BLANK_BRAILLE = "\u2800"  # the braille cell with no dots

# Textual's SVG asks for Fira Code, which cairosvg cannot fetch: it takes only the first font named and
# falls back to a proportional font, so the columns drift. The system's monospace font (DejaVu Sans Mono,
# 0.602 em wide) spaced out to Textual's 0.61 em cells keeps them, even along a long run.
_TERMINAL_FONT = re.compile(r"font-family:\s*Fira Code,\s*monospace")  # CSS's property, as Textual writes it
_TERMINAL_STYLE = "font-family: monospace; letter-spacing: 0.16px"  # CSS's property
# The monospace font usually lacks braille (the loss plot's dots); DejaVu Sans, fontconfig's usual sans-serif,
# has them 0.75 em wide: at 16.1 px, plus the spacing, a braille cell is Textual's 12.2 px. A space inside a
# braille run becomes the blank braille cell, as wide as the dots around it.
_BRAILLE_RUN = re.compile(r"(<text [^>]*)>([^<]*[\u2800-\u28ff][^<]*)</text>")
_BRAILLE_STYLE = ' style="font-family: sans-serif; font-size: 16.1px"'  # CSS's property


def figures_dir() -> Path:
    """Where Ctrl+F writes: `figures/` in the user's breadth folder."""
    return data_dir() / "figures"


@dataclass(frozen=True)
class Slide:
    """A view's own picture for F12, in place of the current model's: its files' first name and what draws it."""

    kind: str  # the files are KIND-STAMP.png and .svg, e.g. `matrix`
    draw: Callable[[Path], list[Path]]  # in the worker: draws to a path without its suffix, returns the files written


@dataclass
class FiguresAsked(Message):
    """A view asks for figures of its own: the screen as it is and `slide`; the line saying where goes to `view`."""

    slide: Slide
    view: Screen  # has say(line, error=False)


@dataclass
class FiguresSaved(Message):
    """The figures worker wrote `written`; `missing` says what it could not make, and why ('' if nothing)."""

    written: list[Path]
    missing: str = ""


@dataclass
class FiguresFailed(Message):
    """The figures worker wrote nothing it was asked to: `why`, in one line."""

    why: str


def rasterisable(svg: str) -> str:
    """Textual's screenshot SVG with fonts cairo can draw in columns: monospace, braille in a font that has it."""

    def braille(match: re.Match) -> str:
        dots = match[2].replace("&#160;", BLANK_BRAILLE).replace(" ", BLANK_BRAILLE)
        return f"{match[1]}{_BRAILLE_STYLE}>{dots}</text>"

    return _BRAILLE_RUN.sub(braille, _TERMINAL_FONT.sub(_TERMINAL_STYLE, svg))


def screen_png(svg: str, scale: float = SCREEN_SCALE) -> bytes:
    """The screenshot as PNG, `scale` pixels an SVG pixel; ImportError or OSError if cairo cannot be loaded."""
    import cairosvg  # loads the cairo library: OSError if the system lacks it

    return cairosvg.svg2png(bytestring=rasterisable(svg).encode(), scale=scale)


def free_stem(folder: Path, stamp: str) -> str:
    """`stamp`, or `stamp-2`, `stamp-3`... so that no earlier screen or slide of that second is replaced."""
    for n in range(1, 1000):
        stem = stamp if n == 1 else f"{stamp}-{n}"
        if not any(folder.glob(f"*-{stem}.*")):
            return stem
    return f"{stamp}-{time.monotonic_ns()}"


def save_figures(
    svg: str, run: RunMeta | None, name: str, folder: Path, stamp: str, slide: Slide | None = None
) -> FiguresSaved | FiguresFailed:
    """Write screen-STAMP.svg and .png, and (with a model) scores-STAMP.png and .svg, into `folder`; never raises.
    A view's own `slide` replaces the model's: KIND-STAMP.png and .svg.

    Each file is written atomically; a part that fails is named in `missing` and the rest is still written.
    """
    try:
        return _save(svg, run, name, folder, stamp, slide)
    except Exception as e:  # noqa: BLE001 -- in a worker: an error must become a line, not end the app
        log_error(e, "saving figures")
        return FiguresFailed(f"figures not saved: {shown(one_line(e))}")


def _save(
    svg: str, run: RunMeta | None, name: str, folder: Path, stamp: str, slide: Slide | None = None
) -> FiguresSaved | FiguresFailed:
    written: list[Path] = []
    missing: list[str] = []
    try:
        stem = free_stem(folder, stamp)
        written.append(write_atomic(folder / f"screen-{stem}.svg", svg.encode()))  # makes the folder
    except OSError as e:
        return FiguresFailed(f"figures not saved ({_why(e, 'writing the screenshot')}): {_shown(folder)}")
    try:
        written.append(write_atomic(folder / f"screen-{stem}.png", screen_png(svg)))
    except Exception as e:  # noqa: BLE001 -- no cairo library, a full disk: the other files are still written
        missing.append(f"no PNG of the screen ({_why(e, 'converting the screenshot to PNG')})")
    if slide is not None:
        try:
            written += slide.draw(folder / f"{slide.kind}-{stem}")
        except Exception as e:  # noqa: BLE001 -- matplotlib missing or failing: the screen is still saved
            missing.append(f"no figure of the {slide.kind} ({_why(e, f'drawing the {slide.kind}')})")
    elif run is None:
        missing.append("no model loaded, so no slide of its scores")
    else:
        try:
            from breadth.core.results.figures import model_figure

            written += model_figure(run, folder / f"scores-{stem}", name)
        except Exception as e:  # noqa: BLE001 -- matplotlib missing or failing: the screen is still saved
            missing.append(f"no slide of the scores ({_why(e, 'drawing the scores slide')})")
    return FiguresSaved(written, "; ".join(missing))


def _why(error: Exception, doing: str) -> str:
    """`error` in a few words (`not a directory`, `no space left on device`); one not foreseen (not a missing
    library or a file error) is also logged."""
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno).lower()
    if not isinstance(error, ImportError | OSError):
        log_error(error, doing)
    return shown(one_line(error, 80))


def _shown(folder: Path) -> str:
    """`folder`, under the home folder as `~/...`, made safe to show (the folder's name comes from the person)."""
    try:
        return shown(f"~/{folder.relative_to(Path.home())}")
    except ValueError:
        return shown(folder)


def saved_line(message: FiguresSaved) -> str:
    """`saved ~/.local/share/breadth/figures/{screen,scores}-20260101-120000.*` (each in SVG and PNG; else each
    file's formats listed), then what is missing and why."""
    kinds: dict[str, list[str]] = {}  # screen-STAMP -> its suffixes, in the order written
    for path in message.written:
        kinds.setdefault(path.stem, []).append(path.suffix[1:])
    stems = sorted(kinds, reverse=True)  # screen first
    if len(stems) > 1 and all(len(k) == 2 for k in kinds.values()):  # the two parts, each in both formats
        stamp = stems[0].split("-", 1)[1]
        files = f"{{{','.join(stem.split('-', 1)[0] for stem in stems)}}}-{stamp}.*"
    else:
        files = ", ".join(f"{stem}.{'/'.join(kinds[stem])}" for stem in stems)
    line = f"saved {_shown(message.written[0].parent)}/{files}"
    return f"{line}; {message.missing}" if message.missing else line
