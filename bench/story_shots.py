"""Pictures of the default story's acts for docs/: `python -m bench.story_shots [OUT_DIR]` (needs rsvg-convert).

The app runs in Textual's test harness with its real engine and the shipped models, on a temporary breadth
folder, in demo mode with the default story; PageDown is pressed as a presenter would, and at each act's telling
step the screen is saved as SVG (Textual's export) and PNG (rsvg-convert, from Debian's librsvg2-bin: a faithful
monospace render), at 80x24 and 120x40. Races run at the instant pace, so the pictures show finished lanes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHOTS = {  # PageDowns pressed -> the picture's name: one telling step of each act
    2: "story-1-race",
    5: "story-1-mix-does-both",
    7: "story-2-past-taught",
    10: "story-3-lie",
    14: "story-4-procedure",  # its second moment (step 240: the right call, a wrong answer)
    16: "story-5-matrix",
    17: "story-6-curve",
    18: "story-7-curve-rises",
}
SIZES = ((80, 24), (120, 40))
SETTLE = {12: 6.0, 13: 4.0, 14: 4.0, 16: 2.0, 17: 2.0, 18: 2.0}  # seconds for a view to fill in (replays, runs)


async def shoot(size: tuple[int, int], out: Path) -> list[Path]:
    """Step through the default story at `size`, saving each act's telling step; the PNGs written."""
    from breadth.tui.app import BreadthApp
    from breadth.tui.story import default_story

    app = BreadthApp(demo=default_story())
    written = []
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + 120
        while not app.supervisor.ready and time.monotonic() < deadline:
            await pilot.pause(0.2)
        app.playground.pace = 0
        for presses in range(1, max(SHOTS) + 1):
            await pilot.press("pagedown")
            await pilot.pause(0.3)
            while app.playground.busy() and time.monotonic() < deadline + 300:
                await pilot.pause(0.1)
            await pilot.pause(SETTLE.get(presses, 0.5))
            if presses in SHOTS:
                svg = out / f"{SHOTS[presses]}-{size[0]}x{size[1]}.svg"
                svg.write_text(app.export_screenshot())
                png = svg.with_suffix(".png")
                subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], check=True)
                svg.unlink()
                written.append(png)
    return written


def output_folder(args: list[str]) -> Path:
    """The folder the pictures go to (the first argument, else docs/), created with its parents if missing."""
    out = Path(args[0] if args else "docs")
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> int:
    out = output_folder(sys.argv[1:])
    with tempfile.TemporaryDirectory() as home:
        os.environ["BREADTH_HOME"] = home  # a talk's fresh start: no stored runs, no runs of last week
        for size in SIZES:
            for png in asyncio.run(shoot(size, out)):
                print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
