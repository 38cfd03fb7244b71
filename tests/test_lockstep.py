"""Fine-tunes in lockstep: they compute what separate runs compute, repeat when seeded, stop one by one, and unstack
into ordinary checkpoints."""

from __future__ import annotations

import copy
from dataclasses import fields
from pathlib import Path

import pytest
import torch

from breadth.core.learning import checkpoint, lockstep, stacked
from breadth.core.learning.evaluate import evaluate
from breadth.core.learning.lockstep import (
    LockstepJob,
    evaluate_lockstep,
    finetune_cheap,
    finetune_lockstep,
    train_lockstep,
)
from breadth.core.learning.model import GPT, GPTConfig
from breadth.core.learning.train import demonstration_tensors, finetune
from breadth.core.results.groups import TRAINS_WITH
from breadth.core.storage.presets import PRESETS
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.records import Diverged
from breadth.core.world.runs.settings import FinetuneSettings

# Largest difference between a lockstep run's loss and the same run's by `train.finetune` at dropout 0. Measured:
# 5.4e-5 over 40 steps for these three jobs (two learning rates), 9.5e-7 for the cheaper single run over 30; six
# runs of the plate's mixes stay within 6.0e-6 for 40 steps and 7.6e-5 for 60, then drift apart (0.26 by step
# 400), as today's loop drifts from itself with a fused AdamW (0.32): rounding grows chaotically at this learning
# rate. A wrong learning rate (1e-3 for 1.5e-3) differs by 0.026 to 0.56 at each of steps 2-5 (measured). On an AMD
# EPYC the lr-1e-3 job reaches 2.9e-4 at step 8 (the others stay under 5e-6): the bound sits 7x over that and 13x
# under the smallest difference a wrong learning rate makes.
TOLERANCE = 2e-3


def _jobs(steps: int, dropout: float) -> list[tuple[list, FinetuneSettings]]:
    """The plate's three mixes on seeds 0, 1, 2, one at another learning rate (a second stack group)."""
    out = []
    for seed, preset in enumerate(PRESETS.values()):
        lr = 1e-3 if seed == 1 else 1.5e-3
        settings = FinetuneSettings(steps=steps, dropout=dropout, seed=seed, lr=lr)
        out.append((preset.mix.demonstrations(seed), settings))
    return out


@pytest.mark.parametrize("position", ["learned", "rope"])
def test_stacked_forward_is_each_gpt_forward(position, one_thread):
    """The batched forward of K stacked models gives each model's own logits (both position schemes)."""
    torch.manual_seed(0)
    config = GPTConfig(n_layer=2, n_head=2, n_embd=16, block_size=12, position=position)
    models = [GPT(config) for _ in range(3)]
    idx = torch.randint(0, config.vocab_size, (3, 2, 10))  # (K, B, T)
    weights = {n: torch.cat([stacked.stack(m, 1)[n] for m in models]) for n in stacked.stack(models[0], 1)}
    got = stacked.forward(weights, config, idx, rope=stacked.rope_tables(models[0], 10))
    for k, m in enumerate(models):
        want, _ = m(idx[k])
        assert torch.allclose(got[k], want, atol=1e-5)


def test_dropout_zero_matches_separate_runs(base_path, one_thread):
    """At dropout 0, each lockstep run's losses are today's loop's for the same job, within TOLERANCE."""
    base, _ = checkpoint.load(base_path)
    jobs = _jobs(40, 0.0)
    separate = [finetune(copy.deepcopy(base), problems, s) for problems, s in jobs]
    together = finetune_lockstep([copy.deepcopy(base) for _ in jobs], [p for p, _ in jobs], [s for _, s in jobs])
    for a, b in zip(separate, together, strict=True):
        assert len(a) == len(b) == 40
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < TOLERANCE


def test_cheap_single_run_matches_todays_at_dropout_zero(base_path, one_thread):
    """The cheaper single run draws today's batches: at dropout 0 its losses are today's within TOLERANCE."""
    base, _ = checkpoint.load(base_path)
    problems, settings = _jobs(30, 0.0)[2]
    today = finetune(copy.deepcopy(base), problems, settings)
    cheap = finetune_cheap(copy.deepcopy(base), problems, settings)
    assert max(abs(x - y) for x, y in zip(today, cheap, strict=True)) < TOLERANCE


def test_seeded_lockstep_repeats_exactly_with_dropout(base_path, one_thread):
    """With dropout 0.2 the same jobs give the same losses to the bit; dropout is really on (they differ at 0)."""
    base, _ = checkpoint.load(base_path)

    def losses(dropout: float) -> list[list[float]]:
        jobs = _jobs(8, dropout)
        return finetune_lockstep([copy.deepcopy(base) for _ in jobs], [p for p, _ in jobs], [s for _, s in jobs])

    first, second, without = losses(0.2), losses(0.2), losses(0.0)
    assert first == second  # exact
    assert all(a[1:] != b[1:] for a, b in zip(first, without, strict=True))


