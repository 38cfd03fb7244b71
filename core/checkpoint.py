"""Checkpoints: weights as safetensors with breadth's JSON metadata in the file's own header.

One file holds both, so weights and metadata can never drift apart; the header is plain JSON, so
`read_metadata` needs no torch (the UI lists checkpoints before torch has loaded). Saving writes a
temporary file and renames it over the target, so a crash never leaves half a checkpoint. Loading
never unpickles anything and turns every kind of bad file into one CheckpointError line.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from .files import write_atomic
from .vocab import CHARS

FORMAT = "breadth-checkpoint"
VERSION = 1
_KEY = "breadth"  # the safetensors metadata key holding our JSON
_TIED = "head.weight"  # tied to wte.weight: stored once


class CheckpointError(Exception):
    """A checkpoint is missing, unreadable, truncated or does not match this program."""


def read_metadata(path: str | os.PathLike) -> dict:
    """breadth's metadata of a checkpoint, read from the safetensors header without torch."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: truncated (no safetensors header)")
            (n,) = struct.unpack("<Q", head)
            if n > size - 8 or n > 10_000_000:
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
        meta = json.loads(header["__metadata__"][_KEY])
    except (KeyError, TypeError, json.JSONDecodeError):
        raise CheckpointError(f"{path}: a safetensors file without breadth metadata") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a breadth checkpoint")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {meta.get('version')!r}, this program reads {VERSION}")
    if meta.get("vocab") != CHARS:
        raise CheckpointError(f"{path}: its vocabulary differs from this program's")
    if not isinstance(meta.get("model"), dict):
        raise CheckpointError(f"{path}: metadata has no model configuration")
    _check_shape(path, meta["model"])
    return meta


_LIMITS = {"block_size": 1024, "n_layer": 48, "n_head": 64, "n_embd": 4096}  # far above anything breadth trains


def _check_shape(path, model: dict) -> None:
    """Refuse a configuration that does not match the vocabulary or would build an absurdly large model."""
    if model.get("vocab_size") != len(CHARS):
        raise CheckpointError(f"{path}: vocab_size {model.get('vocab_size')!r} differs from this program's "
                              f"{len(CHARS)}")
    for key, limit in _LIMITS.items():
        value = model.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
            raise CheckpointError(f"{path}: model {key} must be a whole number from 1 to {limit}, not {value!r}")
    if not isinstance(model.get("dropout", 0.0), (int, float)) or not 0 <= model.get("dropout", 0.0) < 1:
        raise CheckpointError(f"{path}: model dropout must be in [0, 1), not {model.get('dropout')!r}")


def save(model, meta: dict, path: str | os.PathLike) -> Path:
    """Write `model` and `meta` (mix, seed, settings, scores...) to `path` atomically."""
    from safetensors.torch import save as to_bytes

    path = Path(path)
    full = {**meta, "format": FORMAT, "version": VERSION, "vocab": CHARS, "model": model.config.to_dict(),
            "params": model.num_params()}
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k != _TIED}
    return write_atomic(path, to_bytes(tensors, metadata={_KEY: json.dumps(full)}))


def load(path: str | os.PathLike):
    """The model stored at `path` and its metadata; raises CheckpointError with one line."""
    from safetensors import SafetensorError
    from safetensors.torch import load as from_bytes

    from .model import GPT, GPTConfig

    meta = read_metadata(path)
    try:
        config = GPTConfig(**meta["model"])
        model = GPT(config)
    except (TypeError, ValueError, AssertionError, ArithmeticError, RuntimeError) as e:  # n_head 0, sizes < 0
        detail = (str(e) or type(e).__name__).splitlines()[0]  # one line, even for a bare assert
        raise CheckpointError(f"{path}: bad model configuration in metadata ({detail})") from None
    try:
        tensors = from_bytes(Path(path).read_bytes())
    except (SafetensorError, OSError) as e:
        raise CheckpointError(f"{path}: unreadable weights ({str(e).splitlines()[0]})") from None
    expected = {k: v.shape for k, v in model.state_dict().items() if k != _TIED}
    got = {k: v.shape for k, v in tensors.items()}
    if got != expected:
        missing = sorted(set(expected) - set(got))
        odd = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
        extra = sorted(set(got) - set(expected))
        what = (f"missing {missing[0]}" if missing else f"shape of {odd[0]}" if odd else f"unexpected {extra[0]}")
        raise CheckpointError(f"{path}: weights do not match the model in its metadata ({what})")
    model.load_state_dict(tensors, strict=False)  # the tied head follows wte.weight
    model.eval()
    return model, meta
