"""KV-cache decoding, and checkpoints: faithful round trips, torch-free metadata, one-line errors, atomic saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from breadth.core.learning import checkpoint
from breadth.core.learning.model import GPT, GPTConfig, KVCache
from breadth.core.storage.header import CheckpointError, read_header
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.vocab import VOCAB_SIZE

TINY = dict(vocab_size=VOCAB_SIZE, block_size=MAX_LENGTH, n_layer=2, n_head=2, n_embd=16)


@pytest.fixture
def tiny(one_thread) -> GPT:
    """A small randomly initialised model, in eval mode."""
    torch.manual_seed(0)
    return GPT(GPTConfig(**TINY)).eval()


def test_kv_cache_one_position_at_a_time_matches_full_forward(tiny):
    """Decoding one position per call through the KV cache gives the full forward pass's logits."""
    idx = torch.randint(VOCAB_SIZE, (3, 16))
    with torch.no_grad():
        full, _ = tiny(idx)
        cache = KVCache(tiny.config, 3)
        steps = [tiny(idx[:, t : t + 1], cache=cache)[0] for t in range(16)]
    assert cache.pos == 16
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-5)


def test_kv_cache_prefill_then_steps_matches_full_forward(tiny):
    """A prefix fed at once, then single positions, through the cache matches the full forward pass."""
    idx = torch.randint(VOCAB_SIZE, (2, 12))
    with torch.no_grad():
        full, _ = tiny(idx)
        cache = KVCache(tiny.config, 2)
        parts = [tiny(idx[:, :5], cache=cache)[0]] + [tiny(idx[:, t : t + 1], cache=cache)[0] for t in range(5, 12)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-5, atol=1e-5)


def test_kv_cache_chunks_after_a_prefix_match_full_forward(tiny):
    """Several positions fed at once after cached ones (each query sees the cache and the chunk's earlier
    positions, never its later ones) match the full forward pass, as do the single positions after them."""
    idx = torch.randint(VOCAB_SIZE, (2, 12))
    with torch.no_grad():
        full, _ = tiny(idx)
        cache = KVCache(tiny.config, 2)
        parts = [tiny(idx[:, :4], cache=cache)[0], tiny(idx[:, 4:9], cache=cache)[0]]
        parts += [tiny(idx[:, t : t + 1], cache=cache)[0] for t in range(9, 12)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-5, atol=1e-5)


def test_logits_are_causal(tiny):
    """Changing a later token never changes the logits at earlier positions."""
    idx = torch.randint(VOCAB_SIZE, (1, 10))
    other = idx.clone()
    other[0, 7] = (other[0, 7] + 1) % VOCAB_SIZE
    with torch.no_grad():
        a, _ = tiny(idx)
        b, _ = tiny(other)
    torch.testing.assert_close(a[:, :7], b[:, :7])
    assert not torch.allclose(a[:, 7:], b[:, 7:])


def test_loss_ignores_minus_one_targets(tiny):
    """The loss averages only over targets that are not -1."""
    idx = torch.randint(VOCAB_SIZE, (2, 8))
    targets = torch.randint(VOCAB_SIZE, (2, 8))
    masked = targets.clone()
    masked[:, :4] = -1
    with torch.no_grad():
        logits, loss = tiny(idx, masked)
    expected = torch.nn.functional.cross_entropy(logits[:, 4:].reshape(-1, VOCAB_SIZE), targets[:, 4:].reshape(-1))
    torch.testing.assert_close(loss, expected)


def test_head_is_tied_to_the_embedding(tiny):
    """The output head shares the token embedding's weights."""
    assert tiny.head.weight is tiny.wte.weight


