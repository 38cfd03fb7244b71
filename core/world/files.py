"""Atomic file writes: a temporary file beside the target, fsynced, then renamed over it.

A crash, a cancel or Ctrl-C at any moment leaves either the old file or the new one, never half.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` so that readers only ever see a complete file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}") from None
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; a checkpoint is an ordinary file
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: str | os.PathLike, obj) -> Path:
    """Write `obj` as indented JSON, atomically."""
    return write_atomic(path, (json.dumps(obj, indent=2) + "\n").encode())


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before any thread starts
    os.umask(mask)
    return mask


_UMASK = _read_umask()
