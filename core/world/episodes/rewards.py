"""What learning from reward measures, without torch: each episode's reward and a step's metrics over its groups.

An episode earns reward 1 when its answer is correct (`verdict.judge`, the held-out score's rule) and 0
otherwise. A step samples a group of episodes per prompt; beside the mean reward, a person needs to see
whether reward is being earned the intended way: pass@G (a group with any correct episode, the only kind
that carries a gradient), correct with the expected calls (so a right answer reached the wrong way, such
as a sum whose leading zero lets a two-digit call add up, is visible), answers without any call, calls
made and the model's own characters per episode (collapse shrinks it, run-ons grow it).
"""

from __future__ import annotations

from dataclasses import dataclass

from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.episode import End, Episode
from breadth.core.world.episodes.scores import MAX_SAMPLES, SampledEpisode, SampledGroup
from breadth.core.world.episodes.verdict import Verdict, judge
from breadth.core.world.text.transcript import Role


@dataclass(frozen=True)
class Metric:
    """One number a reward run reports per step: its key in records, its label for people, what it counts."""

    key: str  # stored in a run's record: `reward`
    label: str  # in tables and lines: `reward`
    help: str  # what it counts, for --help and the app


METRICS: tuple[Metric, ...] = (
    Metric("reward", "reward", "mean reward: share of the step's episodes answered correctly"),
    Metric("pass", "pass@G", "share of the step's groups (prompts) with at least one correct episode"),
    Metric("expected", "expected", "share of episodes correct with exactly the expected calls"),
    Metric("no_call", "no call", "share of episodes that answered without calling the calculator"),
    Metric("calls", "calls", "calls made per episode, on average"),
    Metric("chars", "chars", "the model's own characters per episode, on average"),
)
NEAR_ZERO = 0.05  # pass@G below this: so few groups carry a gradient that reward has next to nothing to reinforce
ENVIRONMENT_REWARD = "reward:"  # `reward:add_3x1`: the mean reward of one environment's episodes, in a mix of several


@dataclass(frozen=True)
class Judged:
    """One sampled episode of a group, judged: its problem, the episode, the verdict and its reward."""

    problem: Problem
    episode: Episode
    verdict: Verdict

    @property
    def reward(self) -> float:
        """1 for a correct answer, 0 otherwise."""
        return 1.0 if self.verdict.solved else 0.0

    @property
    def expected_calls(self) -> bool:
        """Correct, and by exactly the calls the procedure makes (the calculator's, not a coincidence's)."""
        return self.verdict.solved and [c.body for c in self.episode.calls] == self.problem.expected_calls(
            self.episode.syntax
        )

    @property
    def no_call(self) -> bool:
        """Answered without any call."""
        return self.episode.end is End.ANSWERED and not self.episode.calls

    @property
    def model_chars(self) -> int:
        """Characters the model wrote itself (the ones that carry the loss)."""
        return sum(len(s.text) for s in self.episode.transcript.segments if s.role is Role.ACTION)


Group = list[Judged]  # the episodes sampled for one prompt


def judged(problem: Problem, episode: Episode) -> Judged:
    """An episode judged against its problem."""
    return Judged(problem, episode, judge(episode, problem))


def advantages(group: Group) -> list[float]:
    """Each episode's reward minus its group's mean reward (all 0 when the group's rewards are equal)."""
    mean = sum(j.reward for j in group) / len(group)
    return [j.reward - mean for j in group]


def metrics(groups: list[Group]) -> dict[str, float]:
    """The step's metrics (`METRICS`, keyed as there) over its groups, and each environment's mean reward when the
    groups hold several environments (`reward:<environment>`)."""
    episodes = [j for g in groups for j in g]
    n = len(episodes)
    out = {
        "reward": sum(j.reward for j in episodes) / n,
        "pass": sum(any(j.verdict.solved for j in g) for g in groups) / len(groups),
        "expected": sum(j.expected_calls for j in episodes) / n,
        "no_call": sum(j.no_call for j in episodes) / n,
        "calls": sum(len(j.episode.calls) for j in episodes) / n,
        "chars": sum(j.model_chars for j in episodes) / n,
    }
    envs = list(dict.fromkeys(j.problem.environment for j in episodes))
    if len(envs) > 1:
        for name in envs:
            mine = [j.reward for j in episodes if j.problem.environment == name]
            out[ENVIRONMENT_REWARD + name] = sum(mine) / len(mine)
    return out


def metric_label(key: str, group: int | None = None) -> str:
    """A metric's label for people: `pass@8` with the group size, `reward add_3x1` for an environment's reward."""
    if key.startswith(ENVIRONMENT_REWARD):
        return f"reward {key.removeprefix(ENVIRONMENT_REWARD)}"
    label = next((m.label for m in METRICS if m.key == key), key)
    return label.replace("@G", f"@{group}") if group is not None else label


def sampled(group: Group) -> SampledGroup:
    """A group as a front end shows it (its first MAX_SAMPLES episodes): each one's segments, reward and verdict."""
    first = group[0].problem
    episodes = tuple(
        SampledEpisode(
            tuple(j.episode.transcript.segments),
            j.reward,
            j.verdict.failure.value if j.verdict.failure else None,
            j.expected_calls,
        )
        for j in group[:MAX_SAMPLES]
    )
    return SampledGroup(first.prompt, first.environment, episodes, len(group))