def test_save_load_round_trip(tiny, tmp_path):
    """Saving and loading gives identical logits, the same configuration and the metadata we stored."""
    run = RunMeta("finetune", seed=7, mix="add_2x2=3", scores={"add_2x2": HeldOutScore("add_2x2", 3, 4)})
    path = checkpoint.save(tiny, run, tmp_path / "m.safetensors")
    model, header = checkpoint.load(path)
    idx = torch.randint(VOCAB_SIZE, (2, 16))
    with torch.no_grad():
        assert torch.equal(model(idx)[0], tiny(idx)[0])
    assert model.config == tiny.config
    assert model.head.weight is model.wte.weight
    assert not model.training
    assert header.run == run
    assert header.model == TINY | {"dropout": 0.0, "position": "learned"}
    assert header.meta["params"] == tiny.num_params()
    assert read_header(path) == header


def test_base_checkpoint_metadata(base_path):
    """The shipped base's metadata names a pre-trained model of the documented shape that solved every worksheet sum."""
    header = read_header(base_path)
    assert header.run.recipe == "pretrain"
    assert header.model["vocab_size"] == VOCAB_SIZE
    assert (header.model["n_layer"], header.model["n_head"], header.model["n_embd"]) == (3, 4, 96)
    assert header.run.worksheet_accuracy == 1.0


def test_read_metadata_needs_no_torch(base_path):
    """read_metadata runs in a fresh interpreter without ever importing torch."""
    code = (
        "import sys, breadth.core.storage.header as h; m = h.read_header(sys.argv[1]).meta; "
        "assert 'torch' not in sys.modules, 'torch was imported'; print(m['params'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(base_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == read_header(base_path).meta["params"] > 300_000


def _assert_one_line(info, path: Path) -> str:
    """Check the raised error is one non-empty line naming `path`; return it."""
    message = str(info.value)
    assert "\n" not in message and message
    assert str(path) in message  # the user learns which file is bad
    return message


def test_missing_file(tmp_path):
    """Loading a file that does not exist raises a one-line CheckpointError."""
    path = tmp_path / "nope.safetensors"
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path)
    assert "no such checkpoint" in _assert_one_line(info, path)


def test_directory_instead_of_a_file(tmp_path):
    """Loading a directory raises a one-line CheckpointError."""
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(tmp_path)
    _assert_one_line(info, tmp_path)


@pytest.mark.parametrize("keep", [0, 4, 8, 100, "half", -1])
def test_truncated_base(base_path, tmp_path, keep):
    """The base cut short anywhere (empty, 4 bytes, mid-header, half, one byte short) raises a one-line error."""
    data = base_path.read_bytes()
    n = len(data) // 2 if keep == "half" else len(data) - 1 if keep == -1 else keep
    path = tmp_path / "cut.safetensors"
    path.write_bytes(data[:n])
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path)
    _assert_one_line(info, path)


@pytest.mark.parametrize(
    "data",
    [
        b"this is not a checkpoint at all, just some text\n" * 20,
        bytes(range(256)) * 8,
        b"\x02\x00\x00\x00\x00\x00\x00\x00{}",  # a valid, empty safetensors header
        b"\x04\x00\x00\x00\x00\x00\x00\x00[1] ",  # a header that is JSON but not an object
        b"\x04\x00\x00\x00\x00\x00\x00\x00\xff\xfe\xfd\xfc",  # a header that is not text
    ],
)
def test_garbage_file(tmp_path, data):
    """A file of garbage raises a one-line CheckpointError, from read_metadata and from load."""
    path = tmp_path / "garbage.safetensors"
    path.write_bytes(data)
    for read in (read_header, checkpoint.load):
        with pytest.raises(CheckpointError) as info:
            read(path)
        _assert_one_line(info, path)


def _tensors(model: GPT) -> dict:
    """The tensors a checkpoint stores for `model` (the tied head once)."""
    return {k: v.contiguous() for k, v in model.state_dict().items() if k != "head.weight"}


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        {"other": "x"},
        {"breadth": "not json"},
        {"breadth": "[1, 2]"},
        {"breadth": json.dumps({"format": "something-else"})},
    ],
)
def test_safetensors_without_breadth_metadata(tiny, tmp_path, metadata):
    """A safetensors file without (valid) breadth metadata raises a one-line CheckpointError."""
    path = tmp_path / "plain.safetensors"
    save_file(_tensors(tiny), str(path), metadata=metadata)
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path)
    _assert_one_line(info, path)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"version": 99}, "version"),
        ({"vocab": "0123456789"}, "vocabulary"),
        ({"model": None}, "configuration"),
    ],
)
def test_metadata_for_another_program(tiny, tmp_path, change, needle):
    """A breadth checkpoint of another version, vocabulary or without a model config is refused in one line."""
    path = checkpoint.save(tiny, RunMeta("finetune"), tmp_path / "m.safetensors")
    meta = read_header(path).meta | change
    save_file(_tensors(tiny), str(path), metadata={"breadth": json.dumps(meta)})
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path)
    assert needle in _assert_one_line(info, path)