def test_dropout_masks_drop_at_the_rate_and_scale():
    """Each run's mask zeroes about p of its elements and scales the rest by 1/(1-p); p = 0 keeps everything."""
    gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    drop = stacked.Dropout([0.2, 0.0], gens, 200_000)
    dropped = (drop.masks[0] == 0).float().mean().item()
    assert abs(dropped - 0.2) < 0.005
    assert set(drop.masks[0].unique().tolist()) == {0.0, 1.25}
    assert bool((drop.masks[1] == 1.0).all())


def test_dropout_masks_are_exactly_a_comparison_of_each_runs_draws_in_any_space():
    """The float arithmetic gives exactly (16-bit draw >= threshold) / (1 - p) from each run's own stream (so lockstep
    runs keep the masks, and numbers, they had with a comparison), at rates whose thresholds sit anywhere; masks
    drawn into reused memory holding old values are the same."""
    ps, n = [0.2, 0.5, 0.013, 0.9], 40_000
    drop = stacked.Dropout(ps, [torch.Generator().manual_seed(s) for s in range(4)], n)
    again = stacked.Dropout(ps, [torch.Generator().manual_seed(s) for s in range(4)], n, torch.full((5 * n,), 7.0))
    for k, p in enumerate(ps):
        stream = torch.Generator().manual_seed(k)
        bits = torch.randint(-(2**31), 2**31, (n // 2,), dtype=torch.int32, generator=stream)
        kept = bits.view(torch.int16) >= -32768 + round(p * 65536)
        assert torch.equal(drop.masks[k], kept.float() * (1.0 / (1.0 - p)))
        assert torch.equal(again.masks[k], drop.masks[k])


def test_stopping_one_run_leaves_the_others_going(base_path, one_thread):
    """A run whose on_step says False ends there with the weights of that step; the others run to their end."""
    base, _ = checkpoint.load(base_path)
    jobs = _jobs(12, 0.0)
    heard: list[tuple[int, int]] = []

    def stop_second_at_five(k: int, stats) -> bool:
        heard.append((k, stats.step))
        return not (k == 1 and stats.step == 5)

    models = [copy.deepcopy(base) for _ in jobs]
    losses = finetune_lockstep(models, [p for p, _ in jobs], [s for _, s in jobs], stop_second_at_five)
    assert [len(x) for x in losses] == [12, 5, 12]
    assert [s for k, s in heard if k == 1] == [1, 2, 3, 4, 5]
    assert [s for k, s in heard if k == 0] == list(range(1, 13))
    problems, settings = jobs[0]  # the others kept their AdamW state when the stacks were rebuilt without run 1
    today = finetune(copy.deepcopy(base), problems, settings)
    assert max(abs(x - y) for x, y in zip(today, losses[0], strict=True)) < TOLERANCE
    alone = copy.deepcopy(base)  # the stopped run, trained alone for exactly five steps
    problems, settings = jobs[1]
    finetune(alone, problems, FinetuneSettings(**{**settings.to_dict(), "steps": 5}))
    # compared by what they compute: the keys' bias gets only rounding noise for a gradient (softmax ignores it),
    # which AdamW turns into steps of full size, so those weights differ while the functions agree: logits within
    # 5.5e-4 measured, where five steps move them by 13 and seven more steps by 10
    inputs, _ = demonstration_tensors(problems)
    with torch.no_grad():
        assert torch.allclose(models[1](inputs)[0], alone(inputs)[0], atol=5e-3)
        assert not torch.allclose(models[0](inputs)[0], alone(inputs)[0], atol=1e-2)  # the others trained on


def test_unstacked_run_saves_and_plays_identically(base_path, one_thread, tmp_path):
    """A lockstep run's model is an ordinary GPT: checkpoint.save writes it, and the file plays the same episodes."""
    jobs = [LockstepJob(PRESETS["two_digit_70"].mix, FinetuneSettings(steps=6, seed=s)) for s in (0, 1)]
    results = train_lockstep(jobs, held_out=5, base=base_path)
    for (model, record), job in zip(results, jobs, strict=True):
        assert record.completed and len(record.losses) == 6 and record.seed == job.settings.seed
        assert model.config.dropout == job.settings.dropout
        path = checkpoint.save(model, record, tmp_path / f"run{job.settings.seed}.safetensors")
        loaded, header = checkpoint.load(path)
        assert header.meta["losses"] == record.to_dict()["losses"]  # its record travels with it
        _, before = evaluate(model, job.settings.seed, held_out=5)
        _, after = evaluate(loaded, job.settings.seed, held_out=5)
        assert [s.episode.transcript for s in before] == [s.episode.transcript for s in after]
        for a, b in zip(model.state_dict().values(), loaded.state_dict().values(), strict=True):
            assert torch.equal(a, b)
    assert not torch.equal(results[0][0].wte.weight, results[1][0].wte.weight)  # two runs, two models


@pytest.mark.parametrize("rows", [lockstep.EVAL_ROWS, 39])  # every episode at once, or five chunks of 12 a run
def test_models_scored_together_score_as_each_alone(rows, base_model, one_thread, monkeypatch):
    """`evaluate_lockstep` plays K models at once and gives each exactly the scores `evaluate` gives it alone."""
    monkeypatch.setattr(lockstep, "EVAL_ROWS", rows)
    models = [copy.deepcopy(base_model) for _ in range(3)]
    torch.manual_seed(0)
    with torch.no_grad():  # three different models, so that a row played by the wrong model shows
        for m in models[1:]:
            for p in m.blocks[2].parameters():
                p.add_(torch.randn_like(p) * 0.05)
    seeds, names = [0, 1, 2], list(REGISTERED)
    families = [None, names[:1], names[1:3]]  # each model scored on its own environments
    together = evaluate_lockstep(models, seeds, held_out=6, environments=families)
    alone = [evaluate(m, seed, 6, f)[0] for m, seed, f in zip(models, seeds, families, strict=True)]
    for a, b in zip(alone, together, strict=True):
        assert {f: s.to_dict() for f, s in a.items()} == {f: s.to_dict() for f, s in b.items()}
    assert [len(t) for t in together] == [len(names), 1, 2]
    same_sums = [str({f: x.to_dict() for f, x in evaluate(m, 0, 6)[0].items()}) for m in models]
    assert len(set(same_sums)) == 3  # the models play differently: a row given to the wrong model would show


def test_models_scored_together_play_each_environment_in_its_call_form(base_model, one_thread):
    """A model that has begun to write postfix calls is scored together exactly as alone on a postfix environment
    (its calls parsed as postfix): scored together, every call was read as infix and failed as malformed."""
    model = copy.deepcopy(base_model)
    problems = Mix.of(**{"2s2_postfix": 30}).demonstrations(0)
    finetune_cheap(model, problems, FinetuneSettings(steps=40, lr=3e-3, dropout=0.0))
    names = ["2s2_postfix", "two_digit"]
    alone = evaluate(model, 0, 6, names)[0]
    (together,) = evaluate_lockstep([model], [0], 6, [names])
    assert {f: s.to_dict() for f, s in together.items()} == {f: s.to_dict() for f, s in alone.items()}
    assert set(alone["2s2_postfix"].failures) != {"malformed call"}  # the model's calls parse in their form


def test_cheap_single_run_repeats_exactly_with_dropout(base_path, one_thread):
    """The cheaper single run at dropout 0.2 repeats its losses to the bit for its seed, and another seed differs."""
    base, _ = checkpoint.load(base_path)
    problems = PRESETS["mix_35_35"].mix.demonstrations(0)

    def losses(seed: int) -> list[float]:
        return finetune_cheap(copy.deepcopy(base), problems, FinetuneSettings(steps=6, seed=seed))

    assert losses(0) == losses(0)
    assert losses(0) != losses(1)


def test_a_diverged_run_ends_alone(base_path, one_thread, monkeypatch):
    """A run whose loss stops being finite ends with Diverged (one line); the others train to their last step."""
    real, calls = stacked.losses, []

    def second_run_blows_up_at_step_three(logits, targets):
        out = real(logits, targets)
        calls.append(len(out))
        return torch.cat([out[:1], out[1:2] * float("nan"), out[2:]]) if len(calls) == 3 else out

    monkeypatch.setattr(stacked, "losses", second_run_blows_up_at_step_three)
    base, _ = checkpoint.load(base_path)
    jobs = _jobs(5, 0.0)
    out = finetune_lockstep([copy.deepcopy(base) for _ in jobs], [p for p, _ in jobs], [s for _, s in jobs])
    diverged = [x for x in out if isinstance(x, Diverged)]  # the stacks' second row: which run is the stacks' say
    assert len(diverged) == 1 and str(diverged[0]).startswith("the loss became nan at step 3")
    assert [len(x) for x in out if not isinstance(x, Diverged)] == [5, 5]  # two learning-rate groups: no leak
    assert calls == [3, 3, 3, 2, 2]  # it left the stacks after step 3


def test_lockstep_trains_with_every_setting_it_names():
    """Each fine-tuning setting `groups.TRAINS_WITH` lets into a lockstep group is read by the lockstep trainer, and
    together they are every setting the recipe has today: a setting added to one and not the other is caught."""
    source = Path(lockstep.__file__).read_text()
    assert all(f"settings.{name}" in source for name in TRAINS_WITH)
    assert set(TRAINS_WITH) == {f.name for f in fields(FinetuneSettings)}
