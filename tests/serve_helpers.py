"""Helpers for the tests of --serve and --fresh: the processes under a process, a served page, waiting."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

ANSI = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


def children_map() -> dict[int, list[int]]:
    """Every running process's children, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """The processes started by `pid`, and by those, in the order found (children first)."""
    children, found, todo = children_map(), [], [pid]
    while todo:
        kids = children.get(todo.pop(0), [])
        found += kids
        todo += kids
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().replace("\0", " ").strip()
    except OSError:
        return ""


def wait_until(condition, timeout: float, what: str) -> None:
    """Poll `condition()` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def screen_text(chunks: list[str]) -> str:
    """What a terminal stream wrote, escape sequences removed (enough to find a word drawn on screen)."""
    return ANSI.sub("", "".join(chunks))


def socket_url(page: str, width: int = 80, height: int = 24) -> str:
    """The websocket address the page at `page` (the printed address, token and all) connects to."""
    parts = urlsplit(page)
    token = parse_qs(parts.query)["token"][0]
    return f"ws://{parts.netloc}/ws/{token}?width={width}&height={height}"


def start_server(*flags: str, env: dict | None = None) -> tuple[subprocess.Popen, str, list[str]]:
    """`breadth-tui --serve --port 0 FLAGS`: the process, its page's address, and the lines it printed first."""
    server = subprocess.Popen(
        [sys.executable, "-m", "breadth.tui", "--serve", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    lines = []
    while True:
        line = server.stdout.readline()
        if not line:
            server.kill()
            raise AssertionError(f"the server did not start: {lines} {server.stderr.read()}")
        lines.append(line.strip())
        if found := re.search(r"serving on (http://\S+)", line):
            return server, found.group(1), lines


def stop(process: subprocess.Popen) -> None:
    """Kill `process` if it still runs, and reap it (a test's clean-up)."""
    if process.poll() is None:
        process.kill()
    process.wait(10)
