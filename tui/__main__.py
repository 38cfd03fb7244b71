"""`breadth-tui`: start the app; `breadth-tui --demo [--probes FILE]` starts it for a talk.

Demo mode opens with the shipped models racing, an audience pace and a story to step through with
PageDown (a presenter's clicker sends it) and PageUp: acts of probes with captions (tui.story).
A probes file is read before the app starts: one that cannot be read, or shows nothing at all, is one
line and exit status 2; lines that are not sums are skipped and named in the playground, so a typo in
the file never stops a talk.

`--fresh` runs the app on a temporary breadth folder (`core.storage.paths.fresh_home`), removed when the app
ends, also by SIGTERM, SIGHUP or SIGINT (each ends the app as Ctrl+Q does) or a crash. `--serve` serves the app
to browsers instead (`tui.serve`). What a browser may touch: `--no-files` is what it passes to every app it serves
(on loopback too) unless given `--allow-files`; off loopback (or with `--fresh`) each browser's app gets its own
`--fresh` folder with `--max-checkpoints VISITOR_CHECKPOINTS`, unless given `--shared-store`.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from breadth.tui.story import Story

PROBES_LIMIT = 64_000  # bytes in a probes file
MAX_CONNECTIONS = 3  # --serve: browsers at once, each with its app and engine (about 0.36 GB idle, measured)
CONNECTIONS_LIMIT = 64  # more is a typo, not a room
CHECKPOINTS_LIMIT = 10_000  # --max-checkpoints: more is a typo
USAGE_ERROR = 2
SERVE_INSTALL = "pip install -c constraints.txt -e '.[serve]'"  # the serve extra, as the README installs it


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
        help="start for a talk: the shipped models race at an audience pace, PageDown/PageUp step through a story",
    )
    parser.add_argument("--probes", metavar="FILE", help="with --demo: the story: sums, # act: and # say: lines")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="start on a new, empty breadth folder (no earlier runs), removed when the app ends",
    )
    parser.add_argument(
        "--no-files",
        action="store_true",
        help="refuse Load, Save and figures (anything that uses a path on this machine): what --serve passes "
        "to the apps it serves unless given --allow-files",
    )
    parser.add_argument(
        "--max-checkpoints",
        type=_checkpoints,
        metavar="N",
        help="with --fresh: refuse training once the folder holds N trained models (what --serve gives each "
        "browser's own folder)",
    )
    serving = parser.add_argument_group(
        f"serving the app to browsers (needs the serve extra, from the repository: {SERVE_INSTALL})"
    )
    serving.add_argument(
        "--serve",
        action="store_true",
        help="serve the app on a web page, one app and engine for each browser, at the address printed (its "
        "?token=... is required)",
    )
    serving.add_argument("--host", help="with --serve: the address to listen on (default 127.0.0.1, this machine only)")
    serving.add_argument("--port", type=_port, help="with --serve: the port (default 8000; 0 picks a free one)")
    serving.add_argument(
        "--max-connections",
        type=_connections,
        metavar="N",
        help=f"with --serve: browsers served at once, each running its own app and engine (default {MAX_CONNECTIONS})",
    )
    serving.add_argument(
        "--allow-files",
        action="store_true",
        help="with --serve: let the page load, save and write figures on this machine, as you (off by default, "
        "on loopback too)",
    )
    serving.add_argument(
        "--shared-store",
        action="store_true",
        help="with --serve: every browser uses one breadth folder (yours; with --fresh, one temporary folder) and "
        "sees every browser's runs; by default each browser off loopback, or each with --fresh, gets its own "
        "temporary folder, removed when its tab closes",
    )
    return parser


def _port(text: str) -> int:
    """A port number for --port: 0 (a free one) to 65535."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535; 0 picks a free one)")
    return int(text)


def _connections(text: str) -> int:
    """A number of connections for --max-connections: 1 to CONNECTIONS_LIMIT."""
    if not text.isdigit() or not 1 <= int(text) <= CONNECTIONS_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of connections from 1 to {CONNECTIONS_LIMIT}")
    return int(text)


def _checkpoints(text: str) -> int:
    """A number of trained models for --max-checkpoints: 1 to CHECKPOINTS_LIMIT."""
    if not text.isdigit() or not 1 <= int(text) <= CHECKPOINTS_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of checkpoints from 1 to {CHECKPOINTS_LIMIT}")
    return int(text)


def demo_probes(path: str | None) -> Story:
    """The story to tell (a probes file's, else the default one); SystemExit(2) with one line if it shows nothing."""
    from breadth.core.storage.files import UserFileError, read_regular, user_path
    from breadth.tui.story import default_story, read_story

    if path is None:
        return default_story()
    try:
        text = read_regular(user_path(path), PROBES_LIMIT).decode("utf-8")
    except (UserFileError, OSError) as e:
        _refuse(str(e))
    except UnicodeDecodeError:
        _refuse(f"{path}: not UTF-8 text")
    story = read_story(text)
    if not story.steps():
        _refuse(f"{path}: no sum to show ({story.skipped[0] if story.skipped else 'the file is empty'})")
    return story


def _refuse(line: str):
    from breadth.core.world.text.shown import one_line

    print(f"breadth-tui: {one_line(line)}", file=sys.stderr)  # a typed path is text: escapes written out
    raise SystemExit(USAGE_ERROR)


def _check_locations() -> None:
    """An odd BREADTH_HOME, BREADTH_RUNS or BREADTH_STORE (relative, a file, inside the package...): one line."""
    from breadth.core.storage.files import UserFileError
    from breadth.core.storage.paths import check_locations

    try:
        check_locations()
    except UserFileError as e:
        _refuse(str(e))


