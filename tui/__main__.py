"""`breadth-tui`: start the app; `breadth-tui --demo [--probes FILE]` starts it for a talk.

Demo mode opens with the shipped models racing, an audience pace and a list of probes to step through
with PageDown (a presenter's clicker sends it) and PageUp. A probes file is read before the app starts:
one that cannot be read, or holds no sum at all, is one line and exit status 2; lines that are not sums
are skipped and named in the playground, so a typo in the file never stops a talk.
"""

from __future__ import annotations

import argparse
import sys

PROBES_LIMIT = 64_000  # bytes in a probes file
USAGE_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line."""

    def error(self, message: str):
        print(f"breadth-tui: {message}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="breadth-tui", description="The breadth playground (Ctrl+Q quits, F1 lists the keys).")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="start for a talk: the shipped models race, an audience pace, PageDown/PageUp step through probes",
    )
    parser.add_argument("--probes", metavar="FILE", help="with --demo: the probes, one sum per line (# comments)")
    return parser


def demo_probes(path: str | None) -> tuple[list[str], list[str]]:
    """The probes to step through and the lines skipped; SystemExit(2) with one line if there is nothing to show."""
    from breadth.core.storage.files import UserFileError, read_regular, user_path
    from breadth.core.world.probe import DEMO_PROBES, read_probes

    if path is None:
        return list(DEMO_PROBES), []
    try:
        text = read_regular(user_path(path), PROBES_LIMIT).decode("utf-8")
    except (UserFileError, OSError) as e:
        _refuse(str(e))
    except UnicodeDecodeError:
        _refuse(f"{path}: not UTF-8 text")
    probes, skipped = read_probes(text)
    if not probes:
        _refuse(f"{path}: no sum to show ({skipped[0] if skipped else 'the file is empty'})")
    return probes, skipped


def _refuse(line: str):
    from breadth.core.world.text import one_line

    print(f"breadth-tui: {one_line(line)}", file=sys.stderr)  # a typed path is text: escapes written out
    raise SystemExit(USAGE_ERROR)


def main(argv: list[str] | None = None) -> int:
    """Run the app; Ctrl+Q quits. The exit status is the app's: 0, or 1 after a crash (logged to app.log)."""
    args = _parser().parse_args(argv)
    if args.probes and not args.demo:
        _refuse("--probes goes with --demo")
    demo = demo_probes(args.probes) if args.demo else None

    from breadth.tui.app import BreadthApp
    from breadth.tui.guard import app_log

    app = BreadthApp(demo=demo)
    app.run()
    code = app.return_code or 0
    if code:
        print(f"breadth-tui stopped on an error; its traceback is in {app_log()}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
