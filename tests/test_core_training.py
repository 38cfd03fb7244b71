"""Training: repeatable fine-tunes, a stop callback that stops, the base's worksheet skill, action-only loss tensors."""

from __future__ import annotations

import torch

from breadth.core.learning import checkpoint
from breadth.core.learning.evaluate import evaluate, worksheet_accuracy
from breadth.core.learning.train import StepStats, demonstration_tensors, finetune
from breadth.core.storage.presets import PRESETS
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.transcript import Role
from breadth.core.world.text.vocab import CHARS, PAD_ID

SETTINGS = FinetuneSettings(steps=30, batch_size=8, seed=0)


def _run(base_path, settings: FinetuneSettings = SETTINGS, on_step=None):
    """Fine-tune a fresh copy of the base on the 35 + 35 mix; return losses and held-out scores."""
    model, _ = checkpoint.load(base_path)
    losses = finetune(model, PRESETS["mix_35_35"].mix.demonstrations(settings.seed), settings, on_step)
    scores, scored = evaluate(model, settings.seed, held_out=10)
    return model, losses, {n: s.to_dict() for n, s in scores.items()}, scored


def test_same_seed_same_run(base_path, one_thread):
    """The same seed and settings give an identical loss curve and identical held-out scores twice in a row."""
    _, losses_a, scores_a, scored_a = _run(base_path)
    _, losses_b, scores_b, scored_b = _run(base_path)
    assert len(losses_a) == SETTINGS.steps
    assert losses_a == losses_b  # exact, not approximate
    assert scores_a == scores_b
    assert [s.episode.transcript for s in scored_a] == [s.episode.transcript for s in scored_b]
    assert losses_a[-1] < losses_a[0]  # it did learn something
    assert {n: s["total"] for n, s in scores_a.items()} == {name: 10 for name in REGISTERED}  # every environment


def test_another_seed_another_run(base_path, one_thread):
    """A different seed draws other batches, so the loss curve differs."""
    model, _ = checkpoint.load(base_path)
    losses_a = finetune(model, PRESETS["mix_35_35"].mix.demonstrations(0), FinetuneSettings(steps=3, seed=0))
    model, _ = checkpoint.load(base_path)
    losses_b = finetune(model, PRESETS["mix_35_35"].mix.demonstrations(0), FinetuneSettings(steps=3, seed=1))
    assert losses_a != losses_b


def test_on_step_false_stops_at_that_step(base_path, one_thread):
    """A callback returning False stops fine-tuning right after that step; it heard every step up to it."""
    heard: list[StepStats] = []

    def stop_at_four(stats: StepStats) -> bool:
        heard.append(stats)
        return stats.step < 4

    model, _ = checkpoint.load(base_path)
    losses = finetune(model, PRESETS["mix_35_35"].mix.demonstrations(0), FinetuneSettings(steps=50), stop_at_four)
    assert len(losses) == 4
    assert [s.step for s in heard] == [1, 2, 3, 4]
    assert all(s.steps == 50 for s in heard)
    assert [s.loss for s in heard] == losses
    assert not model.training  # left ready for evaluation


def test_on_step_returning_none_does_not_stop(base_path, one_thread):
    """Only an explicit False stops: a callback returning None lets every step run."""
    model, _ = checkpoint.load(base_path)
    losses = finetune(model, PRESETS["mix_35_35"].mix.demonstrations(0), FinetuneSettings(steps=3), lambda s: None)
    assert len(losses) == 3


def test_base_solves_every_worksheet_sum(base_model):
    """The shipped base completes all 100 single-digit worksheet sums correctly."""
    assert worksheet_accuracy(base_model) == 1.0


def test_worksheet_accuracy_can_fail(one_thread):
    """An untrained model does not pass the worksheet check (the check is not vacuous)."""
    from breadth.core.learning.model import GPT, GPTConfig
    from breadth.core.world.text.vocab import VOCAB_SIZE

    torch.manual_seed(0)
    assert worksheet_accuracy(GPT(GPTConfig(vocab_size=VOCAB_SIZE))) < 0.2


def test_demonstration_tensors_mask_prompt_environment_and_padding():
    """Demonstration targets are -1 on prompt, environment and padding, and the model's next character elsewhere."""
    problems = [Problem((23, 45), "two_digit"), Problem((3, 4, 5), "three_digit"), Problem((99, 99), "two_digit")]
    inputs, targets = demonstration_tensors(problems)
    assert inputs.shape == targets.shape == (3, max(len(p.demonstration().text) for p in problems))
    for row, p in enumerate(problems):
        t = p.demonstration()
        n = len(t.text)  # inputs: start token + text[:-1]; targets: text
        roles = t.roles()
        for j in range(inputs.shape[1]):
            if j >= n:
                assert inputs[row, j] == PAD_ID and targets[row, j] == -1  # padding
            elif roles[j] is Role.ACTION:
                assert CHARS[int(targets[row, j])] == t.text[j]
            else:
                assert targets[row, j] == -1  # prompt or environment
    counted = "".join(CHARS[int(x)] for x in targets[0] if x != -1)
    assert counted == "B23+45|68|"


def test_dropout_runs_repeat_too(base_path, one_thread):
    """With dropout on, the same seed still repeats the loss curve exactly, and it differs from no dropout."""
    demos = PRESETS["mix_35_35"].mix.demonstrations(0)
    curves = []
    for dropout in (0.1, 0.1, 0.0):
        model, _ = checkpoint.load(base_path)
        curves.append(finetune(model, demos, FinetuneSettings(steps=5, dropout=dropout)))
    assert curves[0] == curves[1]
    assert curves[0] != curves[2]


def test_the_loop_minimises_the_loss_it_is_given(base_path, one_thread):
    """`run` takes its loss as a parameter: a loss that rewards writing `7` after a prompt teaches exactly that,
    through the same loop, optimiser step and stop callback that fine-tuning uses."""
    from breadth.core.learning.policy import GreedyPolicy
    from breadth.core.learning.train import run
    from breadth.core.world.text.vocab import BOS, encode

    model, _ = checkpoint.load(base_path)
    prompt = torch.tensor([encode(BOS + "1+1=")])  # (1, T)
    seven = CHARS.index("7")

    def write_seven(m, batch):
        logits, _ = m(batch)  # (1, T, vocab)
        return -torch.log_softmax(logits[0, -1], -1)[seven]

    def next_after(text: str) -> str:
        policy = GreedyPolicy(model, 1)
        return [policy.step([c]) for c in text][-1][0]

    assert next_after(BOS + "1+1=") == "2"  # the base's worksheet answer
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = run(model, lambda step: prompt, 20, opt, loss=write_seven)
    assert len(losses) == 20 and losses[-1] < losses[0]
    assert next_after(BOS + "1+1=") == "7"
