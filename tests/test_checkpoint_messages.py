"""A file that is not a checkpoint is refused in one line that holds nothing read from it, in every front end.

Until this was pinned, a file whose first 8 bytes were not a plausible safetensors length was refused as "header of
N bytes", N being those bytes read as a number: naming a private file (a key, a password file) on the load path read
its first 8 bytes back to whoever typed the name, the page of a served app included.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from textual.widgets import Input
from tui_helpers import fake_app, wait_for

from breadth.core.cli.main import main as cli
from breadth.core.storage.header import CheckpointError, read_header
from breadth.tui.screens.checkpoint_prompts import LoadPrompt
from breadth.tui.screens.path_prompt import CHECKING

SECRET = b"s3cr3t!!"  # a private file's first 8 bytes
SECRET_NUMBER = struct.unpack("<Q", SECRET)[0]  # what they read as a safetensors header's length

NOT_CHECKPOINTS = {
    "a private file": SECRET + b"hunter2\n" * 10,
    "shorter than a length": b"pw\n",
    "a length, then no JSON": struct.pack("<Q", 7) + b"hunter2",
    "a length, then JSON that is not an object": struct.pack("<Q", 9) + b'"hunter2"',
    "a length past the end": struct.pack("<Q", 4000) + b"hunter2",
}


def _leaks(line: str, path: Path, data: bytes) -> list[str]:
    """What of the file's bytes shows in `line` beside its path: its first 8 read as a number (as digits, or with
    separators), or a word of its text."""
    said = line.replace(str(path), "")
    number = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else None
    words = [w for w in ("s3cr3t", "hunter2", "pw") if w.encode() in data and w in said]
    numbers = [] if number is None else [s for s in (str(number), f"{number:,}") if s in said]
    return words + numbers


def _not_a_checkpoint(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "notes" / "file.safetensors"  # no word of the file's in its path
    path.parent.mkdir()
    path.write_bytes(NOT_CHECKPOINTS[case])
    return path


@pytest.mark.parametrize("case", list(NOT_CHECKPOINTS))
def test_reading_a_file_that_is_not_safetensors_says_so_and_nothing_of_its_bytes(tmp_path, case):
    """Whatever a non-checkpoint holds, read_header's line is the same one, naming the path and nothing read."""
    path = _not_a_checkpoint(tmp_path, case)
    with pytest.raises(CheckpointError) as refused:
        read_header(path)
    line = str(refused.value)
    assert line == f"{path}: not a breadth checkpoint (not a safetensors file, or truncated)"
    assert not _leaks(line, path, NOT_CHECKPOINTS[case])


def test_the_private_files_first_bytes_are_not_printed_by_the_cli(tmp_path, capsys):
    """`breadth play FILE 1+1` on a private file: one line, exit 2, neither its bytes nor their number."""
    path = _not_a_checkpoint(tmp_path, "a private file")
    assert cli(["play", str(path), "1+1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not a breadth checkpoint" in err
    assert str(SECRET_NUMBER) not in err and f"{SECRET_NUMBER:,}" not in err and "s3cr3t" not in err


async def test_the_private_files_first_bytes_are_not_shown_by_the_load_prompt(tmp_path):
    """Ctrl+O on a private file: the prompt's one line says it is no checkpoint, and neither its bytes nor their
    number."""
    path = _not_a_checkpoint(tmp_path, "a private file")
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, LoadPrompt), 5, "the Load prompt")
        prompt = app.screen
        prompt.query_one("#path", Input).value = str(path)
        await pilot.press("enter")
        await wait_for(pilot, lambda: prompt.message != CHECKING, 5, "the check")
        said = prompt.message
    assert "not a breadth checkpoint" in said
    assert str(SECRET_NUMBER) not in said and f"{SECRET_NUMBER:,}" not in said and "s3cr3t" not in said


def test_a_sidecar_that_is_another_programs_safetensors_shows_none_of_its_tensor_names(tmp_path):
    """Beside a checkpoint, a safetensors file of another program (int64 tensors) is refused as no breadth snapshot
    file, naming none of its tensors."""
    import numpy as np
    from safetensors.numpy import save_file

    from breadth.core.storage.snapshot_file import SnapshotError, read_snapshot_header

    path = tmp_path / "m.snapshots.safetensors"
    save_file({"hunter2_weights": np.zeros(3, dtype=np.int64)}, str(path))
    with pytest.raises(SnapshotError) as refused:
        read_snapshot_header(path)
    assert str(refused.value) == f"{path}: not a breadth snapshot file"
