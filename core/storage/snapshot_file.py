"""A checkpoint's snapshots, saved beside it: the sidecar's format, read and checked without torch.

A fine-tune keeps copies of its weights as it goes (the app's procedure view, F9, replays them). Saved with the
checkpoint `X.safetensors`, they live in a sidecar `X.snapshots.safetensors`: a safetensors file whose
JSON metadata names the checkpoint it belongs to (its weights' hash), the seed and the number of held-out
sums the scores count, and each step with its scores already computed, so the procedure view shows them at once.
The checkpoint itself is untouched, so everything that reads checkpoints reads it as before.

Every snapshot is its weights rounded to float16 (half the bytes), and its scores are computed on exactly
those weights. Only the steps between the first and the last are stored: step 0 is the base's weights and
the last step the checkpoint's own, each named by its weights' hash and rounded again when loaded.
Everything is checked before anything is allocated; a bad sidecar is one SnapshotError line naming it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from breadth.core.storage.header import (
    KEY,
    CheckpointError,
    TensorEntry,
    read_raw_header,
    short,
    tensor_table,
    weights_hash,
)
from breadth.core.storage.paths import BASE
from breadth.core.world.arithmetic.problem import Problem, canonical
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HeldOutScore, MetadataError
from breadth.core.world.runs.records import RunMeta

FORMAT = "breadth-snapshots"
VERSION = 1
SUFFIX = ".snapshots.safetensors"  # X.safetensors -> X.snapshots.safetensors
DTYPE, ITEMSIZE = "F16", 2  # snapshots are stored as float16
STORED = 4  # steps stored between the first and the last: 2.75 MB for a 344k-parameter model
HELD_OUT = 20  # held-out sums per environment each snapshot is scored on (the first ones of the run's seed)
MAX_STEPS = 64  # steps a sidecar may list (a run keeps at most 42 in memory)
BASE_STEP, STORED_STEP, LAST_STEP = "base", "stored", "checkpoint"  # where a step's weights are


class SnapshotError(CheckpointError):
    """A snapshot sidecar is unreadable, malformed, or belongs to another checkpoint."""


@dataclass(frozen=True)
class SavedStep:
    """One step of a sidecar: where its weights are and their scores on the held-out sums."""

    step: int
    weights: str  # BASE_STEP (the base's, named by `base`), STORED_STEP (in the sidecar), LAST_STEP (the checkpoint)
    scores: dict[str, HeldOutScore]
    base: str = ""  # the base's weights hash, for step 0

    def to_dict(self) -> dict:
        out = {"step": self.step, "weights": self.weights}
        if self.base:
            out["base"] = self.base
        return out | {"scores": {name: _plain(sc) for name, sc in self.scores.items()}}


@dataclass(frozen=True)
class SnapshotHeader:
    """What a sidecar says, checked: whose snapshots, the steps and their scores, the stored tensors."""

    checkpoint: str  # the weights hash of the checkpoint these snapshots belong to
    seed: int  # the held-out sums scored are this seed's
    held_out: int  # ... the first this many of each environment
    steps: tuple[SavedStep, ...]  # in order of step
    tensors: dict[str, TensorEntry]  # `<step>/<parameter>` -> where its bytes are
    size: int  # the file's size in bytes, exactly as the header declares it


@dataclass(frozen=True)
class SavedSnapshots:
    """A checkpoint's sidecar, checked against the checkpoint, with the base its step 0 needs (if found)."""

    path: Path
    header: SnapshotHeader
    base: Path | None  # the base's file for step 0 (None: not found, so step 0 cannot be replayed)

    @property
    def steps(self) -> tuple[SavedStep, ...]:
        """The steps that can be replayed: all but step 0 when its base is not found."""
        return tuple(s for s in self.header.steps if s.weights != BASE_STEP or self.base is not None)


def sidecar_of(checkpoint: str | os.PathLike) -> Path:
    """Where the snapshots of the checkpoint at `checkpoint` are saved."""
    path = Path(checkpoint)
    return path.with_name(path.name.removesuffix(".safetensors") + SUFFIX)


