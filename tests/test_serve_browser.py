"""`breadth-tui --serve` in a real headless browser (Debian's Chromium through Playwright): a sum typed right after
Start is played, the page asks no other host for anything, and a page from another origin cannot connect.

Never skipped: without Chromium or Playwright the test fails and says how to install them (.ci/run does). One
browser serves the module's tests (each launch costs seconds on a small machine).
"""

from __future__ import annotations

import http.server
import json
import re
import shutil
import signal
import threading
import time
from urllib.parse import urlsplit

import pytest
from serve_helpers import alive, descendants, screen_text, socket_url, start_server, stop, wait_until

from breadth.core.storage.paths import FRESH_PREFIX

CHROMIUM = "/usr/bin/chromium"  # Debian's package; Playwright cannot download a browser here
VERDICT = re.compile(r"✓ correct|✗ [a-z]")
QUIET = [  # Chromium's own traffic (updates, safe browsing, metrics) off: what is left is the page's
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
]


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


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module's tests, closed after them."""
    sync_playwright, chromium = _browser_tools()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=QUIET)
        try:
            yield launched
        finally:
            launched.close()


@pytest.mark.slow
def test_a_sum_typed_in_the_browser_is_played_and_its_verdict_shown(browser, tmp_path):
    """The page loads on its start panel (the served command and the cap; no app yet), Start brings the app's
    first frame with the keyboard on the app, so 23+45 typed and Enter with no click first is played on the default
    model and its verdict shown; the page asked no host but the server for anything (its fonts are the server's);
    closing the tab ends the app, its engine and its fresh folder."""
    started = time.monotonic()
    server, url, _ = start_server("--fresh", "--max-connections", "2", env={"TMPDIR": str(tmp_path)})
    requested: list[str] = []  # every address the page asked for: documents, scripts, styles, fonts, sockets
    frames: list[str] = []  # what the server wrote to the page's terminal
    times: dict[str, float] = {}  # seconds from the server's start, printed for the record (pytest -s)

    def record(websocket) -> None:
        requested.append(websocket.url)
        websocket.on(
            "framereceived", lambda f: frames.append(f if isinstance(f, str) else f.decode("utf-8", "replace"))
        )

    def wait_on_screen(page, pattern: re.Pattern, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not pattern.search(screen_text(frames)):
            assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
            page.wait_for_timeout(100)

    try:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            context.on("request", lambda request: requested.append(request.url))
            page = context.new_page()
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
            page.keyboard.type("23+45")  # no click on the terminal first: Start left the keyboard on it
            page.keyboard.press("Enter")
            wait_on_screen(page, VERDICT, 60, "the verdict of 23+45")
            times["verdict"] = time.monotonic() - started
            page.screenshot(path=str(tmp_path / "served.png"))
            processes = descendants(server.pid)  # the app and its engine, by now
            assert len(processes) == 2
        finally:
            context.close()
        server_at = urlsplit(url).netloc
        assert requested and {urlsplit(address).netloc for address in requested} == {server_at}, requested
        assert any(address.endswith(".ttf") for address in requested)  # Roboto Mono, from the server
        wait_until(lambda: not any(alive(p) for p in processes), 20, "the app and engine to end with the tab")
        assert not list(tmp_path.glob(FRESH_PREFIX + "*"))
        times["all ended"] = time.monotonic() - started
        print("browser test, seconds from the server's start:", ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
        server.send_signal(signal.SIGINT)
        assert server.wait(10) == 0
    finally:
        stop(server)


ATTEMPTS = """
window.attempts = {};
for (const [name, address] of Object.entries(ADDRESSES)) {
  const attempt = (window.attempts[name] = { opened: false, closed: false });
  const socket = new WebSocket(address);
  socket.onopen = () => { attempt.opened = true; socket.send(JSON.stringify(["stdin", "23+45\\r"])); };
  socket.onclose = () => { attempt.closed = true; };
}
"""


def _other_origin(html: str) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A page served by another server on 127.0.0.1 (another port: another origin), and its address."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    return other, f"http://127.0.0.1:{other.server_address[1]}/"


@pytest.mark.slow
def test_a_page_from_another_origin_cannot_reach_the_served_app(browser, tmp_path):
    """A page on another port of 127.0.0.1 whose script opens the served app's websocket (with the printed
    token, as if it had leaked; without it; under localhost) is refused: no socket opens, no app process starts,
    no file is written (no --fresh folder), and the server still serves its own page."""
    server, url, _ = start_server("--fresh", env={"TMPDIR": str(tmp_path)})
    address = urlsplit(url)
    addresses = {
        "with the token": socket_url(url),
        "without a token": f"ws://{address.netloc}/ws?width=80&height=24",
        "under localhost": socket_url(url).replace("127.0.0.1", "localhost"),
    }
    html = f"<html><body><script>const ADDRESSES = {json.dumps(addresses)};{ATTEMPTS}</script></body></html>"
    other, other_url = _other_origin(html)
    try:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(other_url)
            page.wait_for_function(
                "Object.values(window.attempts).every(a => a.closed || a.opened)", timeout=20_000
            )  # each refused in its handshake (or, unchecked, open)
            attempts = page.evaluate("window.attempts")
        finally:
            context.close()
        assert attempts == {name: {"opened": False, "closed": True} for name in addresses}
        assert descendants(server.pid) == [] and list(tmp_path.iterdir()) == []
        assert urllib_status(url) == 302  # its own page, with the token, is served
        server.send_signal(signal.SIGINT)
        assert server.wait(10) == 0
    finally:
        other.shutdown()
        other.server_close()
        stop(server)


def urllib_status(url: str) -> int:
    """The status of a GET of `url`, redirects not followed."""
    import urllib.error
    import urllib.request

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    try:
        return urllib.request.build_opener(Stay).open(url, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
