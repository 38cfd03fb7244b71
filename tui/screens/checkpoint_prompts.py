"""The Save and Load prompts: a checkpoint path, checked inline before the prompt closes, then acted on."""

from __future__ import annotations

from pathlib import Path

from core.world.files import write_atomic
from core.world.header import CheckpointError, read_metadata
from core.world.mix import slug
from core.world.records import RunMeta

from ..catalog import ModelEntry
from .path_prompt import PathPrompt


class SavePrompt(PathPrompt):
    """Ask where to save `entry`'s checkpoint and copy it there; an existing file or a missing folder is refused."""

    def __init__(self, entry: ModelEntry) -> None:
        default = f"breadth-{slug(entry.run.mix or 'model')}-s{entry.seed}.safetensors"
        super().__init__("Save the loaded model to:", default, self.refuse)
        self.entry = entry

    def accept(self, path: str) -> str | None:
        """Copy the checkpoint to `path` and say so (or why not); the path, or None if nothing was saved."""
        try:
            write_atomic(Path(path).expanduser(), Path(self.entry.path).read_bytes())
        except OSError as e:
            self.notify(f"could not save: {e.strerror or e}", severity="error")
            return None
        self.notify(f"saved {path}")
        return path

    @staticmethod
    def refuse(path: str) -> str | None:
        """Why `path` cannot be saved to, or None."""
        target = Path(path).expanduser()
        if target.exists():
            return f"{target} exists; choose another name"
        if not target.parent.is_dir():
            return f"no such folder: {target.parent}"
        return None


class LoadPrompt(PathPrompt):
    """Ask for a checkpoint to load and answer its ModelEntry; a file whose header cannot be read is refused."""

    def __init__(self) -> None:
        super().__init__("Load a checkpoint from:", "", self.refuse)
        self.found: dict[str, RunMeta] = {}  # path typed -> what its checkpoint says

    def refuse(self, path: str) -> str | None:
        """Why `path` cannot be loaded, or None (its metadata is then in `found`)."""
        try:
            self.found[path] = read_metadata(Path(path).expanduser())
        except CheckpointError as e:
            return str(e)
        return None

    def accept(self, path: str) -> ModelEntry:
        """The model at `path`, as a new entry for the runs table."""
        return ModelEntry.loaded(path, self.found[path])
