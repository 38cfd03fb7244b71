"""The learning rate's schedule (`FinetuneSettings.warmup`): a warm-up then a cosine to 0, followed by a run alone and
by runs in lockstep, while every run at a constant rate keeps the key and metadata it had."""

from __future__ import annotations

import copy
import math
import os
import sys

import pytest

from breadth.core.learning import checkpoint
from breadth.core.learning.lockstep import finetune_lockstep
from breadth.core.learning.train import finetune
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store_file import run_key
from breadth.core.world.runs.records import settings_note
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError

sys.path.insert(0, os.path.dirname(__file__))
from test_lockstep import TOLERANCE  # noqa: E402


def test_the_rate_warms_up_then_falls_by_a_cosine_to_zero():
    """0 warm-up is the plate's constant rate; with one, the rate rises linearly to lr, then falls to 0 at the end."""
    plate = FinetuneSettings(steps=1000)
    assert {plate.rate(s) for s in (1, 500, 1000)} == {plate.lr}
    s = FinetuneSettings(steps=1000, lr=1e-3, warmup=100)
    assert s.rate(1) == pytest.approx(1e-5) and s.rate(50) == pytest.approx(5e-4) and s.rate(100) == pytest.approx(1e-3)
    assert s.rate(550) == pytest.approx(5e-4)  # half-way down the cosine
    assert s.rate(1000) == pytest.approx(0, abs=1e-12)
    after = [s.rate(k) for k in range(100, 1001)]
    assert all(a >= b for a, b in zip(after, after[1:], strict=False))


def test_a_constant_rate_keeps_its_key_and_metadata():
    """Runs at a constant rate (every run made before the schedule) keep their settings' JSON, hence their keys;
    a scheduled run is keyed, noted and read back apart."""
    plate = FinetuneSettings(seed=3)
    assert "warmup" not in plate.to_dict()
    assert FinetuneSettings.from_dict(plate.to_dict()) == plate
    scheduled = FinetuneSettings(seed=3, warmup=400)
    assert scheduled.to_dict()["warmup"] == 400 and FinetuneSettings.from_dict(scheduled.to_dict()) == scheduled
    assert run_key("add_2x2=70", plate, 30, "b") != run_key("add_2x2=70", scheduled, 30, "b")
    assert settings_note(scheduled) == "warmup 400" and settings_note(plate) == ""
    with pytest.raises(SettingsError, match="warmup"):
        FinetuneSettings(warmup=-1)


def _written_out(lr: float, warmup: int, steps: int):
    """The schedule as docs/environments.md states it, written out apart from `FinetuneSettings.rate`."""

    def at(step: int) -> float:
        if step <= warmup:
            return lr * step / warmup
        return lr / 2 * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))

    return at


def test_a_run_alone_takes_the_scheduled_rate(base_path, one_thread):
    """`train.finetune` with a warm-up steps at the written-out schedule's rates: the same losses, bit for bit, and
    not those of the constant rate."""
    base, _ = checkpoint.load(base_path)
    problems = PRESETS["mix_35_35"].mix.demonstrations(0)
    s = FinetuneSettings(steps=12, warmup=4, dropout=0.0)
    scheduled = finetune(copy.deepcopy(base), problems, s)
    constant = FinetuneSettings(steps=12, dropout=0.0)
    written = finetune(copy.deepcopy(base), problems, constant, schedule=_written_out(s.lr, 4, 12))
    assert scheduled == pytest.approx(written, abs=1e-6)
    plain = finetune(copy.deepcopy(base), problems, constant)
    assert max(abs(a - b) for a, b in zip(scheduled, plain, strict=True)) > 10 * TOLERANCE


def test_runs_in_lockstep_take_each_their_own_schedule(base_path, one_thread):
    """In lockstep, runs with different schedules (two lengths, so two cosines) and one at a constant rate each
    compute what `train.finetune` computes for them, within the lockstep tolerance, at dropout 0."""
    base, _ = checkpoint.load(base_path)
    jobs = [
        (PRESETS["two_digit_70"].mix.demonstrations(0), FinetuneSettings(steps=30, warmup=5, dropout=0.0, seed=0)),
        (PRESETS["three_digit_70"].mix.demonstrations(1), FinetuneSettings(steps=20, warmup=5, dropout=0.0, seed=1)),
        (PRESETS["mix_35_35"].mix.demonstrations(2), FinetuneSettings(steps=25, dropout=0.0, seed=2)),
    ]
    separate = [finetune(copy.deepcopy(base), problems, s) for problems, s in jobs]
    together = finetune_lockstep([copy.deepcopy(base) for _ in jobs], [p for p, _ in jobs], [s for _, s in jobs])
    for a, b, (_, s) in zip(separate, together, jobs, strict=True):
        assert len(a) == len(b) == s.steps
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < TOLERANCE


def test_the_store_finds_runs_made_before_the_schedule_at_a_constant_rate(tmp_path):
    """Filtering stored runs by `warmup=0` finds the runs stored without the field (they ran at a constant rate),
    and `warmup=400` only the scheduled one."""
    from breadth.core.storage.store import Store, StoredRun
    from breadth.core.world.episodes.scores import HeldOutScore
    from breadth.core.world.runs.records import RunMeta

    def stored(settings: FinetuneSettings) -> StoredRun:
        scores = {"add_2x2": HeldOutScore("add_2x2", 20, 30, {"no call": 10})}
        run = RunMeta("finetune", settings, "add_2x2=70", settings.seed, 30, scores, (1.0,), 1.0, 0.1)
        return StoredRun(run_key("add_2x2=70", settings, 30, "b"), run, "b", "test")

    with Store(tmp_path / "s.sqlite") as store:
        for s in (FinetuneSettings(seed=0), FinetuneSettings(seed=1, warmup=400)):
            store.add(stored(s))
        assert [r.run.seed for r in store.runs(warmup=0)] == [0]
        assert [r.run.settings.warmup for r in store.runs(warmup=400)] == [400]
