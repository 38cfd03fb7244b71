"""Snapshots of a fine-tune's weights: taken as it trains, replayed, scored, and saved beside its checkpoint.

A snapshot is the model's weights rounded to float16 at one step: half the memory of float32, exactly what
the sidecar stores (`core.storage.snapshot_file`), so a snapshot scored or replayed now and the same one
loaded tomorrow are the same model. Saving writes the sidecar atomically beside the checkpoint; loading
rebuilds step 0 from the base and the last step from the checkpoint, rounded the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as from_bytes
from safetensors.torch import save as to_bytes

from breadth.core.learning.model import GPT, GPTConfig
from breadth.core.learning.policy import greedy
from breadth.core.storage.files import UserFileError, read_regular, write_atomic
from breadth.core.storage.header import KEY, read_checkpoint_bytes, read_header
from breadth.core.storage.snapshot_file import (
    HELD_OUT,
    LAST_STEP,
    STORED_STEP,
    SnapshotError,
    plan,
    saved_snapshots,
    sidecar_of,
    snapshot_problems,
)
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.episodes.scoring import play, tally
from breadth.core.world.runs.records import RunMeta

_TIED = "head.weight"  # tied to wte.weight: kept once


@dataclass(frozen=True)
class Snapshot:
    """A copy of a model's weights at one step, rounded to float16: enough to rebuild it for play."""

    config: GPTConfig
    state: dict[str, torch.Tensor]  # parameter name -> float16 copy (the tied head is wte.weight)


def snapshot(model: GPT) -> Snapshot:
    """A float16 copy of `model`'s weights, independent of further training."""
    state = {k: v.detach().to(torch.float16, copy=True) for k, v in model.state_dict().items() if k != _TIED}
    return Snapshot(model.config, state)


def restore(kept: Snapshot) -> GPT:
    """A float32 model with exactly the weights of a snapshot, ready to play."""
    model = GPT(kept.config)
    missing, unexpected = model.load_state_dict({k: v.float() for k, v in kept.state.items()}, strict=False)
    if set(missing) - {_TIED} or unexpected:
        raise SnapshotError(f"a snapshot does not fit its model ({(sorted(set(missing) - {_TIED}) + unexpected)[0]})")
    return model.eval()


def score(kept: Snapshot, seed: int, held_out: int = HELD_OUT) -> dict[str, HeldOutScore]:
    """A snapshot's scores on the first `held_out` held-out sums of every environment (as the engine scores them)."""
    model = restore(kept)
    scored = play(greedy(model), snapshot_problems(seed, held_out), max_length=model.config.block_size)
    return tally(scored, list(REGISTERED))


def save(
    path: str | os.PathLike, run: RunMeta, kept: dict[int, Snapshot], scores: dict[int, dict[str, HeldOutScore]]
) -> Path | None:
    """Write the snapshots of the checkpoint written at `path` beside it, atomically, with their scores (which
    steps: `snapshot_file.plan`); the sidecar's path, or None if there was nothing to save."""
    planned = plan(path, run, list(kept), scores)
    if planned is None:
        return None
    inner, meta = planned
    tensors = {f"{s}/{name}": t.contiguous() for s in inner for name, t in kept[s].state.items()}
    return write_atomic(sidecar_of(path), to_bytes(tensors, metadata={KEY: meta}))


def load(path: str | os.PathLike, model: GPT, run: RunMeta | None = None) -> tuple[dict[int, Snapshot], dict]:
    """The snapshots saved beside the checkpoint at `path` (whose model is `model`) and their scores by step;
    ({}, {}) when it has none. SnapshotError with one line for a sidecar that is malformed, belongs to another
    checkpoint, or whose weights do not fit the model."""
    saved = saved_snapshots(path, run)
    if saved is None:
        return {}, {}
    header = saved.header
    stored = [s for s in saved.steps if s.weights == STORED_STEP]
    weights: dict[str, torch.Tensor] = {}
    if stored:
        found = {name.partition("/")[2]: entry.shape for name, entry in header.tensors.items()}
        if found != _shapes(model):
            raise SnapshotError(f"{saved.path}: its weights do not fit the checkpoint's model")
        try:
            data = read_regular(saved.path, header.size)
            if len(data) != header.size:
                raise SnapshotError(f"{saved.path}: changed while being read")
            weights = from_bytes(data)
        except (UserFileError, SafetensorError) as e:
            raise SnapshotError(f"{saved.path}: unreadable ({str(e).splitlines()[0]})") from None
    kept: dict[int, Snapshot] = {}
    for step in saved.steps:
        if step.weights == STORED_STEP:
            state = {name: weights[f"{step.step}/{name}"] for name in found}
            bad = next((k for k, v in state.items() if not torch.isfinite(v).all()), None)
            if bad is not None:
                raise SnapshotError(f"{saved.path}: step {step.step} holds NaN or infinity (in {bad})")
            kept[step.step] = Snapshot(model.config, state)
        elif step.weights == LAST_STEP:
            kept[step.step] = snapshot(model)
        else:
            state = _base_state(saved.base, step.base)
            if {k: tuple(v.shape) for k, v in state.items()} != _shapes(model):
                raise SnapshotError(f"{saved.path}: its base {saved.base} does not fit the checkpoint's model")
            kept[step.step] = Snapshot(model.config, state)
    return kept, {s.step: s.scores for s in saved.steps}


def _shapes(model: GPT) -> dict[str, tuple[int, ...]]:
    """The shape of each of the model's tensors, the tied head left out (as snapshots store them)."""
    return {k: tuple(v.shape) for k, v in model.state_dict().items() if k != _TIED}


_BASES: dict[str, dict[str, torch.Tensor]] = {}  # weights hash -> a base's weights in float16 (the last one read)


def _base_state(path: Path, wanted: str) -> dict[str, torch.Tensor]:
    """Step 0's weights: the base's at `path` (whose weights hash is `wanted`) rounded to float16, read once for
    every model that starts from it (no model is built: its tensors are all step 0 needs)."""
    if wanted not in _BASES:
        header = read_header(path)
        tensors = from_bytes(read_checkpoint_bytes(path, header))
        if not all(torch.isfinite(v).all() for v in tensors.values()):
            raise SnapshotError(f"{path}: weights hold NaN or infinity")
        _BASES.clear()
        _BASES[wanted] = {k: v.to(torch.float16) for k, v in tensors.items() if k != _TIED}
    return _BASES[wanted]
