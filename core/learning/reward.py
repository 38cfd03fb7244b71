"""Learning from reward: nanochat's RL recipe with the calculator in the loop, as a trainer on `train.run`.

Each step draws `prompts` training sums of the mix and samples a group of `group` episodes for each
(temperature, a seeded generator), every episode of the step advancing together with the KV cache and
the calculator appending its results as forced characters. An episode earns 1 for a correct answer
(`core.world.episodes.rewards`); its advantage is its reward minus its group's mean (no division by the spread,
no KL term, no ratio clipping: the samples are on-policy). One teacher-forced pass gives the
log-probability of every character, and the loss is minus the sum of log-probability x advantage over
the model's own characters only (the prompt's and the calculator's characters carry none, read from the
transcript's typed segments as for demonstrations), divided by the number of those characters. One
AdamW step per batch of groups, the learning rate falling linearly to 0 over the run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch.nn import functional as F

from breadth.core.learning.model import GPT
from breadth.core.learning.policy import SamplingPolicy
from breadth.core.learning.train import adamw, run
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.rewards import Group, advantages, judged, metrics, sampled
from breadth.core.world.episodes.rollout import rollout
from breadth.core.world.runs.records import Diverged, OnStep, StepStats
from breadth.core.world.runs.settings import RewardSettings
from breadth.core.world.text.vocab import PAD_ID

EPISODES_AT_ONCE = 1024  # episodes sampled together when measuring pass@G on every training prompt


@dataclass
class Groups:
    """One step's sampled groups, judged, and what the teacher-forced pass needs."""

    groups: list[Group]
    inputs: torch.Tensor  # (N, T) every episode's characters, start token first, padded with 0
    targets: torch.Tensor  # (N, T) the next character where the model wrote it, -1 elsewhere
    advantages: torch.Tensor  # (N,) reward minus the group's mean

    @property
    def metrics(self) -> dict[str, float]:
        """The step's metrics (`core.world.episodes.rewards.metrics`)."""
        return metrics(self.groups)


def sample(model: GPT, problems: list[Problem], group: int, temperature: float, generator: torch.Generator):
    """A group of `group` episodes per problem, sampled together (one batch, the KV cache), each judged."""
    policy = SamplingPolicy(model, len(problems) * group, temperature, generator, drop_finished=True, feeds_many=True)
    episodes = rollout(policy, [p.prompt for p in problems for _ in range(group)], model.config.block_size)
    return [
        [judged(p, ep) for ep in episodes[i * group : (i + 1) * group]] for i, p in enumerate(problems)
    ]  # episodes are in prompt order, `group` each


def batch_of(groups: list[Group]) -> Groups:
    """The tensors of a step's groups: inputs, targets masked to the model's own characters, advantages."""
    episodes = [j for g in groups for j in g]
    pairs = [j.episode.transcript.training_pair() for j in episodes]  # targets already -1 off the model's actions
    T = max(len(x) for x, _ in pairs)
    inputs = torch.zeros(len(pairs), T, dtype=torch.long)  # (N, T) padding id 0
    targets = torch.full((len(pairs), T), -1, dtype=torch.long)  # (N, T) -1: no loss on padding
    for i, (x, y) in enumerate(pairs):
        inputs[i, : len(x)] = torch.tensor(x)
        targets[i, : len(y)] = torch.tensor(y)
    adv = torch.tensor([a for g in groups for a in advantages(g)])  # (N,)
    return Groups(groups, inputs, targets, adv)


def policy_loss(model: GPT, batch: Groups) -> tuple[torch.Tensor, dict[str, float]]:
    """Minus the advantage-weighted log-probability of the model's own characters, per such character; and
    the step's metrics. Positions with target -1 (prompt, calculator, padding) contribute exactly 0.

    An episode whose advantage is 0 (its group all right or all wrong) adds exactly 0 to the loss and its
    gradient, so only episodes with an advantage go through the teacher-forced pass (at least one, so that a
    step without any still gives AdamW the zero gradient a full batch would); the division is by the model's
    characters of every episode, as for the full batch.
    """
    valid = (batch.targets != -1).sum().clamp(min=1)
    carries = batch.advantages != 0
    rows = carries.nonzero()[:, 0] if bool(carries.any()) else torch.tensor([0])
    inputs, targets, adv = batch.inputs[rows], batch.targets[rows], batch.advantages[rows]
    logits, _ = model(inputs)  # (n, T, vocab)
    logits = logits.index_fill(-1, torch.tensor([PAD_ID]), float("-inf"))  # as sampled: padding is never chosen
    nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1, reduction="none")
    logp = -nll.view_as(targets)  # (n, T), 0 where the target is -1
    objective = (logp * adv[:, None]).sum() / valid
    return -objective + 0.0, batch.metrics  # + 0.0: a step with every advantage 0 logs 0, not -0


class PromptOrder:
    """The training prompts in seeded passes: each pass a new permutation, a step takes the next few."""

    def __init__(self, count: int, generator: torch.Generator):
        self.count, self.generator, self.queue = count, generator, []

    def take(self, n: int) -> list[int]:
        """The next `n` prompt indices (a prompt repeats within a step only when there are fewer than `n`)."""
        while len(self.queue) < n:
            self.queue += torch.randperm(self.count, generator=self.generator).tolist()
        taken, self.queue = self.queue[:n], self.queue[n:]
        return taken


def check_finite(model: GPT, step: int) -> None:
    """Diverged (one line) if any weight is no longer a finite number: sampling from it would fail."""
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise Diverged(f"the weights stopped being finite numbers before step {step}; try a lower learning rate")


def from_reward(model: GPT, mix: Mix, settings: RewardSettings, on_step: OnStep | None) -> list[float]:
    """Train `model` in place by reward on the mix's training sums (its demonstration problems, not their
    demonstrations); the loss of every step taken."""
    torch.manual_seed(settings.seed)
    model.set_dropout(0.0)  # on-policy: the training pass scores what sampling chose, with the same weights
    problems = mix.demonstrations(settings.seed)
    order = PromptOrder(len(problems), torch.Generator().manual_seed(settings.seed))
    sampler = torch.Generator().manual_seed(settings.seed + 1)  # its own stream: prompts never shift the samples

    latest: list[Group] = []  # the step's first group, shown to the step's report

    def groups(step: int) -> Groups:
        check_finite(model, step)
        chosen = [problems[i] for i in order.take(settings.prompts)]
        batch = batch_of(sample(model, chosen, settings.group, settings.temperature, sampler))
        latest[:] = batch.groups[:1]
        return batch

    def schedule(step: int) -> float:
        return settings.lr * (1 - (step - 1) / settings.steps)  # the first step at lr, the last at lr / steps

    def report(stats: StepStats) -> bool:
        """The step's report with one of its groups, as plain segments, for a front end's rollouts view."""
        return on_step(replace(stats, group=sampled(latest[0]) if latest else None))

    opt = adamw(model, settings.lr, 0.0)
    return run(model, groups, settings.steps, opt, schedule, on_step and report, policy_loss)


def before_training(model: GPT, mix: Mix, settings: RewardSettings) -> dict[str, float]:
    """The metrics of a group per training prompt, sampled as training would before any step: pass@G near 0
    means no group carries a gradient, so reward has nothing to reinforce."""
    problems = mix.demonstrations(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed + 2)
    per_batch = max(1, EPISODES_AT_ONCE // settings.group)
    found: list[Group] = []
    for start in range(0, len(problems), per_batch):
        found += sample(model, problems[start : start + per_batch], settings.group, settings.temperature, generator)
    return metrics(found)
