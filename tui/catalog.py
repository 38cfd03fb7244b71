"""The models the app knows: the shipped ones and those trained or loaded this session.

Entries are built from checkpoint metadata alone (no torch), so the runs table and the score panel
are filled before the engine has even started.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.checkpoint import CheckpointError, read_metadata
from core.experiment import SHIPPED
from core.mix import Mix



@dataclass
class ModelEntry:
    """A model the user can switch to."""

    key: str  # the engine's name for it
    title: str  # what the runs table shows
    path: str
    meta: dict
    origin: str  # "shipped", "trained" or "loaded"

    @property
    def scores(self) -> dict:
        """family -> {"solved", "total", ...} from the metadata ({} if never evaluated)."""
        return self.meta.get("scores") or {}

    @property
    def seed(self) -> str:
        return str(self.meta["seed"]) if "seed" in self.meta else "-"

    @property
    def mix_label(self) -> str:
        spec = self.meta.get("mix")
        if not spec:
            return "pre-trained only" if self.meta.get("kind") == "pretrain" else "?"
        try:
            return short_mix(Mix.parse(spec))
        except ValueError:
            return spec


def short_mix(mix: Mix) -> str:
    """`2d 35+3d 35`-style label that fits a narrow column."""
    short = {"two_digit": "2d", "three_digit": "3d"}
    return "+".join(f"{short.get(name, name)} {n}" for name, n in mix.counts)


def shipped_entries() -> list[ModelEntry]:
    """The shipped plate models that are present and readable."""
    out = []
    for name, path in SHIPPED.items():
        try:
            meta = read_metadata(path)
        except CheckpointError:
            continue
        entry = ModelEntry(f"shipped:{name}", "", str(path), meta, "shipped")
        entry.title = entry.mix_label
        out.append(entry)
    return out


def runs_dir() -> Path:
    """Where models trained in the app are saved as soon as they finish (never lost on a crash)."""
    root = os.environ.get("BREADTH_RUNS")
    if root:
        return Path(root)
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "breadth" / "runs"
