"""`breadth-tui`: start the app."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the app; Ctrl+Q quits. The exit status is the app's: 0, or 1 after a crash (logged to app.log)."""
    from .app import BreadthApp
    from .guard import app_log

    app = BreadthApp()
    app.run()
    code = app.return_code or 0
    if code:
        print(f"breadth-tui stopped on an error; its traceback is in {app_log()}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
