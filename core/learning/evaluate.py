"""Held-out evaluation of a model: greedy rollouts of each environment's held-out sums, scored per environment."""

from __future__ import annotations

from breadth.core.learning.model import GPT
from breadth.core.learning.policy import GreedyPolicy, greedy
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.registry import by_name
from breadth.core.world.episodes.rollout import complete
from breadth.core.world.episodes.scores import HELD_OUT, HeldOutScore
from breadth.core.world.episodes.scoring import Scored, play, tally
from breadth.core.world.text.vocab import BOS
from breadth.core.world.text.worksheets import worksheet_sums


def evaluate(
    model: GPT,
    seed: int,
    held_out: int | None = HELD_OUT,
    environments: list[str] | None = None,
) -> tuple[dict[str, HeldOutScore], list[Scored]]:
    """Per-environment held-out scores for `seed` on the test split (held_out None: all of it) and every episode;
    by default on every registered environment, or on `environments` (registered or generated ones, by name)."""
    names = list(REGISTERED) if environments is None else environments
    problems = [p for name in names for p in by_name(name).held_out(seed, held_out)]
    scored = play(greedy(model), problems, max_length=model.config.block_size)
    return tally(scored, names), scored


ENV_BATCH = 128  # episodes decoded together when scoring many environments
SPLITS = {"test": "held_out", "validation": "validation"}  # a split scored -> the environment's method that cuts it


def evaluate_environments(
    model: GPT, seed: int, held_out: int | None, names: list[str], batch: int = ENV_BATCH, split: str = "test"
) -> tuple[dict[str, HeldOutScore], list[Scored]]:
    """As `evaluate` on the environments `names`, decoded faster: sorted by prompt length and environment, the
    prompts of a batch fed in one step and finished rows dropped from it (`GreedyPolicy`'s feeds_many and
    drop_finished), in batches of `batch`.
    The episodes, verdicts and scores are exactly `evaluate`'s (tests/test_env_scores.py). `split`: `test` (every
    score breadth reports) or `validation` (what a recipe or a pool is chosen on: `held_out` of its sums)."""
    if split not in SPLITS:
        raise ValueError(f"a split is test or validation, not {str(split)[:20]!r}")
    problems = [p for name in names for p in getattr(by_name(name), SPLITS[split])(seed, held_out)]
    # alike prompts share their first step, and one environment's episodes tend to end alike
    by_length = sorted(range(len(problems)), key=lambda i: (len(problems[i].prompt), problems[i].environment))
    policy = lambda rows: GreedyPolicy(model, rows, drop_finished=True, feeds_many=True)  # noqa: E731
    played = play(policy, [problems[i] for i in by_length], batch=batch, max_length=model.config.block_size)
    scored: list[Scored] = [None] * len(problems)  # back in `evaluate`'s order: each environment's split in order
    for i, s in zip(by_length, played, strict=True):
        scored[i] = s
    return tally(scored, names), scored


def worksheet_accuracy(model: GPT) -> float:
    """Share of the 100 single-digit worksheet sums the model completes correctly, greedily."""
    sums = worksheet_sums()
    prompts = [f"{BOS}{a}+{b}=" for a, b in sums]  # all of one length
    answers = complete(GreedyPolicy(model, len(sums)), prompts, stop=BOS, max_new=3)  # two digits and a newline
    return sum(ans == str(a + b) for ans, (a, b) in zip(answers, sums, strict=True)) / len(sums)
