"""The Save and Load prompts: a checkpoint path, checked (and, to save a file, copied) in a thread worker.

Nothing here opens a user's file on the UI thread: the path is expanded (`user_path`), the output
checked (`check_output`), the checkpoint's header read and validated, and its bytes copied (with the
snapshots saved beside it, if any), all in the prompt's worker (`PathPrompt`). A model that has no file
yet (trained, kept only in the engine's memory) is written by the engine: the prompt answers where, and
the app sends the engine a Save.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

from textual.worker import get_current_worker

from breadth.core.storage.files import UserFileError, check_output, read_regular, user_path, write_atomic
from breadth.core.storage.header import CheckpointError, read_checkpoint_bytes, read_header
from breadth.core.storage.presets import checkpoint_path
from breadth.core.storage.snapshot_file import read_snapshot_header, sidecar_of
from breadth.core.world.environments.mix import slug
from breadth.tui.catalog import ModelEntry
from breadth.tui.screens.path_prompt import PathPrompt


@dataclass(frozen=True)
class SaveTarget:
    """Where the person chose to save a model, and whether the prompt already copied its file there."""

    path: str
    copied: bool  # False: the model has no file; the engine must write it (a Save command)


class SavePrompt(PathPrompt):
    """Ask where to save `entry`; copy its checkpoint there, never over a file, nor into a missing folder."""

    def __init__(self, entry: ModelEntry) -> None:
        default = f"breadth-{slug(entry.run.mix or 'model')}-s{entry.seed}.safetensors"
        super().__init__("Save the loaded model to:", default)
        self.entry = entry

    def resolve(self, text: str) -> SaveTarget | None:
        """Refuse a path that cannot take the model; else copy the checkpoint there (a thread worker)."""
        target = user_path(text)
        check_output(target, inputs=[self.entry.path] if self.entry.path else [])
        if target.exists() or target.is_symlink():
            raise UserFileError(errno.EEXIST, f"{target} exists; choose another name")
        if not target.parent.is_dir():
            raise UserFileError(errno.ENOENT, f"no such folder: {target.parent}")
        if not self.entry.path:
            return SaveTarget(str(target), copied=False)
        source = Path(self.entry.path)
        data = read_checkpoint_bytes(source, read_header(source))  # the bytes whose header was just validated
        if get_current_worker().is_cancelled:
            return None  # Escape while reading: write nothing
        try:
            write_atomic(target, data, exclusive=True)
        except FileExistsError:
            raise UserFileError(errno.EEXIST, f"{target} exists; choose another name") from None
        _copy_snapshots(source, target)
        return SaveTarget(str(target), copied=True)


def _copy_snapshots(source: Path, target: Path) -> None:
    """Copy the snapshots saved beside `source` to beside its copy `target` (none, or a bad file: nothing copied;
    the checkpoint is saved either way)."""
    sidecar = sidecar_of(source)
    if not sidecar.is_file():
        return
    try:
        data = read_regular(sidecar, read_snapshot_header(sidecar).size)
        write_atomic(sidecar_of(target), data)
    except (CheckpointError, OSError):
        return


class LoadPrompt(PathPrompt):
    """Ask for a checkpoint to load and answer its ModelEntry; a file whose header is not valid is refused."""

    def __init__(self) -> None:
        super().__init__("Load a checkpoint (a file, or a shipped model: base, two_digit_70, ...):", "")

    def resolve(self, text: str) -> ModelEntry:
        """The model at `text` (a file, else a shipped model's name), as a new entry for the runs table, once its
        whole header is checked (a thread)."""
        path = checkpoint_path(text)
        return ModelEntry.loaded(str(path), read_header(path).run)
