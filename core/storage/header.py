"""Reading an untrusted checkpoint file without torch: its safetensors header, checked whole.

A checkpoint is one safetensors file whose header holds breadth's JSON metadata beside the tensor
table, so the weights and what is known about them never drift apart. The header is plain JSON, so
the UI lists checkpoints before torch has loaded. Everything in it is checked before anything is
allocated: the file is a regular file, the header is bounded in size and nesting, the metadata is
read into typed records, the model's shape is within limits and its context holds an episode, and
the tensor table is float32, contiguous and exactly as long as the file. Every problem becomes one
CheckpointError line naming the path. The snapshots' sidecar (`core.storage.snapshot_file`) is read by the same
`read_raw_header`, `tensor_table` and `short`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from breadth.core.storage.files import UserFileError, open_regular, read_regular
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.vocab import CHARS

FORMAT = "breadth-checkpoint"
VERSION = 1
KEY = "breadth"  # the safetensors metadata key holding our JSON
MAX_HEADER = 1_000_000  # bytes; a real header is about 10 kB
MAX_PARAMS = 50_000_000  # parameters a checkpoint may hold: 150x the shipped models, 200 MB of float32
DTYPE, ITEMSIZE = "F32", 4  # breadth stores float32 and reads nothing else
MODEL_LIMITS = {"block_size": 1024, "n_layer": 48, "n_head": 64, "n_embd": 4096}  # far above anything trained


class CheckpointError(Exception):
    """A checkpoint is missing, unreadable, truncated, malformed or does not match this program."""


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the file: its shape and where its bytes lie after the header."""

    shape: tuple[int, ...]
    start: int
    end: int


@dataclass(frozen=True)
class CheckpointHeader:
    """What a checkpoint's header says, checked: the run record, the model's shape, the tensor table."""

    run: RunMeta
    model: dict  # the model's shape: GPTConfig fields, checked against MODEL_LIMITS
    meta: dict  # the whole metadata as stored (what the engine's events carry)
    tensors: dict[str, TensorEntry]
    size: int  # the file's size in bytes, exactly as the header declares it


def read_header(path: str | os.PathLike) -> CheckpointHeader:
    """breadth's header of the checkpoint at `path`, checked; CheckpointError with one line otherwise."""
    path = Path(path)
    raw, length, size = read_raw_header(path)
    meta = _metadata(path, raw)
    model = _check_model(path, meta)
    try:
        run = RunMeta.from_dict(meta)
    except MetadataError as e:
        raise CheckpointError(f"{path}: bad metadata: {e}") from None
    tensors = tensor_table(path, raw, size, 8 + length)
    return CheckpointHeader(run, model, meta, tensors, size)


def read_metadata(path: str | os.PathLike) -> RunMeta:
    """The run record of the checkpoint at `path` (see `read_header`)."""
    return read_header(path).run


def read_checkpoint_bytes(path: str | os.PathLike, header: CheckpointHeader) -> bytes:
    """The whole file, read only if it is still the size its header declared; its weights' hash is kept, so the
    file a run loads is not read again to name it in the store (`weights_hash`)."""
    key = _file_key(path)
    try:
        data = read_regular(path, header.size)
    except UserFileError as e:
        raise CheckpointError(str(e)) from None
    if len(data) != header.size:
        raise CheckpointError(f"{path}: changed while being read")
    if key is not None:
        while len(_HASHES) >= HASHES_KEPT:
            del _HASHES[next(iter(_HASHES))]
        start = header.size - max((t.end for t in header.tensors.values()), default=0)
        _HASHES[key] = hashlib.sha256(data[start:]).hexdigest()[:16]
    return data


HASHES_KEPT = 64  # files whose weights' hash is remembered
_HASHES: dict[tuple, str] = {}  # (file, device, inode, size, modified) -> its weights' hash, when last read


