"""The app's pictures in docs/ other than the story's: `python -m bench.view_shots [OUT_DIR]`.

As `bench.story_shots` does (and with its machinery): the app runs in Textual's test harness with its real engine
and the shipped models on a temporary breadth folder, at the instant pace, and keys are pressed as a person would;
each view below is saved as a PNG at 80x24 and 120x40. Then F12 draws the shipped mix model's slide, which is
kept as figure-mix.png. Every step is fixed (the sums, the snapshot, the lie), so a retake differs only
where the app changed.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path

from bench.story_shots import SIZES, picture_names, save, settle, take, until_ready

VIEWS = {  # the picture's name -> the keys pressed from the start screen (text is typed one character a key)
    "start": (),
    "procedure": ("f9", "home", "right", "right", "right"),  # the shipped mix at step 240, its scores climbing
    "demos": ("shift+f2",),  # what the default form's mix (35+35, seed 0) trains on
    "race": ("f4", *"45+91", "enter"),  # the shipped three race
    "lie-shading": ("f4", "f7", "f6", *"3+4+5", "enter"),  # off by one, shaded, the least sure character picked
}
FIGURE = "figure-mix"  # the shipped mix model's slide: held-out scores beside its loss curve


def pictures() -> list[str]:
    """Every file `python -m bench.view_shots` writes, by name."""
    return [*picture_names(VIEWS), f"{FIGURE}.png"]


async def shoot(size: tuple[int, int], out: Path) -> list[Path]:
    """Save each view of VIEWS at `size`, each in an app of its own (no view's state leaks into the next)."""
    from breadth.tui.app import BreadthApp

    written = []
    for name, keys in VIEWS.items():
        app = BreadthApp()
        async with app.run_test(size=size) as pilot:
            await until_ready(app, pilot)
            for key in keys:
                await pilot.press(key)
            await settle(app, pilot, 4.0)
            written.append(save(app, out, name, size))
    return written


async def slide(out: Path) -> list[Path]:
    """F12 in the app as it opens (the shipped mix model loaded, no engine needed): its scores slide, moved to
    `out/figure-mix.png`."""
    from breadth.tui.app import BreadthApp
    from breadth.tui.figure_files import figures_dir

    app = BreadthApp(start_engine=False)
    async with app.run_test(size=SIZES[-1]) as pilot:
        await pilot.press("f12")
        deadline = time.monotonic() + 120
        while not (made := sorted(figures_dir().glob("scores-*.png"))) and time.monotonic() < deadline:
            await pilot.pause(0.2)
    if not made:
        raise SystemExit("F12 drew no slide of the scores in 2 minutes")
    return [Path(shutil.move(made[0], out / f"{FIGURE}.png"))]


def figure(out: Path) -> list[Path]:
    """The shipped mix model's slide, as F12 draws it, in `out/figure-mix.png`."""
    return asyncio.run(slide(out))


def main() -> int:
    return take(shoot, sys.argv[1:], after=figure)


if __name__ == "__main__":
    sys.exit(main())
