"""Pictures of the default story's acts for docs/: `python -m bench.story_shots [OUT_DIR]`.

The app runs in Textual's test harness with its real engine and the shipped models, on a temporary breadth
folder, in demo mode with the default story; PageDown is pressed as a presenter would, and at each act's telling
step the screen is saved as PNG, rendered as the app's own screenshots are (Textual's SVG through cairo), at 80x24
and 120x40. Races run at the instant pace, so the pictures show finished lanes.
The machinery here (a fresh folder, waiting for the engine and for plays, saving a PNG) is shared with
`bench.view_shots`, which takes the app's other pictures.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from breadth.core.storage.files import write_atomic

SHOTS = {  # PageDowns pressed -> the picture's name: one telling step of each act
    2: "story-1-race",
    5: "story-1-mix-does-both",
    7: "story-2-past-taught",
    10: "story-3-lie",
    14: "story-4-procedure",  # its second moment (step 240: the right call, a wrong answer)
    16: "story-5-matrix",
    17: "story-6-curve",
    18: "story-7-curve-rises",
    19: "story-8-transfer-map",
}
SIZES = ((80, 24), (120, 40))
SETTLE = {12: 6.0, 13: 4.0, 14: 4.0, 16: 2.0, 17: 2.0, 18: 2.0, 19: 2.0}  # seconds for a view to fill in


def picture_names(shots, sizes=SIZES) -> list[str]:
    """The files a maker writes: each shot's name at each size, `NAME-WxH.png`."""
    return [f"{name}-{width}x{height}.png" for name in shots for width, height in sizes]


async def until_ready(app, pilot) -> None:
    """Wait (up to 2 minutes) for the engine, then set the instant pace so plays finish at once, and a steady
    cursor in the text boxes (a blink's phase would make a retake differ from the last one)."""
    from textual.widgets import Input

    deadline = time.monotonic() + 120
    while not app.supervisor.ready and time.monotonic() < deadline:
        await pilot.pause(0.2)
    app.playground.pace = 0
    for box in app.screen.query(Input):
        box.cursor_blink = False


async def settle(app, pilot, seconds: float = 0.5) -> None:
    """Wait (up to 5 minutes) for the playground's plays to end, then `seconds` more for views to fill in."""
    await pilot.pause(0.3)
    deadline = time.monotonic() + 300
    while app.playground.busy() and time.monotonic() < deadline:
        await pilot.pause(0.1)
    await pilot.pause(seconds)


def save(app, out: Path, name: str, size: tuple[int, int]) -> Path:
    """The screen as `out/NAME-WxH.png`, rendered as the app's own Ctrl+F screenshots are (`screen_png`: cairo,
    the terminal's columns kept; rsvg-convert dropped the spaces that right-align a table's numbers)."""
    from breadth.tui.figure_files import screen_png

    png = out / f"{name}-{size[0]}x{size[1]}.png"
    write_atomic(png, screen_png(app.export_screenshot(), scale=1))
    return png


async def shoot(size: tuple[int, int], out: Path) -> list[Path]:
    """Step through the default story at `size`, saving each act's telling step; the PNGs written."""
    from breadth.tui.app import BreadthApp
    from breadth.tui.story import default_story

    app = BreadthApp(demo=default_story())
    written = []
    async with app.run_test(size=size) as pilot:
        await until_ready(app, pilot)
        for presses in range(1, max(SHOTS) + 1):
            await pilot.press("pagedown")
            await settle(app, pilot, SETTLE.get(presses, 0.5))
            if presses in SHOTS:
                written.append(save(app, out, SHOTS[presses], size))
    return written


def output_folder(args: list[str]) -> Path:
    """The folder the pictures go to (the first argument, else docs/), created with its parents if missing."""
    out = Path(args[0] if args else "docs")
    out.mkdir(parents=True, exist_ok=True)
    return out


def take(
    shooter: Callable[[tuple[int, int], Path], Awaitable[list[Path]]],
    args: list[str],
    after: Callable[[Path], list[Path]] = lambda out: [],
) -> int:
    """Run `shooter` at each size, then `after`, on a fresh temporary breadth folder, printing each file written."""
    out = output_folder(args)
    with tempfile.TemporaryDirectory() as home:
        os.environ["BREADTH_HOME"] = home  # a talk's fresh start: no stored runs, no runs of last week
        for size in SIZES:
            for png in asyncio.run(shooter(size, out)):
                print(png)
        for path in after(out):
            print(path)
    return 0


def main() -> int:
    return take(shoot, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