@pytest.mark.parametrize(
    "change",
    [
        {"n_layer": 1},  # fewer blocks than stored
        {"n_layer": 3},  # more blocks than stored
        {"n_embd": 32, "n_head": 4},  # other widths
        {"block_size": 8},  # other position table
        {"n_head": 3},  # width not divisible by heads
        {"n_head": 0},
        {"vocab_size": -1},
        {"dropout": 2.0},
        {"n_embd": "16"},
        {"colour": "blue"},  # a field the model does not have
        {"vocab_size": 20},  # tensors could match, but decoding would index past the vocabulary
        {"block_size": 10**7},  # refused before allocating a huge position table
        {"position": "rope"},  # rotary: no position table, yet the file has one
        {"position": "spiral"},  # no such position scheme
    ],
)
def test_metadata_config_mismatching_the_tensors(tiny, tmp_path, change):
    """A checkpoint whose metadata describes another model than its tensors raises a one-line CheckpointError."""
    path = checkpoint.save(tiny, RunMeta("finetune"), tmp_path / "m.safetensors")
    meta = read_header(path).meta
    meta["model"] = meta["model"] | change
    save_file(_tensors(tiny), str(path), metadata={"breadth": json.dumps(meta)})
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path)
    _assert_one_line(info, path)


def test_save_is_atomic(tiny, tmp_path, monkeypatch):
    """A save that fails before its rename leaves the old checkpoint intact and no temporary file behind."""
    path = checkpoint.save(tiny, RunMeta("finetune", seed=1), tmp_path / "m.safetensors")
    before = path.read_bytes()

    def crash(src, dst):
        raise OSError("disk pulled out mid-save")

    monkeypatch.setattr(os, "replace", crash)
    torch.manual_seed(1)
    other = GPT(GPTConfig(**TINY))
    with pytest.raises(OSError, match="mid-save"):
        checkpoint.save(other, RunMeta("finetune", seed=2), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]
    assert read_header(path).run.seed == 1


def test_save_overwrites_and_creates_folders(tiny, tmp_path):
    """Saving over an existing checkpoint replaces it, and missing parent folders are created."""
    path = tmp_path / "a" / "b" / "m.safetensors"
    checkpoint.save(tiny, RunMeta("finetune", seed=1), path)
    checkpoint.save(tiny, RunMeta("finetune", seed=2), path)
    assert read_header(path).run.seed == 2
    assert [p.name for p in path.parent.iterdir()] == ["m.safetensors"]


def test_loading_a_checkpoint_and_naming_it_in_the_store_read_it_once(base_path, one_thread, monkeypatch, tmp_path):
    """Loading the base for a run and naming it in the store (its weights' hash) read the file once; a file
    rewritten since is read again."""
    import shutil

    from breadth.core.learning import checkpoint as ckpt
    from breadth.core.storage import files, header

    base = tmp_path / "base.safetensors"
    shutil.copyfile(base_path, base)
    reads = []
    real = files.read_regular

    def counted(path, limit):
        reads.append(path)
        return real(path, limit)

    monkeypatch.setattr(header, "read_regular", counted)
    ckpt.load(base)
    first = header.weights_hash(base)
    assert len(reads) == 1
    assert header.weights_hash(base) == first and len(reads) == 1
    data = base.read_bytes()
    base.unlink()
    base.write_bytes(data)  # the same weights in a new file: read again, same hash
    assert header.weights_hash(base) == first and len(reads) == 2
