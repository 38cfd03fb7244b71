"""What the engine session needs of models, written once: the torch side (`experiment.TorchModels`) and the
tests' scripted models (`tests/fake_engine.py`) both subclass `Models`. No torch is imported here."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.rollout import Policy
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import OnStep, RunMeta

OnSnapshot = Callable[[int, object], None]  # (step, a copy of the weights) during training
OnBefore = Callable[[dict[str, float]], bool | None]  # what a recipe measured before its first step; False to stop


class Models(ABC):
    """Models the session holds by key: loaded, played, trained, snapshotted and saved."""

    @abstractmethod
    def load(self, path: str) -> tuple[object, dict]:
        """The model at `path` and its metadata as stored."""

    @abstractmethod
    def policy(self, model: object, batch: int) -> Policy:
        """A policy playing `model` for `batch` rows."""

    @abstractmethod
    def context(self, model: object) -> int:
        """The model's context in characters."""

    @abstractmethod
    def train(
        self,
        mix: Mix,
        settings: object,
        base: str,
        held_out: int | None,
        on_step: OnStep,
        on_snapshot: OnSnapshot | None = None,
        snapshot_every: int = 0,
        on_before: OnBefore | None = None,
    ) -> tuple[object, RunMeta]:
        """Train from `base` by the recipe whose settings these are (`core.world.runs.recipes`), and evaluate: the
        trained model and its record; snapshots handed to on_snapshot, what the recipe measures before its first step to
        on_before (which returns False to stop there). A stopped run is not evaluated (`completed` False)."""

    @abstractmethod
    def score_environments(self, model: object, seed: int, held_out: int, names: list[str]) -> dict[str, HeldOutScore]:
        """`model`'s score on the test split (`held_out` sums of `seed`) of each environment `names` names."""

    @abstractmethod
    def restore(self, kept: object) -> object:
        """The playable model a snapshot holds."""

    @abstractmethod
    def save(self, model: object, run: RunMeta, path: str) -> str:
        """Save to `path`, a new file (never replacing one); the path written."""

    @abstractmethod
    def save_new(self, model: object, run: RunMeta, folder: str, stem: str) -> tuple[str, dict]:
        """Save under a new name in `folder` (never replacing a file); the path and the metadata as stored."""

    @abstractmethod
    def versions(self) -> dict[str, str]:
        """The package's and torch's versions, for the results store."""

    @abstractmethod
    def load_snapshots(self, path: str, model: object, run: RunMeta) -> tuple[dict[int, object], dict]:
        """The snapshots saved beside the checkpoint at `path` (whose model is `model`) by step, and their scores by
        step (environment -> HeldOutScore); ({}, {}) if it has none; SnapshotError (one line) for a bad sidecar."""

    @abstractmethod
    def save_snapshots(self, path: str, run: RunMeta, kept: dict[int, object], scores: dict) -> str | None:
        """Save a run's snapshots (step -> snapshot) with their scores (step -> environment -> HeldOutScore) beside its
        checkpoint, written at `path`; the sidecar's path, or None if there was nothing to save."""
