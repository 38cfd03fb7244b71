"""A sweep job makes a temporary folder only for a base shipped as bytes, and removes it however the job ends."""

from __future__ import annotations

import tempfile

import pytest

from breadth.core.learning import experiment
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """Temporary folders land in a folder of the test's own; training is faked and notes what it saw there."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _spec() -> dict:
    settings = FinetuneSettings(seed=0)
    return {"mix": "two_digit=4", "settings": settings.to_dict(), "held_out": 30, "base_hash": weights_hash(BASE)}


def _fake_training(temp_root, seen: list, raises: BaseException | None = None):
    def train_run(mix, settings, base, held_out, environments=None, resume=None):
        seen.append((sorted(p.name.split("-")[1] for p in temp_root.iterdir()), base))
        if raises is not None:
            raise raises
        return None, RunMeta("finetune", settings, mix.spec(), settings.seed, held_out, {}, (1.0,), 0.1, 0.1)

    return train_run


def test_a_job_on_a_base_path_makes_no_temporary_folder(temp_root, monkeypatch):
    """With the base on this machine (a path, or the shipped one), no breadth-job-* folder exists during the run."""
    seen: list = []
    monkeypatch.setattr(experiment, "train_run", _fake_training(temp_root, seen))
    experiment.run_job(_spec())
    experiment.run_job(_spec() | {"base_path": str(BASE)})
    assert [names for names, _ in seen] == [[], []]
    assert list(temp_root.iterdir()) == []


@pytest.mark.parametrize("raises", [None, RuntimeError("boom"), KeyboardInterrupt()])
def test_a_base_shipped_as_bytes_gets_a_folder_removed_at_the_end(temp_root, monkeypatch, raises):
    """Base bytes are written to one breadth-job-* folder for the run, removed after it, also when it raises."""
    seen: list = []
    monkeypatch.setattr(experiment, "train_run", _fake_training(temp_root, seen, raises))
    spec = _spec() | {"base_bytes": BASE.read_bytes()}
    if raises is None:
        experiment.run_job(spec)
    else:
        with pytest.raises(type(raises)):
            experiment.run_job(spec)
    ((names, base),) = seen
    assert names == ["job"] and base.endswith("base.safetensors")
    assert list(temp_root.iterdir()) == []
