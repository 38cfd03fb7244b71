"""Whatever file a user hands breadth, reading it gives a checkpoint or one CheckpointError line, never a hang."""

from __future__ import annotations

import json
import os
import struct
import threading
from pathlib import Path

import pytest
import torch

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.learning import checkpoint
from breadth.core.learning.model import GPT, GPTConfig
from breadth.core.storage.files import UserFileError, check_output, clean_stale_temporaries, user_path, write_new
from breadth.core.storage.header import CheckpointError, read_header
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.vocab import VOCAB_SIZE

TINY = dict(vocab_size=VOCAB_SIZE, block_size=MAX_LENGTH, n_layer=1, n_head=2, n_embd=8)


def _within(seconds: float, call):
    """Run `call` in a thread; fail (instead of hanging the suite) if it has not returned in `seconds`."""
    out: dict = {}

    def run():
        try:
            out["value"] = call()
        except BaseException as e:  # noqa: BLE001 -- handed back to the test
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds}s"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _one_line_refusal(path, read=read_header) -> str:
    with pytest.raises(CheckpointError) as info:
        _within(10, lambda: read(path))
    message = str(info.value)
    assert message and "\n" not in message and str(path) in message
    return message


@pytest.fixture
def saved(tmp_path) -> Path:
    """A small valid checkpoint."""
    torch.manual_seed(0)
    return checkpoint.save(GPT(GPTConfig(**TINY)), RunMeta("finetune", seed=3, mix="two_digit=4"), tmp_path / "m.st")


