"""`breadth-tui --serve` in a real headless browser (Debian's Chromium through Playwright): a typed sum is played.

Never skipped: without Chromium or Playwright the test fails and says how to install them (.ci/run does).
"""

from __future__ import annotations

import re
import shutil
import signal
import time

import pytest
from serve_helpers import alive, descendants, screen_text, start_server, stop, wait_until

from breadth.core.storage.paths import FRESH_PREFIX

CHROMIUM = "/usr/bin/chromium"  # Debian's package; Playwright cannot download a browser here
VERDICT = re.compile(r"✓ correct|✗ [a-z]")


def _browser_tools():
    """Playwright's sync API and Chromium's path, or a failure naming what to install."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser test needs Playwright: pip install -c constraints.txt -e '.[test]'")
    chromium = shutil.which("chromium") or (CHROMIUM if shutil.which(CHROMIUM) else None)
    if chromium is None:
        pytest.fail("the browser test needs Chromium: apt-get install -y chromium (.ci/run installs it)")
    return sync_playwright, chromium


@pytest.mark.slow
def test_a_sum_typed_in_the_browser_is_played_and_its_verdict_shown(tmp_path, monkeypatch):
    """The page loads on its start panel (the served command and the cap; no app yet), Start brings the app's
    first frame, 23+45 typed and Enter is played on the default model and its verdict shown; closing the tab ends
    the app, its engine and its fresh folder."""
    sync_playwright, chromium = _browser_tools()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    started = time.monotonic()
    server, url, _ = start_server("--fresh", "--max-connections", "2")
    frames: list[str] = []  # what the server wrote to the page's terminal
    times: dict[str, float] = {}  # seconds from the server's start, printed for the record (pytest -s)

    def record(websocket) -> None:
        websocket.on(
            "framereceived", lambda f: frames.append(f if isinstance(f, str) else f.decode("utf-8", "replace"))
        )

    def wait_on_screen(page, pattern: re.Pattern, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not pattern.search(screen_text(frames)):
            assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
            page.wait_for_timeout(100)

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.on("websocket", record)
                times["browser"] = time.monotonic() - started
                page.goto(url)
                panel = page.locator(".intro-dialog .intro")
                assert "at most 2 browsers at once, each with its own app and engine" in panel.inner_text()
                assert "breadth-tui --fresh" in panel.inner_text()
                page.wait_for_timeout(300)
                assert descendants(server.pid) == []  # a page opened starts nothing until Start
                page.click("#start")
                wait_on_screen(page, re.compile("playground"), 30, "the app's first frame")
                times["first frame"] = time.monotonic() - started
                apps = descendants(server.pid)
                assert len(apps) >= 1 and list(tmp_path.glob(FRESH_PREFIX + "*"))
                page.click("#terminal")
                page.keyboard.type("23+45")
                page.keyboard.press("Enter")
                wait_on_screen(page, VERDICT, 60, "the verdict of 23+45")
                times["verdict"] = time.monotonic() - started
                page.screenshot(path=str(tmp_path / "served.png"))
                processes = descendants(server.pid)  # the app and its engine, by now
                assert len(processes) == 2
            finally:
                browser.close()
        wait_until(lambda: not any(alive(p) for p in processes), 20, "the app and engine to end with the tab")
        assert not list(tmp_path.glob(FRESH_PREFIX + "*"))
        times["all ended"] = time.monotonic() - started
        print("browser test, seconds from the server's start:", ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
        server.send_signal(signal.SIGINT)
        assert server.wait(10) == 0
    finally:
        stop(server)
