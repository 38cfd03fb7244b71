"""Playing problems with any policy and scoring them per environment: the evaluation, without torch.

`play` rolls problems out in batches with the calculator in the loop and judges each episode;
`tally` turns the verdicts into one HeldOutScore per environment, keeping its first few failed transcripts.
The greedy model policy plugs in
from `core.learning`; scripted policies plug in the same way in tests and in the app's test engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from breadth.core.world.arithmetic.problem import Problem, canonical
from breadth.core.world.episodes.episode import MAX_LENGTH, Episode
from breadth.core.world.episodes.rollout import Policy, run_episodes
from breadth.core.world.episodes.scores import EXAMPLES_KEPT, FailedEpisode, HeldOutScore
from breadth.core.world.episodes.verdict import Verdict, judge
from breadth.core.world.text.transcript import Role

MakePolicy = Callable[[int], Policy]  # batch size -> a fresh policy for that many rows
OnChar = Callable[[int, Role, str], None]  # (problem index, who wrote it, character)


@dataclass
class Scored:
    """One evaluated episode: the problem, what happened, and the verdict."""

    problem: Problem
    episode: Episode
    verdict: Verdict


def play(
    make_policy: MakePolicy,
    problems: list[Problem],
    batch: int = 256,
    on_char: OnChar | None = None,
    max_length: int = MAX_LENGTH,
) -> list[Scored]:
    """Roll out every problem with the calculator in the loop, `batch` at a time, and judge each episode."""
    out: list[Scored] = []
    for start in range(0, len(problems), batch):
        chunk = problems[start : start + batch]
        hook = None if on_char is None else (lambda i, role, c, s=start: on_char(s + i, role, c))
        episodes = [Episode(p.prompt, max_length=max_length, syntax=p.syntax) for p in chunk]  # each in its form
        episodes = run_episodes(make_policy(len(chunk)), episodes, on_char=hook)
        out += [Scored(p, ep, judge(ep, p)) for p, ep in zip(chunk, episodes, strict=True)]
    return out


def tally(scored: list[Scored], envs: list[str]) -> dict[str, HeldOutScore]:
    """Per environment: how many episodes were solved, of how many, and the failure kinds of the rest; keyed by the
    names asked (an environment asked by its old name, `two_digit`, is tallied under it)."""
    solved: Counter = Counter()
    total: Counter = Counter()
    failures: dict[str, Counter] = {name: Counter() for name in envs}
    examples: dict[str, list[FailedEpisode]] = {name: [] for name in envs}
    asked = {canonical(name): name for name in envs}
    for s in scored:
        name = asked.get(s.problem.environment, s.problem.environment)
        total[name] += 1
        if s.verdict.solved:
            solved[name] += 1
        else:
            failures.setdefault(name, Counter())[s.verdict.failure.value] += 1
            kept = examples.setdefault(name, [])
            if len(kept) < EXAMPLES_KEPT:
                kept.append(FailedEpisode(s.verdict.failure.value, tuple(s.episode.transcript.segments)))
    return {
        name: HeldOutScore(name, solved[name], total[name], dict(failures[name].most_common()), tuple(examples[name]))
        for name in envs
    }
