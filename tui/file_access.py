"""Whether this app may read or write a path on the machine it runs on: not when served to a browser.

`breadth-tui --no-files` (what `--serve` passes to every app it serves, on loopback too, unless given
`--allow-files`) sets `BREADTH_NO_FILES=1`; Load, Save and figures then refuse in one line
instead of opening a path prompt or writing a file, so nobody at a browser can reach the serving machine's
files.
"""

from __future__ import annotations

import os

NO_FILES_ENV = "BREADTH_NO_FILES"  # "1": this app refuses every action that reads or writes a path


def files_allowed() -> bool:
    """False when this app was started with `--no-files` (served without `--allow-files`)."""
    return os.environ.get(NO_FILES_ENV) != "1"


def refusal(action: str) -> str:
    """The line that says `action` (`load`, `save`, `figures`) is refused here, and what would allow it."""
    return f"{action}: not in this served app (it would use a file on the serving machine; --allow-files allows it)"


def refuse_paths(app, action: str) -> bool:
    """True, after one line saying why, if `app` may not use a path on this machine for `action` (`load`...).

    The line goes under the sum box; if a view covers it (the matrix), it is also a notification.
    """
    if files_allowed():
        return False
    line = refusal(action)
    app.playground.say(line, error=True)
    if len(app.screen_stack) > 1:
        app.notify(line, severity="warning", timeout=6)
    return True