def snapshot_problems(seed: int, held_out: int = HELD_OUT) -> list[Problem]:
    """The sums a snapshot is scored on: the first `held_out` held-out sums of every environment for `seed`."""
    return [q for env in REGISTERED.values() for q in env.held_out(seed, held_out)]


def stored_steps(kept: list[int], last: int, limit: int = STORED) -> list[int]:
    """The kept steps worth storing: up to `limit` between 0 and `last`, spread evenly over the run."""
    inner = sorted(s for s in set(kept) if 0 < s < last)
    chosen: list[int] = []
    for i in range(1, limit + 1):
        target = last * i / (limit + 1)
        free = [s for s in inner if s not in chosen]
        if free:
            chosen.append(min(free, key=lambda s: (abs(s - target), s)))
    return sorted(chosen)


def keep_every(steps: int, limit: int = STORED) -> int:
    """The snapshot interval of a run of `steps` steps whose snapshots are all to be stored (`limit` between)."""
    return max(1, -(-steps // (limit + 1)))


def plan(
    path: str | os.PathLike, run: RunMeta, kept: list[int], scores: dict[int, dict[str, HeldOutScore]]
) -> tuple[list[int], str] | None:
    """What the sidecar of the checkpoint at `path` holds: the steps whose weights it stores and its metadata.

    Step 0 (named by its base's hash, if that base can be read), up to STORED steps between (spread over the
    run) and the last (the checkpoint's own), each only if it has scores. None if no step after 0 has any.
    The checkpoint must be written already (its weights' hash names it).
    """
    last = max(kept, default=0)
    inner = stored_steps([s for s in kept if s in scores], last)
    steps: list[SavedStep] = []
    base = _hash_or_none(run.base) if 0 in kept and 0 in scores else None
    if base is not None:
        steps.append(SavedStep(0, BASE_STEP, scores[0], base))
    steps += [SavedStep(s, STORED_STEP, scores[s]) for s in inner]
    if last > 0 and last in scores:
        steps.append(SavedStep(last, LAST_STEP, scores[last]))
    if not any(s.step > 0 for s in steps):
        return None
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "checkpoint": weights_hash(path),
        "seed": run.seed,
        "held_out": HELD_OUT,
        "steps": [s.to_dict() for s in steps],
    }
    return inner, json.dumps(meta)


def _hash_or_none(path: str) -> str | None:
    """The weights hash of the checkpoint at `path`, or None if it cannot be read (step 0 is then not saved)."""
    try:
        return weights_hash(path) if path else None
    except CheckpointError:
        return None


def saved_snapshots(checkpoint: str | os.PathLike, run: RunMeta | None = None) -> SavedSnapshots | None:
    """The sidecar of the checkpoint at `checkpoint`, checked against it; None when it has none.

    Step 0's base is looked for where the run says it was (`run.base`) and then as the shipped base; the
    one whose weights have the hash the sidecar names is used.
    """
    path = sidecar_of(checkpoint)
    if not path.exists() and not path.is_symlink():
        return None
    header = read_snapshot_header(path)
    try:
        mine = weights_hash(checkpoint)
    except CheckpointError as e:
        raise SnapshotError(f"{path}: its checkpoint cannot be read ({e})") from None
    if header.checkpoint != mine:
        raise SnapshotError(f"{path}: these snapshots belong to another checkpoint (weights {header.checkpoint})")
    first = header.steps[0]
    base = _find_base(first.base, run) if first.weights == BASE_STEP else None
    return SavedSnapshots(path, header, base)


def _find_base(wanted: str, run: RunMeta | None) -> Path | None:
    """The file whose weights hash is `wanted`: the run's base, else the shipped one; None if neither."""
    candidates = [Path(run.base)] if run is not None and run.base else []
    for candidate in [*candidates, BASE]:
        try:
            if candidate.is_file() and weights_hash(candidate) == wanted:
                return candidate
        except (CheckpointError, OSError):
            continue
    return None


def read_snapshot_header(path: str | os.PathLike) -> SnapshotHeader:
    """The header of the sidecar at `path`, checked whole; SnapshotError with one line otherwise."""
    path = Path(path)
    try:
        raw, length, size = read_raw_header(path, "breadth snapshot file")
    except CheckpointError as e:  # the path names the sidecar: `X.snapshots.safetensors: not a breadth ...`
        raise SnapshotError(str(e)) from None
    stored = raw.get("__metadata__")
    try:
        meta = json.loads(stored[KEY]) if isinstance(stored, dict) and isinstance(stored.get(KEY), str) else None
    except (ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:  # before its tensors: another file's names unshown
        raise SnapshotError(f"{path}: not a breadth snapshot file")
    try:
        tensors = tensor_table(path, raw, size, 8 + length, DTYPE, ITEMSIZE)
    except CheckpointError as e:
        raise SnapshotError(str(e)) from None
    if meta.get("version") != VERSION:
        version = short(meta.get("version"))
        raise SnapshotError(f"{path}: snapshot file version {version}, this program reads {VERSION}")
    checkpoint, seed, held_out = meta.get("checkpoint"), meta.get("seed"), meta.get("held_out")
    if not isinstance(checkpoint, str) or not 0 < len(checkpoint) <= 64:
        raise SnapshotError(f"{path}: names no checkpoint")
    if not _whole(seed) or not _whole(held_out) or held_out == 0:
        raise SnapshotError(f"{path}: seed and held_out must be whole numbers")
    steps = _steps(path, meta.get("steps"))
    _check_tensors(path, steps, tensors)
    return SnapshotHeader(checkpoint, seed, held_out, steps, tensors, size)


def _steps(path: Path, listed: object) -> tuple[SavedStep, ...]:
    """The listed steps, checked: increasing, step 0 only the base's, the last only the checkpoint's."""
    if not isinstance(listed, list) or not 0 < len(listed) <= MAX_STEPS:
        raise SnapshotError(f"{path}: must list from 1 to {MAX_STEPS} steps")
    steps: list[SavedStep] = []
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict) or not _whole(entry.get("step")):
            raise SnapshotError(f"{path}: step entry {i + 1} has no step number")
        step, weights, scores = entry["step"], entry.get("weights"), entry.get("scores")
        if steps and step <= steps[-1].step:
            raise SnapshotError(f"{path}: steps are not in increasing order (step {step})")
        if weights not in (BASE_STEP, STORED_STEP, LAST_STEP):
            raise SnapshotError(f"{path}: step {step} has weights {short(weights)}")
        if (weights == BASE_STEP) != (step == 0) or (weights == LAST_STEP and i != len(listed) - 1):
            raise SnapshotError(f"{path}: step {step} cannot have the {weights}'s weights")
        base = entry.get("base", "")
        if weights == BASE_STEP and (not isinstance(base, str) or not 0 < len(base) <= 64):
            raise SnapshotError(f"{path}: step 0 does not name its base")
        if not isinstance(scores, dict):
            raise SnapshotError(f"{path}: step {step} has no scores")
        try:
            parsed = {
                canonical(str(name)): HeldOutScore.from_dict(canonical(str(name)), data)
                for name, data in scores.items()
            }
        except MetadataError as e:
            raise SnapshotError(f"{path}: step {step}: {e}") from None
        steps.append(SavedStep(step, weights, parsed, base if weights == BASE_STEP else ""))
    return tuple(steps)


def _check_tensors(path: Path, steps: tuple[SavedStep, ...], tensors: dict[str, TensorEntry]) -> None:
    """Every stored step holds the same parameters with the same shapes, and nothing else is in the file."""
    stored = {str(s.step) for s in steps if s.weights == STORED_STEP}
    by_step: dict[str, dict[str, tuple[int, ...]]] = {step: {} for step in stored}
    for name, entry in tensors.items():
        step, _, parameter = name.partition("/")
        if step not in by_step or not parameter:
            raise SnapshotError(f"{path}: tensor {short(name)} belongs to no stored step")
        by_step[step][parameter] = entry.shape
    layouts = {json.dumps(sorted(layout.items())) for layout in by_step.values()}
    if len(layouts) > 1 or any(not layout for layout in by_step.values()):
        raise SnapshotError(f"{path}: its stored steps do not hold the same weights")


def _plain(score: HeldOutScore) -> dict:
    """A score as stored: counts and failure kinds, without example episodes."""
    return {k: v for k, v in score.to_dict().items() if k != "examples"}


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**62
