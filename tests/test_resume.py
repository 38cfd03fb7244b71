"""A long run stopped partway goes on from its last saved state, bit for bit the run it would have been; a sweep's
local runs keep their state beside the store until stored, and a rerun of the sweep goes on from it."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from breadth.core.cli.grids import run_with_progress
from breadth.core.learning import checkpoint
from breadth.core.learning.resume import Resume
from breadth.core.learning.train import finetune
from breadth.core.results.grid import Cell, Job
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, run_key
from breadth.core.sweeps.sweep import unfinished
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.settings import FinetuneSettings

MIX = Mix.parse("add_2x2=6,add_3x1=6")
# dropout (the global RNG), batches smaller than the demonstrations (the batch generator) and a schedule (the step)
SETTINGS = FinetuneSettings(steps=30, batch_size=4, dropout=0.2, warmup=5, seed=3)


def _train(
    resume: Resume | None = None, stop_at: int = 0, settings: FinetuneSettings = SETTINGS
) -> tuple[list[float], dict[str, torch.Tensor]]:
    """The shipped base fine-tuned by `settings` (stopped after step `stop_at` if given): losses and weights."""
    torch.set_num_threads(1)
    model, _ = checkpoint.load(BASE)
    losses = finetune(
        model,
        MIX.demonstrations(settings.seed),
        settings,
        on_step=lambda stats: stats.step != stop_at,
        resume=resume,
    )
    return losses, {k: v.clone() for k, v in model.state_dict().items()}


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def whole() -> tuple[list[float], dict[str, torch.Tensor]]:
    """The run uninterrupted, with no state kept."""
    return _train()


def test_a_run_stopped_partway_goes_on_from_its_state_bit_for_bit(tmp_path, whole):
    """Stopped at step 17 with a state every 10 steps, then run again: it goes on from step 10 and its losses and
    weights equal the uninterrupted run's exactly; its seconds count the first piece too."""
    path = tmp_path / "run.safetensors"
    first, _ = _train(Resume(path, "k", every=10), stop_at=17)
    assert len(first) == 17 and first == whole[0][:17] and path.is_file()
    again = Resume(path, "k", every=10)
    losses, weights = _train(again)
    assert again.resumed_at == 10 and again.seconds_before > 0
    assert losses == whole[0] and _same(weights, whole[1])


def test_a_state_not_this_runs_is_ignored_and_the_run_starts_at_its_first_step(tmp_path, whole):
    """Another run's state, a truncated file, a folder in its place or no file at all: the run starts from step 1
    and is the uninterrupted run (never a traceback, never another run's weights)."""
    other = tmp_path / "other.safetensors"
    _train(Resume(other, "another run", every=10), stop_at=12)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(other.read_bytes()[:5000])
    folder = tmp_path / "folder.safetensors"
    folder.mkdir()
    for path, key in ((other, "k"), (truncated, "another run"), (folder, "k"), (tmp_path / "none", "k")):
        resume = Resume(path, key, every=1000)
        losses, weights = _train(resume)
        assert resume.resumed_at == 0, path
        assert losses == whole[0] and _same(weights, whole[1]), path


def test_a_state_that_cannot_be_written_leaves_the_run_as_it_would_have_been(tmp_path, whole):
    """A state whose folder cannot be made (a file stands where it would be): the run trains to the end, the same
    run, and says how many states it could not keep."""
    (tmp_path / "a file").write_text("not a folder")
    resume = Resume(tmp_path / "a file" / "run.safetensors", "k", every=10)
    losses, weights = _train(resume)
    assert resume.unsaved == 2  # after steps 10 and 20 (never after the last)
    assert losses == whole[0] and _same(weights, whole[1])


def test_a_sweep_goes_on_from_a_stopped_runs_state_and_removes_it_once_stored(tmp_path, whole, capsys):
    """A state left beside the store under a run's key (as a killed sweep leaves it) is taken up by the next sweep,
    which says so and trains only the steps after it; the state and its folder are gone once the run is stored. (To
    see that it was read, the state here is another seed's run's, saved under this run's key.)"""
    store_path = tmp_path / "s.sqlite"
    base_hash = weights_hash(BASE)
    settings = replace(SETTINGS, seed=0)
    key = run_key(MIX.spec(), SETTINGS, 3, base_hash)
    job = Job(Cell(MIX, settings), SETTINGS.seed, 3, key)
    state = unfinished(store_path) / f"{key}.safetensors"
    planted, _ = _train(Resume(state, key, every=10), stop_at=25, settings=replace(SETTINGS, seed=4))
    assert state.is_file() and planted[:20] != whole[0][:20]
    with Store(store_path) as store:
        outcome = run_with_progress([job], store, BASE, base_hash, "test", 1, None)
        assert outcome.ran == 1 and not outcome.failed
        said = " ".join(capsys.readouterr().out.split())
        assert f"1 of these runs go on from where they stopped (their states in {unfinished(store_path)})" in said
        stored = next(iter(store.runs(keys=[key])))
    kept = [round(x, 5) for x in planted[:20]]  # a record keeps five decimals of each loss
    assert list(stored.run.losses[:20]) == kept  # went on from step 20 of the state
    assert len(stored.run.losses) == 30 and list(stored.run.losses[20:]) != [round(x, 5) for x in whole[0][20:]]
    assert not state.exists() and not unfinished(store_path).exists()