def main(argv: list[str] | None = None) -> int:
    """Run the app (or serve it); Ctrl+Q quits. The exit status is the app's: 0, or 1 after a crash (logged)."""
    args = _parser().parse_args(argv)
    _check_locations()
    if args.probes and not args.demo:
        _refuse("--probes goes with --demo")
    for flag in ("host", "port", "max_connections", "allow_files", "shared_store"):
        given = getattr(args, flag)
        if given is not None and given is not False and not args.serve:  # `is`: --port 0 is given too (0 == False)
            _refuse(f"--{flag.replace('_', '-')} goes with --serve")
    if args.allow_files and args.no_files:
        _refuse("--allow-files and --no-files say opposite things: give one")
    if args.max_checkpoints and args.serve:
        _refuse("--max-checkpoints is what --serve gives each browser's own folder, not a flag of the server")
    if args.max_checkpoints and not args.fresh:
        _refuse("--max-checkpoints goes with --fresh (it caps a temporary folder)")
    demo = demo_probes(args.probes) if args.demo else None  # a bad probes file stops the server too
    if args.serve:
        return _serve(args)
    from breadth.core.storage.paths import CHECKPOINTS_ENV, environment
    from breadth.tui.file_access import NO_FILES_ENV

    told = {NO_FILES_ENV: "1" if args.no_files else None, CHECKPOINTS_ENV: args.max_checkpoints}
    with environment({name: str(value) for name, value in told.items() if value is not None}):
        return _run_here(demo, args.fresh)  # the app, and the engine it starts, read them


def _run_here(demo, fresh: bool) -> int:
    """Run the app in this process, in a temporary breadth folder with `fresh`."""
    if not fresh:
        return _run_app(demo)
    from breadth.core.storage.paths import fresh_home

    with fresh_home():
        return _run_app(demo, fresh=True)


def _run_app(demo, fresh: bool = False) -> int:
    """Run the app until it ends: by Ctrl+Q, a crash, or SIGTERM, SIGHUP or SIGINT (ended as Ctrl+Q ends it)."""
    from breadth.tui.app import BreadthApp
    from breadth.tui.guard import app_log

    app = BreadthApp(demo=demo)
    stopped_by: list[int] = []

    def end_app(signum, frame) -> None:
        stopped_by.append(signum)
        try:
            loop = asyncio.get_running_loop()  # the signal arrived while the app runs: end it from its loop
        except RuntimeError:
            raise SystemExit(128 + signum) from None
        loop.call_soon_threadsafe(app.exit)

    before = {sig: signal.signal(sig, end_app) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        app.run()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    code = app.return_code or 0
    if code and fresh:
        print("breadth-tui stopped on an error; its log goes with the --fresh folder:", file=sys.stderr)
        print(_tail(app_log()), file=sys.stderr)
    elif code:
        print(f"breadth-tui stopped on an error; its traceback is in {app_log()}", file=sys.stderr)
    return 128 + stopped_by[0] if stopped_by else code


def _tail(path, limit: int = 4000) -> str:
    """The end of the log at `path` (the last traceback), or a line saying it could not be read."""
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError as e:
        return f"(the log could not be read: {e.strerror})"


def _serve(args) -> int:
    """`--serve`: listen, print the address, serve until stopped; a problem before serving is one line, exit 2."""
    try:
        from breadth.tui import serve, serve_address
    except ImportError as e:
        _refuse(f"--serve needs textual-serve ({e.name} is missing): {SERVE_INSTALL}")
    host = args.host or "127.0.0.1"
    try:
        sock = serve_address.listen(host, 8000 if args.port is None else args.port)
    except serve_address.ServeError as e:
        _refuse(str(e))
    from breadth.core.storage.paths import VISITOR_CHECKPOINTS, fresh_home

    loopback = serve_address.is_loopback(sock)
    no_files = not args.allow_files  # on loopback too: the page is not the person at this machine
    own_folders = not args.shared_store and (args.fresh or not loopback)
    cap = VISITOR_CHECKPOINTS if own_folders else None
    served = serve.served_command(args.demo, args.probes, own_folders, no_files, cap)
    for line in _visitor_lines(no_files, loopback, own_folders, args.fresh):
        print(f"breadth-tui: {line}", flush=True)
    max_connections = args.max_connections or MAX_CONNECTIONS
    shared_fresh = fresh_home() if args.fresh and args.shared_store else nullcontext()
    with shared_fresh:  # --fresh --shared-store: one temporary folder for every browser, gone when the server stops
        return serve.serve(served, sock, max_connections, announce=lambda line: print(line, flush=True))


def _visitor_lines(no_files: bool, loopback: bool, own_folders: bool, fresh: bool) -> list[str]:
    """What the server says, as it starts, about what a browser may touch: files, and whose runs it sees."""
    from breadth.core.storage.paths import VISITOR_CHECKPOINTS

    if no_files:
        lines = ["files off: the page cannot load, save or write figures on this machine (--allow-files allows it)"]
    else:
        lines = ["files on: the page can load, save and write figures on this machine, as you"]
        if not loopback:
            lines.append(
                "warning: --allow-files off loopback: anyone who can open the page can read and write your files"
            )
    if own_folders:
        lines.append(
            f"each browser gets its own temporary breadth folder (at most {VISITOR_CHECKPOINTS} trained models), "
            "removed when its tab closes; it sees the shipped runs and its own"
        )
    else:
        folder = "one temporary breadth folder" if fresh else "your breadth folder"
        lines.append(f"every browser uses {folder} and sees every browser's runs")
    return lines


if __name__ == "__main__":
    sys.exit(main())
