"""A bench's `--json` file: checked before any work, read back to resume, written atomically.

A bench runs for minutes to hours; its JSON must not be refused only at the end, in a traceback, with everything it
measured lost (a 40-minute pool trial writing into `results/`, inside the installed package, did exactly that). So
`refused` asks `core.storage.files.check_output` first and says in one line why a path cannot be written; `resumed`
reads an earlier run's file back (one line if it is not a bench's JSON object); `write` replaces it atomically.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from breadth.core.storage.files import UserFileError, check_output, read_regular, write_json

LIMIT = 256 * 1024 * 1024  # a resumed file larger than this is not a bench's


def refused(prog: str, path: str | os.PathLike | None, flag: str = "--json") -> bool:
    """True, after one line on standard error naming `flag`, when `path` (None: not asked for) cannot be written."""
    if path is None:
        return False
    try:
        check_output(path)
    except UserFileError as e:  # its message names the path
        print(f"{prog}: {flag}: {e}", file=sys.stderr)
        return True
    return False


def resumed(prog: str, path: str | os.PathLike) -> dict | None:
    """What an earlier run wrote to `path` (`{}` if nothing yet), or None after one line saying why it is unreadable."""
    if not Path(path).exists():
        return {}
    try:
        data = json.loads(read_regular(path, LIMIT))
    except UserFileError as e:
        print(f"{prog}: --json: {e}", file=sys.stderr)
        return None
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        print(f"{prog}: --json: {path}: not a JSON file this bench wrote ({e})", file=sys.stderr)
        return None
    if not isinstance(data, dict):
        print(f"{prog}: --json: {path}: not a JSON file this bench wrote (a {type(data).__name__})", file=sys.stderr)
        return None
    return data


def write(path: str | os.PathLike | None, data) -> None:
    """Replace `path` with `data` as JSON, atomically (None: no `--json` asked)."""
    if path is not None:
        write_json(path, data)
