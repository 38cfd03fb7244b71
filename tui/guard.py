"""Keep the app alive through its own bugs: an error in a handler becomes one line on screen and a log entry.

Anything a person types, loads or saves reaches the app through a handler or an action. `guarded`
wraps each of them, so an error nobody foresaw is appended, with its traceback, to `app.log` in the
user's data folder and shown as one notification naming that file, and the app runs on. The log is
bounded like the engine's, and writing it never raises (an unwritable home must not end the app).
"""

from __future__ import annotations

import functools
import inspect
import time
import traceback
from pathlib import Path

from breadth.core.storage.paths import LOG_LIMIT, data_dir


def app_log() -> Path:
    """Where the app appends the tracebacks of its own errors."""
    return data_dir() / "app.log"


def one_line(error: BaseException, limit: int = 200) -> str:
    """`error` as one line for people: its message's first line, else its type's name."""
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:limit]


def log_error(error: BaseException, where: str = "") -> bool:
    """Append `error`'s traceback to `app_log()`; False (never an exception) if it could not be written."""
    try:
        path = app_log()
        path.parent.mkdir(parents=True, exist_ok=True)
        big = path.exists() and path.stat().st_size > LOG_LIMIT
        with path.open("w" if big else "a", encoding="utf-8", errors="replace") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {where}\n")
            log.write("".join(traceback.format_exception(error)))
        return True
    except Exception:  # noqa: BLE001 -- a log that cannot be written must not become a second error
        return False


def report(owner: object, error: Exception, where: str) -> None:
    """Log `error` and tell the person in one line, through `owner`'s app (a widget, a screen or the app)."""
    logged = log_error(error, where)
    details = f"details in {app_log()}" if logged else "the log could not be written"
    try:
        owner.app.notify(f"unexpected error: {one_line(error)} ({details})", severity="error", timeout=10)
    except Exception:  # noqa: BLE001 -- no app to tell (it is closing): the log has it
        pass


def guarded(handler):
    """Decorate a handler or action: an unexpected exception is reported (`report`) instead of ending the app."""
    where = handler.__qualname__
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(self, *args, **kwargs):
            try:
                return await handler(self, *args, **kwargs)
            except Exception as e:  # noqa: BLE001 -- the point of the guard
                report(self, e, where)

        return run_async

    @functools.wraps(handler)
    def run(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 -- the point of the guard
            report(self, e, where)

    return run
