"""One training run end to end: load the base, train on a mix by a recipe, score held-out sums, record it.

The command line, the plate, sweeps and the app's engine process all run through `train_run`, whatever
the recipe (`core.learning.trainers`), so every number they show comes from the same code and lands in the
same record (`RunMeta`). `TorchModels` is what the engine session uses for models: load, play greedily,
train, save.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import torch

from breadth.core.learning import checkpoint, snapshots
from breadth.core.learning.evaluate import evaluate, evaluate_environments
from breadth.core.learning.lockstep import LockstepJob, train_lockstep
from breadth.core.learning.model import GPT
from breadth.core.learning.models import Models, OnBefore, OnSnapshot
from breadth.core.learning.policy import GreedyPolicy
from breadth.core.learning.resume import Resume
from breadth.core.learning.snapshots import Snapshot, restore, snapshot
from breadth.core.learning.train import use_one_thread
from breadth.core.learning.trainers import measure_before, trainer
from breadth.core.storage.files import user_path, write_atomic
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.rollout import Policy
from breadth.core.world.episodes.scores import HELD_OUT, HeldOutScore
from breadth.core.world.runs.recipes import FINETUNE, recipe, recipe_of
from breadth.core.world.runs.records import Diverged, Lockstep, OnStep, RunMeta, StepStats


def train_run(
    mix: Mix,
    settings: object,
    base: str | os.PathLike = BASE,
    held_out: int | None = HELD_OUT,
    on_step: OnStep | None = None,
    on_snapshot: OnSnapshot | None = None,
    snapshot_every: int = 0,
    on_before: OnBefore | None = None,
    environments: list[str] | None = None,
    resume: Resume | None = None,
) -> tuple[GPT, RunMeta]:
    """Train the base on `mix` by the recipe whose settings `settings` are, and evaluate: the model and its record.

    A recipe that measures the model before training (its `before`: pass@G for learning from reward) does so
    first and hands the numbers to `on_before` (False from it stops the run there); they and whatever each step
    measured besides its loss (`StepStats.metrics`) are kept in the record. A run stopped by `on_step` or
    `on_before` is not evaluated: its record says `completed` False and has no scores. With `on_snapshot` and
    `snapshot_every`, a copy of the weights is handed over before the first step, every `snapshot_every` steps
    and after the last (copies only: the run itself is unchanged). With `resume` (demonstrations only), the run goes
    on from the state saved there and keeps saving it; its seconds count every piece.
    """
    made_by = recipe_of(settings)
    trains = trainer(made_by.name)
    use_one_thread()
    model, _ = checkpoint.load(base)
    measure = measure_before(made_by.name)
    before = measure(model, mix, settings) if measure is not None else {}
    if before and on_before is not None and on_before(before) is False:
        return model, RunMeta.of_run(settings, mix, held_out, base, completed=False, before=before)
    start = time.perf_counter()
    measured: list[Mapping[str, float]] = []  # each step's metrics
    if on_snapshot is not None and snapshot_every > 0:
        on_snapshot(0, snapshot(model))

    def hook(stats: StepStats) -> bool:
        measured.append(stats.metrics)
        if (
            on_snapshot is not None
            and snapshot_every > 0
            and (stats.step % snapshot_every == 0 or stats.step == stats.steps)
        ):
            on_snapshot(stats.step, snapshot(model))
        return True if on_step is None else on_step(stats)

    losses = trains(model, mix, settings, hook) if resume is None else trains(model, mix, settings, hook, resume=resume)
    trained = time.perf_counter()
    completed = len(losses) == settings.steps
    # every registered environment, or those named; a stopped run is not scored (nobody keeps it: Stop must be quick)
    scores = evaluate(model, settings.seed, held_out, environments)[0] if completed else {}
    record = RunMeta.of_run(
        settings,
        mix,
        held_out,
        base,
        measured,
        scores=scores,
        losses=tuple(losses),
        train_seconds=trained - start + (0.0 if resume is None else resume.seconds_before),
        eval_seconds=time.perf_counter() - trained,
        completed=completed,
        before=before,
    )
    return model, record


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
    ) -> tuple[GPT, RunMeta]:
        """Train from `base` by the settings' recipe and evaluate (see `train_run`)."""
        return train_run(mix, settings, base, held_out, on_step, on_snapshot, snapshot_every, on_before)

    def score_environments(self, model: GPT, seed: int, held_out: int, names: list[str]) -> dict[str, HeldOutScore]:
        """The environments' test splits decoded in batches (see `evaluate_environments`)."""
        return evaluate_environments(model, seed, held_out, names)[0]

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

    def load_snapshots(self, path: str, model: GPT, run: RunMeta) -> tuple[dict[int, Snapshot], dict]:
        """The snapshots saved beside the checkpoint at `path` and their scores (see `snapshots.load`)."""
        return snapshots.load(path, model, run)

    def save_snapshots(self, path: str, run: RunMeta, kept: dict[int, Snapshot], scores: dict) -> str | None:
        """Save a run's snapshots beside its checkpoint at `path` (see `snapshots.save`)."""
        written = snapshots.save(path, run, kept, scores)
        return None if written is None else str(written)


