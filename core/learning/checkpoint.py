"""Checkpoints: weights as safetensors with breadth's JSON metadata in the file's own header.

Saving writes a temporary file and renames it over the target, so a crash never leaves half a
checkpoint. Loading reads the header first (`core.world.header`, no torch), builds the model its
metadata describes, never unpickles anything, and turns every kind of bad file into one
CheckpointError line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as from_bytes
from safetensors.torch import save as to_bytes

from ..world.files import write_atomic
from ..world.header import FORMAT, KEY, VERSION, CheckpointError, CheckpointHeader, read_header
from ..world.records import RunMeta
from ..world.vocab import CHARS
from .model import GPT, GPTConfig

_TIED = "head.weight"  # tied to wte.weight: stored once

__all__ = ["CheckpointError", "load", "save"]


def save(model: GPT, run: RunMeta, path: str | os.PathLike) -> Path:
    """Write `model` and its run record to `path` atomically."""
    full = {
        **run.to_dict(),
        "format": FORMAT,
        "version": VERSION,
        "vocab": CHARS,
        "model": model.config.to_dict(),
        "params": model.num_params(),
    }
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k != _TIED}
    return write_atomic(Path(path), to_bytes(tensors, metadata={KEY: json.dumps(full)}))


def load(path: str | os.PathLike) -> tuple[GPT, CheckpointHeader]:
    """The model stored at `path` and its header; raises CheckpointError with one line."""
    header = read_header(path)
    try:
        model = GPT(GPTConfig(**header.model))
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
        what = f"missing {missing[0]}" if missing else f"shape of {odd[0]}" if odd else f"unexpected {extra[0]}"
        raise CheckpointError(f"{path}: weights do not match the model in its metadata ({what})")
    with torch.no_grad():
        model.load_state_dict(tensors, strict=False)  # the tied head follows wte.weight
    model.eval()
    return model, header
