"""Reading a checkpoint's header without torch: breadth's metadata inside the safetensors header.

A checkpoint is one safetensors file whose header holds breadth's JSON metadata, so the weights
and what is known about them can never drift apart. The header is plain JSON, so the UI lists
checkpoints before torch has loaded; every kind of bad file becomes one CheckpointError line.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from .records import MetadataError, RunMeta
from .vocab import CHARS

FORMAT = "breadth-checkpoint"
VERSION = 1
KEY = "breadth"  # the safetensors metadata key holding our JSON
MAX_HEADER = 10_000_000  # bytes; a real header is a few kB
MODEL_LIMITS = {"block_size": 1024, "n_layer": 48, "n_head": 64, "n_embd": 4096}  # far above anything trained


class CheckpointError(Exception):
    """A checkpoint is missing, unreadable, truncated or does not match this program."""


@dataclass(frozen=True)
class CheckpointHeader:
    """What a checkpoint's header says: the run record, the model's shape, and the metadata as stored."""

    run: RunMeta
    model: dict  # the model's shape: GPTConfig fields, checked against MODEL_LIMITS
    meta: dict  # the whole metadata as stored (what the engine's events carry)


def read_header(path: str | os.PathLike) -> CheckpointHeader:
    """breadth's metadata of the checkpoint at `path`, checked; CheckpointError with one line otherwise."""
    path = Path(path)
    meta = _read_json(path)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a breadth checkpoint")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {meta.get('version')!r}, this program reads {VERSION}")
    if meta.get("vocab") != CHARS:
        raise CheckpointError(f"{path}: its vocabulary differs from this program's")
    if not isinstance(meta.get("model"), dict):
        raise CheckpointError(f"{path}: metadata has no model configuration")
    _check_shape(path, meta["model"])
    try:
        run = RunMeta.from_dict(meta)
    except MetadataError as e:
        raise CheckpointError(f"{path}: bad metadata: {e}") from None
    return CheckpointHeader(run, dict(meta["model"]), meta)


def read_metadata(path: str | os.PathLike) -> RunMeta:
    """The run record of the checkpoint at `path` (see `read_header`)."""
    return read_header(path).run


def _read_json(path: Path) -> object:
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: truncated (no safetensors header)")
            (n,) = struct.unpack("<Q", head)
            if n > size - 8 or n > MAX_HEADER:
                raise CheckpointError(f"{path}: truncated or not a safetensors file (header of {n} bytes)")
            header = json.loads(f.read(n))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such checkpoint") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path}: is a directory, not a checkpoint") from None
    except PermissionError:
        raise CheckpointError(f"{path}: permission denied") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(f"{path}: not a safetensors file (unreadable header)") from None
    try:
        return json.loads(header["__metadata__"][KEY])
    except (KeyError, TypeError, json.JSONDecodeError):
        raise CheckpointError(f"{path}: a safetensors file without breadth metadata") from None


def _check_shape(path: Path, model: dict) -> None:
    """Refuse a configuration that does not match the vocabulary or would build an absurdly large model."""
    if model.get("vocab_size") != len(CHARS):
        raise CheckpointError(
            f"{path}: vocab_size {model.get('vocab_size')!r} differs from this program's {len(CHARS)}"
        )
    for key, limit in MODEL_LIMITS.items():
        value = model.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
            raise CheckpointError(f"{path}: model {key} must be a whole number from 1 to {limit}, not {value!r}")
    dropout = model.get("dropout", 0.0)
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout < 1:
        raise CheckpointError(f"{path}: model dropout must be in [0, 1), not {dropout!r}")
