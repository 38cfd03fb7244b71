"""`breadth-tui`: start the app."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the app; Ctrl+Q quits."""
    from .app import BreadthApp

    BreadthApp().run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