def _rewrite(path: Path, meta: dict | None = None, tensors: dict | None = None, tail: bytes = b"") -> Path:
    """Rewrite `path`'s header with other metadata or tensor entries, keeping its data (plus `tail`)."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    if meta is not None:
        header["__metadata__"]["breadth"] = json.dumps(meta)
    if tensors is not None:
        header.update(tensors)
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + data[8 + n :] + tail)
    return path


def test_a_fifo_is_refused_at_once_by_every_reader(tmp_path):
    """A named pipe with no writer is refused in one line by the header reader and the loader; nothing blocks."""
    fifo = tmp_path / "x.safetensors"
    os.mkfifo(fifo)
    assert "FIFO" in _one_line_refusal(fifo)
    assert "FIFO" in _one_line_refusal(fifo, checkpoint.load)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_is_refused(device):
    """A character device is not read: one line saying it is a device."""
    assert "device" in _one_line_refusal(Path(device))


def test_a_directory_a_symlink_loop_and_proc_mem_are_refused(tmp_path):
    """A directory, a symlink loop and /proc/self/mem each give one line, never a traceback."""
    loop = tmp_path / "loop.safetensors"
    loop.symlink_to(loop)
    assert "directory" in _one_line_refusal(tmp_path)
    assert "symlink loop" in _one_line_refusal(loop)
    _one_line_refusal(Path("/proc/self/mem"))


def test_a_path_under_an_unknown_users_home_is_one_line():
    """`~nosuchuser/x` is refused in one line (Python raises RuntimeError for it)."""
    with pytest.raises(UserFileError, match="nosuchuser"):
        user_path("~nosuchuser-breadth/x.safetensors")


@pytest.mark.parametrize(
    "change",
    [
        {"scores": [1, 2]},  # a list where a mapping is expected
        {"scores": {"two_digit": {"solved": "3", "total": 4}}},  # a string where a number is
        {"scores": {"two_digit": {"solved": 5, "total": 4}}},  # more solved than scored
        {"scores": {"two_digit": {"total": 4}}},  # a missing field
        {"seed": "0"},
        {"seed": -1},
        {"mix": ["two_digit", 4]},  # a mix that is not text
        {"settings": {"steps": 0}},
        {"settings": {"colour": 1}},
        {"losses": [[[[1.0]]]]},  # nested arrays
        {"losses": "down"},
        {"held_out": 0},
        {"kind": "other"},
        {"completed": "yes"},
        {"train_seconds": -1},
        {"model": {"vocab_size": VOCAB_SIZE, "block_size": 16, "n_layer": 1, "n_head": 2, "n_embd": 8}},
    ],
)
def test_metadata_of_an_unexpected_shape_is_one_line(saved, change):
    """Valid JSON metadata of the wrong shape (types, ranges, missing fields, short context) is one line."""
    meta = read_header(saved).meta | change
    _one_line_refusal(_rewrite(saved, meta=meta))


def test_metadata_nested_very_deeply_is_one_line(saved):
    """Metadata nested thousands deep gives one line, not a RecursionError."""
    header = read_header(saved).meta
    _one_line_refusal(_rewrite(saved, meta=header | {"losses": json.loads("[" * 900 + "]" * 900)}))
    deep = saved.read_bytes()
    (n,) = struct.unpack("<Q", deep[:8])
    head = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    saved.write_bytes(struct.pack("<Q", len(head)) + head)
    _one_line_refusal(saved)


def test_a_huge_declared_model_is_refused_before_allocating(saved):
    """Metadata asking for a 48-layer, 4096-wide model over small weights is refused from the header alone."""
    meta = read_header(saved).meta
    meta["model"] |= {"n_layer": 48, "n_embd": 4096, "n_head": 64, "block_size": 1024}
    message = _one_line_refusal(_rewrite(saved, meta=meta), checkpoint.load)
    assert "do not match" in message


def test_declared_tensors_beyond_the_parameter_budget_are_refused(saved):
    """A tensor table declaring billions of parameters is refused before anything is read or allocated."""
    huge = {"wte.weight": {"dtype": "F32", "shape": [100_000, 100_000], "data_offsets": [0, 4 * 10**10]}}
    assert "parameters" in _one_line_refusal(_rewrite(saved, tensors=huge))


def test_a_valid_header_followed_by_gigabytes_is_refused_without_reading_them(saved):
    """A file much longer than its header declares (here a sparse 3 GB file) is refused from its size alone."""
    with saved.open("r+b") as f:
        f.truncate(3 * 2**30)
    assert "trailing data" in _one_line_refusal(saved, checkpoint.load)


def test_truncated_data_is_refused(saved):
    """A file shorter than its tensor table says is refused."""
    data = saved.read_bytes()
    saved.write_bytes(data[:-10])
    assert "truncated" in _one_line_refusal(saved)


def test_weights_of_another_dtype_are_refused(saved):
    """A tensor stored as F16 is refused, not cast silently."""
    entry = {"wte.weight": {"dtype": "F16", "shape": [VOCAB_SIZE, 8], "data_offsets": [0, VOCAB_SIZE * 8 * 2]}}
    assert "F16" in _one_line_refusal(_rewrite(saved, tensors=entry))


def test_weights_with_nan_or_infinity_are_refused(tmp_path):
    """A checkpoint whose weights hold NaN or infinity does not load."""
    for bad in (float("nan"), float("inf")):
        model = GPT(GPTConfig(**TINY))
        with torch.no_grad():
            model.wte.weight[0, 0] = bad
        path = checkpoint.save(model, RunMeta("finetune"), tmp_path / "bad.safetensors")
        assert "NaN or infinity" in _one_line_refusal(path, checkpoint.load)


def test_the_writer_replaces_only_regular_files(tmp_path, saved):
    """Outputs that are a symlink, a FIFO, a device or a directory are refused; a regular file or nothing is fine."""
    link = tmp_path / "link.json"
    link.symlink_to(saved)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for target in (link, fifo, Path("/dev/null"), tmp_path):
        with pytest.raises(UserFileError):
            check_output(target)
    assert link.is_symlink() and Path("/dev/null").is_char_device()
    check_output(saved)
    check_output(tmp_path / "new" / "deeper" / "x.json")


def test_the_writer_never_writes_over_an_input(saved):
    """An output that is one of the inputs (or a link to it) is refused before any work."""
    with pytest.raises(UserFileError, match="input"):
        check_output(saved, inputs=[saved])
    other = saved.parent / "alias.safetensors"
    os.link(saved, other)
    with pytest.raises(UserFileError, match="input"):
        check_output(other, inputs=[saved])


def test_an_output_under_a_file_is_refused_up_front(saved):
    """An output whose folder is a file is refused before work starts."""
    with pytest.raises(UserFileError, match="not a folder"):
        check_output(saved / "x.json")


def test_runs_finishing_in_the_same_second_get_different_files(tmp_path):
    """Two runs written with the same name stem get two files; neither replaces the other."""
    first = write_new(tmp_path, "20260101-000000-two_digit70-s0", ".safetensors", b"first")
    second = write_new(tmp_path, "20260101-000000-two_digit70-s0", ".safetensors", b"second")
    assert first != second and first.read_bytes() == b"first" and second.read_bytes() == b"second"


def test_stale_temporary_files_of_dead_writers_are_cleaned(tmp_path):
    """A temporary file left by a writer that died (kill -9) is removed; one of a live writer is kept."""
    dead = tmp_path / ".m.safetensors.999999999.abcd_123.tmp"
    live = tmp_path / f".m.safetensors.{os.getpid()}.efgh_456.tmp"
    other = tmp_path / ".hidden-user-file.tmp"
    for f in (dead, live, other):
        f.write_bytes(b"x")
    clean_stale_temporaries(tmp_path)
    assert not dead.exists() and live.exists() and other.exists()


def test_command_line_refuses_to_overwrite_its_input(capsys, saved, tmp_path):
    """`breadth eval X --json X` and `train --base F --out F` exit 2 in one line and leave the file as it was."""
    before = saved.read_bytes()
    assert main(["eval", str(saved), "--json", str(saved)]) == USAGE_ERROR
    assert main(["train", "--mix", "two_digit=4", "--steps", "1", "--base", str(saved), "--out", str(saved)]) == 2
    assert saved.read_bytes() == before
    errs = capsys.readouterr().err.strip().splitlines()
    assert len(errs) == 2 and all("input" in line for line in errs)


def test_command_line_checks_outputs_before_working(capsys, saved):
    """An output under a file is refused before training or evaluating (no progress bar, one line)."""
    assert main(["eval", str(saved), "--json", str(saved / "x.json")]) == USAGE_ERROR
    assert main(["train", "--mix", "two_digit=4", "--out", "/dev/null"]) == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 2


def test_a_sum_starting_with_minus_is_a_bad_sum_not_an_option(capsys, saved):
    """`breadth play F -1+2` is refused by the sum parser, not taken for an unknown option."""
    assert main(["play", str(saved), "-1+2"]) == USAGE_ERROR
    assert "bad sum" in capsys.readouterr().err