def run_job(spec: dict) -> dict:
    """One sweep run for a worker (a local process or a Dask worker): plain data in, plain data out.

    `spec`: mix (spec text), recipe (its name; the plate's if absent), settings (that recipe's settings'
    fields), held_out, families (the environments it is scored on, if not every registered one: the key is spelt as
    sweeps always sent it, for workers of another install), base_hash, and either base_path or base_bytes (a base
    shipped to remote workers). The worker checks that the base it uses has the expected weights before
    training, so a run is never stored under the wrong base. With resume ({path, key, every}: a local sweep's
    fine-tunes), the run keeps its state in that file every `every` steps and goes on from it when run again.
    """
    settings_class = recipe(spec.get("recipe", FINETUNE)).settings
    mix, settings = Mix.parse(spec["mix"]), settings_class.from_dict(spec["settings"])
    environments = spec.get("families")  # the spec's key for them, as sweeps always sent it (see above)
    where = spec.get("resume")  # a local sweep's fine-tunes: {path, key, every}
    resume = Resume(where["path"], where["key"], where["every"]) if where else None
    if resume is not None and recipe_of(settings).name != FINETUNE:
        raise ValueError("only fine-tunes on demonstrations go on from a saved state")
    with _checked_base(spec) as base:
        _, record = train_run(mix, settings, base, spec["held_out"], environments=environments, resume=resume)
    return {"record": record.to_dict(), "versions": versions()}


def run_group(spec: dict) -> dict:
    """A lockstep group of sweep runs for a worker (`core.learning.lockstep.train_lockstep`): plain data in and out.

    `spec`: runs (one spec per run, as `run_job` takes them, each a fine-tune; one held_out for all), group (the
    runs' keys as runs trained alone, which each record names with its place), base_hash, and base_path or
    base_bytes. Out: per run, in order, its record, or the one line saying why it failed (a loss that stopped
    being finite), and the versions.
    """
    runs, group = spec["runs"], tuple(spec["group"])
    if len(runs) != len(group) or len({run["held_out"] for run in runs}) != 1:
        raise ValueError("a lockstep group names each of its runs, all scored on one held-out size")
    if any(run.get("recipe", FINETUNE) != FINETUNE for run in runs):
        raise ValueError("runs in lockstep are fine-tunes on demonstrations")
    jobs = [
        LockstepJob(
            Mix.parse(run["mix"]),
            recipe(FINETUNE).settings.from_dict(run["settings"]),
            run.get("families"),  # its environments under the spec's key, as `run_job` reads them
        )
        for run in runs
    ]
    with _checked_base(spec) as base:
        outcomes = train_lockstep(jobs, base=base, held_out=runs[0]["held_out"])
    out = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, Diverged):
            out.append({"error": f"{type(outcome).__name__}: {outcome}"})  # made one line where it is shown
        else:
            out.append({"record": replace(outcome[1], lockstep=Lockstep(group, index)).to_dict()})
    return {"runs": out, "versions": versions()}


@contextlib.contextmanager
def _checked_base(spec: dict) -> Iterator[str]:
    """The path of the base a worker's spec names, checked to have the weights the sweep expects: base_path (or the
    shipped base), or base_bytes written to a folder of its own, removed afterwards (also when the run raises)."""
    base, tmp = spec.get("base_path") or str(BASE), None
    try:
        if spec.get("base_bytes") is not None:  # a base shipped as bytes: a folder of its own, only then
            tmp = tempfile.mkdtemp(prefix="breadth-job-")
            base = str(Path(tmp) / "base.safetensors")
            Path(base).write_bytes(spec["base_bytes"])
        found = weights_hash(base)
        if found != spec["base_hash"]:
            raise RuntimeError(f"this worker's base has weights {found}, the sweep's has {spec['base_hash']}")
        yield base
    finally:  # also when the run raises (an error, KeyboardInterrupt)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def versions() -> dict[str, str]:
    """breadth's and torch's versions, for the store."""
    try:
        breadth = importlib.metadata.version("breadth")
    except importlib.metadata.PackageNotFoundError:
        breadth = "source"
    return {"breadth": breadth, "torch": torch.__version__}
