"""Held-out evaluation: greedy rollouts of each family's held-out sums, scored per family."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .episode import Episode
from .families import FAMILIES, Problem
from .rollout import GreedyPolicy, rollout
from .verdict import Failure, Verdict, judge
from .vocab import BOS
from .worksheets import worksheet_sums

HELD_OUT = 30  # held-out sums per family, as on the plate


@dataclass
class Scored:
    """One evaluated episode: the problem, what happened, and the verdict."""

    problem: Problem
    episode: Episode
    verdict: Verdict


@dataclass
class HeldOutScore:
    """A family's held-out result."""

    family: str
    solved: int
    total: int
    failures: Counter = field(default_factory=Counter)  # Failure -> count among unsolved episodes

    @property
    def rate(self) -> float:
        """Share solved, 0..1."""
        return self.solved / self.total if self.total else 0.0

    def to_dict(self) -> dict:
        return {"solved": self.solved, "total": self.total,
                "failures": {f.value: n for f, n in sorted(self.failures.items(), key=lambda kv: -kv[1])}}


def play(model, problems: list[Problem], batch: int = 256, on_char=None, policy=GreedyPolicy) -> list[Scored]:
    """Roll out every problem greedily with the calculator in the loop and judge each episode.

    `policy(model, batch)` makes the decoder; tests pass a scripted one that needs no weights.
    """
    out: list[Scored] = []
    for start in range(0, len(problems), batch):
        chunk = problems[start: start + batch]
        hook = None if on_char is None else (lambda i, role, c, s=start: on_char(s + i, role, c))
        episodes = rollout(policy(model, len(chunk)), [p.prompt for p in chunk], on_char=hook)
        out += [Scored(p, ep, judge(ep, p)) for p, ep in zip(chunk, episodes)]
    return out


def evaluate(model, seed: int, held_out: int | None = HELD_OUT, families: list[str] | None = None,
             ) -> tuple[dict[str, HeldOutScore], list[Scored]]:
    """Per-family held-out scores for `seed` (held_out None: every held-out sum) and every episode."""
    names = list(FAMILIES) if families is None else families
    problems = [p for name in names for p in FAMILIES[name].held_out(seed, held_out)]
    scored = play(model, problems)
    scores = {name: HeldOutScore(name, 0, 0) for name in names}
    for s in scored:
        score = scores[s.problem.family]
        score.total += 1
        if s.verdict.solved:
            score.solved += 1
        else:
            score.failures[s.verdict.failure] += 1
    return scores, scored


def worksheet_accuracy(model) -> float:
    """Share of the 100 single-digit worksheet sums the model completes correctly, greedily."""
    import torch

    from .model import KVCache
    from .vocab import CHARS, encode

    sums = worksheet_sums()
    prompts = [encode(f"{BOS}{a}+{b}=") for a, b in sums]
    x = torch.tensor(prompts)  # (100, 5): every prompt has the same length
    cache = KVCache(model.config, len(sums))
    model.eval()
    outs: list[list[str]] = [[] for _ in sums]
    with torch.no_grad():
        logits, _ = model(x, cache=cache)
        for _ in range(3):  # at most two digits and a newline
            nxt = logits[:, -1].argmax(-1)  # (100,)
            for i, t in enumerate(nxt.tolist()):
                outs[i].append(CHARS[t])
            logits, _ = model(nxt[:, None], cache=cache)
    right = sum("".join(o).split(BOS)[0] == str(a + b) and BOS in "".join(o) for o, (a, b) in zip(outs, sums))
    return right / len(sums)


__all__ = ["HELD_OUT", "Failure", "HeldOutScore", "Scored", "evaluate", "play", "worksheet_accuracy"]
