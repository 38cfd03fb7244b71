"""Checkpoints: weights as safetensors with breadth's JSON metadata in the file's own header.

Saving writes a temporary file and renames it over the target, so a crash never leaves half a
checkpoint. Loading reads the header first (`core.storage.header`, no torch), builds the model its
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

from breadth.core.learning.model import GPT, GPTConfig
from breadth.core.storage.files import write_atomic, write_new
from breadth.core.storage.header import (
    FORMAT,
    KEY,
    VERSION,
    CheckpointError,
    CheckpointHeader,
    read_checkpoint_bytes,
    read_header,
)
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.vocab import CHARS

_TIED = "head.weight"  # tied to wte.weight: stored once

__all__ = ["CheckpointError", "encode", "load", "save", "save_new"]


def encode(model: GPT, run: RunMeta) -> bytes:
    """The checkpoint file of `model` and its run record, as bytes."""
    full = {
        **run.to_dict(),
        "format": FORMAT,
        "version": VERSION,
        "vocab": CHARS,
        "model": model.config.to_dict(),
        "params": model.num_params(),
    }
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k != _TIED}
    return to_bytes(tensors, metadata={KEY: json.dumps(full)})


def save(model: GPT, run: RunMeta, path: str | os.PathLike) -> Path:
    """Write `model` and its run record to `path` atomically (only over a regular file, or nothing)."""
    return write_atomic(Path(path), encode(model, run))


def save_new(model: GPT, run: RunMeta, folder: str | os.PathLike, stem: str) -> Path:
    """Save under a name not yet taken in `folder` (`stem`, `stem-2`, ...): no run ever replaces another."""
    return write_new(folder, stem, ".safetensors", encode(model, run))


def load(path: str | os.PathLike) -> tuple[GPT, CheckpointHeader]:
    """The model stored at `path` and its header; raises CheckpointError with one line.

    Nothing is allocated before the header has been checked whole (`read_header`) and the model its
    metadata describes has been laid out on torch's `meta` device (no memory) and matched, tensor by
    tensor, against the file's table; then the file (exactly its declared size) is read, and weights
    that are not all finite are refused.
    """
    header = read_header(path)
    try:
        with torch.device("meta"):
            shapes = {k: tuple(v.shape) for k, v in GPT(GPTConfig(**header.model)).state_dict().items() if k != _TIED}
    except (TypeError, ValueError, AssertionError, ArithmeticError, RuntimeError) as e:
        detail = (str(e) or type(e).__name__).splitlines()[0]  # one line, even for a bare assert
        raise CheckpointError(f"{path}: bad model configuration in metadata ({detail})") from None
    got = {k: v.shape for k, v in header.tensors.items()}
    if got != shapes:
        missing = sorted(set(shapes) - set(got))
        odd = sorted(k for k in set(shapes) & set(got) if shapes[k] != got[k])
        extra = sorted(set(got) - set(shapes))
        what = f"missing {missing[0]}" if missing else f"shape of {odd[0]}" if odd else f"unexpected {extra[0][:40]}"
        raise CheckpointError(f"{path}: weights do not match the model in its metadata ({what})")
    data = read_checkpoint_bytes(path, header)
    try:
        tensors = from_bytes(data)
    except SafetensorError as e:
        raise CheckpointError(f"{path}: unreadable weights ({str(e).splitlines()[0]})") from None
    bad = next((k for k, v in tensors.items() if not torch.isfinite(v).all()), None)
    if bad is not None:
        raise CheckpointError(f"{path}: weights hold NaN or infinity (in {bad})")
    model = GPT(GPTConfig(**header.model))
    with torch.no_grad():
        model.load_state_dict(tensors, strict=False)  # the tied head follows wte.weight
    model.eval()
    return model, header