def _file_key(path: str | os.PathLike) -> tuple | None:
    """What identifies a file's content without reading it (a replaced or rewritten file gets another key)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def weights_hash(path: str | os.PathLike) -> str:
    """A short hash of a checkpoint's weights alone (not its metadata): which base a run started from.

    A file read already (loaded for a run, or hashed before) and unchanged since is not read again."""
    key = _file_key(path)
    if key in _HASHES:
        return _HASHES[key]
    header = read_header(path)
    data = read_checkpoint_bytes(path, header)
    start = header.size - max((t.end for t in header.tensors.values()), default=0)
    return hashlib.sha256(data[start:]).hexdigest()[:16]


def read_raw_header(path: Path, what: str = "breadth checkpoint") -> tuple[dict, int, int]:
    """The header's JSON object, its length in bytes and the file's size.

    A file that is not safetensors (too short, a length past its end or the limit, a header that is not a JSON
    object) gets one line that is the same whatever its bytes are: nothing read from it (its first 8 bytes as a
    length, say) is ever shown, so naming a private file reveals nothing of what it holds.
    """
    not_safetensors = f"{path}: not a {what} (not a safetensors file, or truncated)"
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(not_safetensors)
            (n,) = struct.unpack("<Q", head)
            if n > size - 8 or n > MAX_HEADER:
                raise CheckpointError(not_safetensors)
            text = f.read(n)
    except UserFileError as e:
        if e.errno == errno.ENOENT:
            raise CheckpointError(f"{path}: no such checkpoint") from None
        raise CheckpointError(str(e)) from None
    except OSError as e:  # a read error on a regular file (/proc/self/mem, a failing disk)
        raise CheckpointError(f"{path}: cannot read ({e.strerror or type(e).__name__})") from None
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CheckpointError(not_safetensors) from None
    if not isinstance(header, dict):
        raise CheckpointError(not_safetensors)
    return header, n, size


def _metadata(path: Path, raw: dict) -> dict:
    stored = raw.get("__metadata__")
    if not isinstance(stored, dict) or not isinstance(stored.get(KEY), str):
        raise CheckpointError(f"{path}: a safetensors file without breadth metadata")
    try:
        meta = json.loads(stored[KEY])
    except ValueError:
        raise CheckpointError(f"{path}: a safetensors file without breadth metadata") from None
    except RecursionError:
        raise CheckpointError(f"{path}: breadth metadata nested too deeply") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a breadth checkpoint")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {short(meta.get('version'))}, this program reads {VERSION}")
    if meta.get("vocab") != CHARS:
        raise CheckpointError(f"{path}: its vocabulary differs from this program's")
    return meta


def _check_model(path: Path, meta: dict) -> dict:
    """Refuse a model configuration that is malformed, absurdly large or too short for an episode."""
    model = meta.get("model")
    if not isinstance(model, dict):
        raise CheckpointError(f"{path}: metadata has no model configuration")
    unknown = sorted(str(k) for k in model if k not in {"vocab_size", "dropout", "position", *MODEL_LIMITS})
    if unknown:
        raise CheckpointError(f"{path}: model configuration has an unknown field {short(unknown[0])}")
    if model.get("vocab_size") != len(CHARS):
        raise CheckpointError(
            f"{path}: vocab_size {short(model.get('vocab_size'))} differs from this program's {len(CHARS)}"
        )
    for key, limit in MODEL_LIMITS.items():
        value = model.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
            raise CheckpointError(f"{path}: model {key} must be a whole number from 1 to {limit}, not {short(value)}")
    if model["n_embd"] % model["n_head"]:
        raise CheckpointError(f"{path}: model n_embd {model['n_embd']} is not a multiple of n_head {model['n_head']}")
    if model["block_size"] < MAX_LENGTH:
        raise CheckpointError(
            f"{path}: a context of {model['block_size']} characters cannot hold an episode ({MAX_LENGTH})"
        )
    if model.get("position", "learned") not in ("learned", "rope"):
        position = short(model.get("position"))
        raise CheckpointError(f"{path}: model position must be 'learned' or 'rope', not {position}")
    dropout = model.get("dropout", 0.0)
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout < 1:
        raise CheckpointError(f"{path}: model dropout must be in [0, 1), not {short(dropout)}")
    return dict(model)


def tensor_table(
    path: Path, raw: dict, size: int, data_start: int, dtype: str = DTYPE, itemsize: int = ITEMSIZE
) -> dict[str, TensorEntry]:
    """The tensor entries, checked: all of `dtype` (float32 for a checkpoint), shapes of whole numbers, packed back
    to back to the file's end."""
    entries: dict[str, TensorEntry] = {}
    params = 0
    for name, entry in raw.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise CheckpointError(f"{path}: tensor {short(name)} has no description")
        if entry.get("dtype") != dtype:
            raise CheckpointError(
                f"{path}: tensor {short(name)} is {short(entry.get('dtype'))}, breadth reads only {dtype}"
            )
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not isinstance(shape, list) or len(shape) > 8 or not all(_whole(d) for d in shape):
            raise CheckpointError(f"{path}: tensor {short(name)} has a malformed shape")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(_whole(o) for o in offsets):
            raise CheckpointError(f"{path}: tensor {short(name)} has malformed data offsets")
        params += math.prod(shape)
        if params > MAX_PARAMS:
            raise CheckpointError(f"{path}: more than {MAX_PARAMS:,} parameters, far beyond any breadth model")
        if offsets[1] - offsets[0] != math.prod(shape) * itemsize:
            raise CheckpointError(f"{path}: tensor {short(name)}'s bytes do not match its shape")
        entries[name] = TensorEntry(tuple(shape), offsets[0], offsets[1])
    position = 0
    for name, entry in sorted(entries.items(), key=lambda kv: kv[1].start):
        if entry.start != position:
            raise CheckpointError(f"{path}: tensor {short(name)} overlaps another or leaves a gap")
        position = entry.end
    if data_start + position != size:
        what = "truncated" if data_start + position > size else "longer than its tensors (trailing data)"
        raise CheckpointError(f"{path}: {what}: {size:,} bytes where the header declares {data_start + position:,}")
    return entries


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**62


def short(value: object) -> str:
    """A value for a one-line message: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
