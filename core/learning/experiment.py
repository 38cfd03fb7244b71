"""One fine-tuning run end to end: load the base, fine-tune on a mix, score held-out sums, record it.

The command line, the plate and the app's engine process all run fine-tunes through `finetune_run`,
so every number they show comes from the same code and lands in the same record (`RunMeta`).
`TorchModels` is what the engine session uses for models: load, play greedily, fine-tune, save.
"""

from __future__ import annotations

import importlib.metadata
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from breadth.core.learning import checkpoint
from breadth.core.learning.evaluate import evaluate
from breadth.core.learning.model import GPT
from breadth.core.learning.models import Models, OnSnapshot
from breadth.core.learning.policy import GreedyPolicy
from breadth.core.learning.train import finetune, use_one_thread
from breadth.core.storage.files import user_path, write_atomic
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.world.mix import Mix
from breadth.core.world.records import OnStep, RunMeta, StepStats
from breadth.core.world.rollout import Policy
from breadth.core.world.settings import HELD_OUT, FinetuneSettings


def finetune_run(
    mix: Mix,
    settings: FinetuneSettings,
    base: str | os.PathLike = BASE,
    held_out: int | None = HELD_OUT,
    on_step: OnStep | None = None,
    on_snapshot: OnSnapshot | None = None,
    snapshot_every: int = 0,
) -> tuple[GPT, RunMeta]:
    """Fine-tune the base on `mix` and evaluate; returns the model and its record.

    With `on_snapshot` and `snapshot_every`, a copy of the weights is handed over before the first step,
    every `snapshot_every` steps and after the last (copies only: the run itself is unchanged).
    """
    use_one_thread()
    model, _ = checkpoint.load(base)
    start = time.perf_counter()
    hook = on_step
    if on_snapshot is not None and snapshot_every > 0:
        on_snapshot(0, snapshot(model))

        def hook(stats: StepStats) -> bool:
            if stats.step % snapshot_every == 0 or stats.step == stats.steps:
                on_snapshot(stats.step, snapshot(model))
            return True if on_step is None else on_step(stats)

    losses = finetune(model, mix.demonstrations(settings.seed), settings, hook)
    trained = time.perf_counter()
    scores, _ = evaluate(model, settings.seed, held_out)
    record = RunMeta(
        "finetune",
        settings,
        mix.spec(),
        settings.seed,
        held_out,
        scores,
        tuple(losses),
        trained - start,
        time.perf_counter() - trained,
        len(losses) == settings.steps,
        str(base),
    )
    return model, record


@dataclass(frozen=True)
class Snapshot:
    """A copy of a model's weights at one step: enough to rebuild it for play."""

    config: object  # the model's GPTConfig
    state: dict  # parameter name -> tensor (a copy)


def snapshot(model: GPT) -> Snapshot:
    """A copy of `model`'s weights, independent of further training."""
    return Snapshot(model.config, {k: v.detach().clone() for k, v in model.state_dict().items()})


def restore(kept: Snapshot) -> GPT:
    """A model with the weights of a snapshot, ready to play."""
    model = GPT(kept.config)
    model.load_state_dict(kept.state)
    return model.eval()


class TorchModels(Models):
    """The engine session's models (see `Models`): checkpoints loaded with torch, played greedily, fine-tuned, saved."""

    def __init__(self) -> None:
        use_one_thread()

    def load(self, path: str) -> tuple[GPT, dict]:
        model, header = checkpoint.load(path)
        return model, header.meta

    def policy(self, model: GPT, batch: int) -> Policy:
        """A greedy policy of `model` for `batch` rows."""
        return GreedyPolicy(model, batch)

    def context(self, model: GPT) -> int:
        return model.config.block_size

    def finetune(
        self,
        mix: Mix,
        settings: FinetuneSettings,
        base: str,
        held_out: int | None,
        on_step: OnStep,
        on_snapshot: OnSnapshot | None = None,
        snapshot_every: int = 0,
    ) -> tuple[GPT, RunMeta]:
        """Fine-tune from `base` and evaluate (see `finetune_run`)."""
        return finetune_run(mix, settings, base, held_out, on_step, on_snapshot, snapshot_every)

    def restore(self, kept: Snapshot) -> GPT:
        """The model a snapshot holds (see `restore`)."""
        return restore(kept)

    def versions(self) -> dict[str, str]:
        return versions()

    def save(self, model: GPT, run: RunMeta, path: str) -> str:
        return str(write_atomic(user_path(path), checkpoint.encode(model, run), exclusive=True))

    def save_new(self, model: GPT, run: RunMeta, folder: str, stem: str) -> tuple[str, dict]:
        path = checkpoint.save_new(model, run, folder, stem)
        return str(path), checkpoint.read_header(path).meta


def run_job(spec: dict) -> dict:
    """One sweep run for a worker (a local process or a Dask worker): plain data in, plain data out.

    `spec`: mix (spec text), settings (FinetuneSettings fields), held_out, base_hash, and either
    base_path or base_bytes (a base shipped to remote workers). The worker checks that the base it
    uses has the expected weights before training, so a run is never stored under the wrong base.
    """
    mix, settings = Mix.parse(spec["mix"]), FinetuneSettings.from_dict(spec["settings"])
    with tempfile.TemporaryDirectory(prefix="breadth-job-") as tmp:
        base = spec.get("base_path") or str(BASE)
        if spec.get("base_bytes") is not None:
            base = str(Path(tmp) / "base.safetensors")
            Path(base).write_bytes(spec["base_bytes"])
        found = weights_hash(base)
        if found != spec["base_hash"]:
            raise RuntimeError(f"this worker's base has weights {found}, the sweep's has {spec['base_hash']}")
        _, record = finetune_run(mix, settings, base, spec["held_out"])
    return {"record": record.to_dict(), "versions": versions()}


def versions() -> dict[str, str]:
    """breadth's and torch's versions, for the store."""
    try:
        breadth = importlib.metadata.version("breadth")
    except importlib.metadata.PackageNotFoundError:
        breadth = "source"
    return {"breadth": breadth, "torch": torch.__version__}
