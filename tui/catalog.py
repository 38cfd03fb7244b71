"""The models the app knows: the shipped ones, the runs in the results store, those trained or loaded now.

Entries are built from checkpoint metadata and the store alone (no torch), so the runs table and the
score panel are filled before the engine has even started. A stored run whose checkpoint is gone (or
that never kept one, like a sweep's) is `scores_only`: its scores show, but it cannot play. A title is
made from a store, a checkpoint or a file name, so it is made safe to show once, here (`shown`): every
view and notification that names the model shows it as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from breadth.core.storage.header import CheckpointError, read_metadata, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.text.shown import shown

PLATE = tuple(
    n for n in REGISTERED if any(n in dict(p.mix.counts) for p in PRESETS.values())
)  # the plate's environments
JUST_NOW = "trained just now"  # how a model trained in this app session is called, before its mix


@dataclass
class ModelEntry:
    """A model the user can switch to."""

    key: str  # the engine's name for it
    title: str  # what the runs table shows: text safe to show (core.world.text.shown.shown), never markup
    path: str
    run: RunMeta  # what its checkpoint says: mix, seed, settings, scores, losses
    origin: str  # "shipped", "trained", "loaded" or "stored"
    scores_only: bool = False  # a stored run without a checkpoint: scores to show, no model to play
    made: float = 0.0  # a stored run: the unix time it was stored (what tells it from a row of the same mix)
    job: int = 0  # a model trained now: its training job's number (`#1`)

    @classmethod
    def trained(cls, key: str, job: int, path: str, meta: dict) -> ModelEntry:
        """The model training job `job` made: `trained just now: two-digit 70 #1` (the n-th run of this session)."""
        entry = cls(key, "", path, RunMeta.from_dict(meta), "trained", job=job)
        entry.title = entry.named()
        return entry

    def named(self, codes: bool = False) -> str:
        """Its title as the catalogue gives it, safe to show: its mix in words (`mix 35+35`, `two-digit 70`), or in
        codes (`a2x2 35+a3x1 35`) where a person asked for them, then settings; a loaded file keeps its name."""
        if self.origin == "loaded":
            return self.title
        parts = (self.run.mix_name(codes), self.run.settings_note if self.origin != "shipped" else "")
        if self.origin == "trained":
            parts = (f"{JUST_NOW}:", *parts, f"#{self.job}")
        return shown(" ".join(filter(None, parts)))

    @classmethod
    def loaded(cls, path: str, run: RunMeta) -> ModelEntry:
        """A checkpoint loaded from `path`, keyed by where it resolves to."""
        where = Path(path).expanduser()
        return cls(f"file:{where.resolve()}", shown(where.name[:18]), str(where), run, "loaded")

    @property
    def scores(self) -> dict[str, HeldOutScore]:
        """environment -> held-out score ({} if never evaluated)."""
        return self.run.scores

    @property
    def seed(self) -> str:
        """The seed as the runs table shows it."""
        return self.run.seed_text

    @property
    def mix_label(self) -> str:
        """`a2x2 35+a3x1 35`-style label that fits a narrow column."""
        return self.run.mix_label


MAX_STORED = 500  # the most recent stored runs the table shows


def stored_entries() -> list[ModelEntry]:
    """The results store's runs from the shipped base, oldest first (StoreError if the store cannot be read)."""
    with Store(read_only=True) as store:
        runs = store.runs(base_hash=weights_hash(BASE))[-MAX_STORED:]
    out = []
    for stored in runs:
        path = stored.checkpoint if stored.checkpoint and Path(stored.checkpoint).is_file() else ""
        entry = ModelEntry(f"stored:{stored.key}", "", path, stored.run, "stored", not path, stored.created)
        entry.title = entry.named()
        out.append(entry)
    return out


def shipped_entries() -> list[ModelEntry]:
    """The shipped plate models that are present and readable, keyed `shipped:<preset name>`."""
    out = []
    for preset in PRESETS.values():
        try:
            run = read_metadata(preset.shipped)
        except CheckpointError:
            continue
        entry = ModelEntry(f"shipped:{preset.name}", "", str(preset.shipped), run, "shipped")
        entry.title = entry.named()
        out.append(entry)
    return out
