"""F12, figures for slides: the screen as SVG and PNG and the current model's slide land in the figures folder,
announced in one line; an unwritable folder, a missing cairo or a second press is one line, and the app runs on."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import threading

from tui_helpers import fake_app, type_text, wait_for

import breadth.tui.parts.figure_saver
from breadth.core.results.figures import SLIDE, SLIDE_DPI
from breadth.core.storage.header import read_metadata
from breadth.core.storage.paths import shipped_checkpoint
from breadth.tui.figure_files import BLANK_BRAILLE, FiguresSaved, figures_dir, rasterisable, save_figures, saved_line

STAMPED = re.compile(r"(screen|scores)-\d{8}-\d{6}\.(svg|png)")


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (AssertionError if it is not a PNG)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def svg_size(text: str) -> tuple[float, float]:
    """Width and height of an SVG's viewBox."""
    _, _, w, h = (float(v) for v in re.search(r'viewBox="([^"]+)"', text)[1].split())
    return w, h


def message_line(app) -> str:
    """The line under the sum box."""
    return str(app.playground.query_one("#sum-message").render())


async def test_ctrl_f_saves_the_screen_and_the_models_slide_and_names_them_in_one_line():
    """F12 writes screen-STAMP.svg and .png (the PNG twice the SVG's size) and scores-STAMP.png (1920x1080) and .svg
    into figures/ in the breadth folder, and the line under the sum box names them."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f12")
        await wait_for(pilot, lambda: not app.figures.saving, what="the figures to be written")
        folder = figures_dir()
        names = sorted(p.name for p in folder.iterdir())
        assert len(names) == 4 and all(STAMPED.fullmatch(n) for n in names), names
        assert len({n.split("-", 1)[1].rsplit(".", 1)[0] for n in names}) == 1  # one stamp for all four
        screen_svg = next(folder.glob("screen-*.svg")).read_text()
        assert "held-out scores" in screen_svg.replace("&#160;", " ")  # the screen as it was
        width, height = png_size(next(folder.glob("screen-*.png")).read_bytes())
        assert all(abs(got - 2 * want) <= 1 for got, want in zip((width, height), svg_size(screen_svg), strict=True))
        assert png_size(next(folder.glob("scores-*.png")).read_bytes()) == (SLIDE[0] * SLIDE_DPI, SLIDE[1] * SLIDE_DPI)
        assert "mix 35+35, seed 0" in next(folder.glob("scores-*.svg")).read_text()  # the current model's
        line = message_line(app)
        assert re.fullmatch(rf"saved {folder}/{{screen,scores}}-\d{{8}}-\d{{6}}\.\*", line), line
        assert not list(folder.glob(".*.tmp"))  # written atomically: no temporary left behind


async def test_a_second_ctrl_f_while_saving_is_answered_not_queued():
    """F12 pressed again before the first save is written gets a line, and only one save runs."""
    release, calls = threading.Event(), []
    real = breadth.tui.parts.figure_saver.save_figures

    def slow_save(*args):
        calls.append(args)
        release.wait(10)
        return real(*args)

    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        breadth.tui.parts.figure_saver.save_figures = slow_save
        try:
            await pilot.pause()
            await pilot.press("f12")
            await wait_for(pilot, lambda: calls, what="the save to start")
            await pilot.press("f12")
            assert "still saving" in message_line(app)
            release.set()
            await wait_for(pilot, lambda: not app.figures.saving, what="the figures to be written")
        finally:
            breadth.tui.parts.figure_saver.save_figures = real
            release.set()
        assert len(calls) == 1
        assert len(list(figures_dir().iterdir())) == 4
        assert message_line(app).startswith("saved ")


async def test_an_unwritable_figures_folder_is_one_line_and_the_app_runs_on(tmp_path, monkeypatch):
    """With the breadth folder under a regular file, F12 says in one line that nothing was saved and why;
    the app keeps running and still plays a sum."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BREADTH_HOME", str(blocker / "breadth"))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f12")
        await wait_for(pilot, lambda: not app.figures.saving, what="the save to fail")
        line = message_line(app)
        assert line == f"figures not saved (not a directory): {blocker}/breadth/figures"
        assert app.playground.query_one("#sum-message").has_class("error")
        assert app.is_running
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.playground.busy(), what="the sum to be played")


def test_without_cairo_the_screen_svg_and_the_slide_are_saved_and_the_line_says_no_png(tmp_path, monkeypatch):
    """If cairosvg (or the cairo library under it) cannot be loaded, the SVG and the slide are still written and
    the one line says the screen's PNG was not made, and why."""
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # `import cairosvg` now raises ImportError
    app_svg = '<svg viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"></svg>'
    run = read_metadata(shipped_checkpoint("mix_35_35"))
    saved = save_figures(app_svg, run, "", tmp_path, "20260101-120000")
    assert isinstance(saved, FiguresSaved)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "scores-20260101-120000.png",
        "scores-20260101-120000.svg",
        "screen-20260101-120000.svg",
    ]
    line = saved_line(saved)
    assert line.startswith(f"saved {tmp_path}/screen-20260101-120000.svg, scores-20260101-120000.png/svg;")
    assert "no PNG of the screen (" in line and "\n" not in line


def test_a_second_save_in_the_same_second_replaces_nothing(tmp_path):
    """Two saves stamped alike get different names (`STAMP`, `STAMP-2`): no earlier figure is overwritten."""
    svg = '<svg viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"></svg>'
    first = save_figures(svg, None, "", tmp_path, "20260101-120000")
    second = save_figures(svg, None, "", tmp_path, "20260101-120000")
    assert [p.name for p in first.written] == ["screen-20260101-120000.svg", "screen-20260101-120000.png"]
    assert [p.name for p in second.written] == ["screen-20260101-120000-2.svg", "screen-20260101-120000-2.png"]
    assert "no model loaded" in saved_line(second)


def test_the_screen_png_draws_the_terminal_in_monospace_and_braille_in_a_font_that_has_it():
    """For the PNG, Textual's Fira Code (which cairo cannot fetch) becomes the system monospace font, and a
    braille run (the loss plot) gets a font with braille, its spaces blank braille cells of the same width."""
    svg = (
        "<style>.t-matrix { font-family: Fira Code, monospace; }</style>"
        '<text class="r1" x="0" y="0" textLength="36.6">ab&#160;</text>'
        '<text class="r2" x="0" y="0" textLength="36.6">\u2840&#160;\u28ff</text>'
    )
    out = rasterisable(svg)
    assert "font-family: monospace;" in out and "Fira Code" not in out
    assert '<text class="r1" x="0" y="0" textLength="36.6">ab&#160;</text>' in out  # text runs untouched
    assert f'style="font-family: sans-serif; font-size: 16.1px">\u2840{BLANK_BRAILLE}\u28ff</text>' in out


FIRST_FRAME_PROBE = """
import sys, asyncio
from breadth.tui.app import BreadthApp

async def main():
    app = BreadthApp(start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print("matplotlib" in sys.modules, "cairosvg" in sys.modules)

asyncio.run(main())
"""


def test_the_app_starts_without_importing_matplotlib_or_cairosvg():
    """Neither picture library is imported until F12 draws something: the first frame does not wait for them."""
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME_PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]
