"""Batched greedy rollouts with the calculator in the loop, one position per step for every episode.

All episodes of a batch advance in lockstep. At each position an episode either takes a forced
character (its prompt, or a tool result the environment queued) or the model's greedy choice from
the previous position. A policy only has to map the characters just fed to the next choices, so a
scripted fake can stand in for the model; the real one (`core.learning.policy.GreedyPolicy`) decodes
with a KV cache, one position per step (or, when it `feeds_many`, the prompts' characters in one
step). `complete` feeds prompts to a policy and reads its continuations, for text that is not an
episode (the pre-training worksheets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from breadth.core.world.episodes.episode import MAX_LENGTH, Episode
from breadth.core.world.text.transcript import Role
from breadth.core.world.text.vocab import BOS, PAD


class Policy(Protocol):
    """Anything that, fed one character per row, returns each row's next character."""

    def step(self, chars: list[str]) -> list[str]:
        """Feed the characters at the next position (PAD for finished rows); return the choices."""
        ...


OnChar = Callable[[int, Role, str], None]  # (episode index, who wrote it, character)


def rollout(
    policy: Policy,
    prompts: list[str],
    max_length: int = MAX_LENGTH,
    on_char: OnChar | None = None,
) -> list[Episode]:
    """Play every prompt to its end; `on_char` hears each character as it enters a transcript."""
    return run_episodes(policy, [Episode(p, max_length=max_length) for p in prompts], on_char)


def run_episodes(policy: Policy, episodes: list[Episode], on_char: OnChar | None = None) -> list[Episode]:
    """Play episodes made by the caller (a lying calculator, say) to their end, in lockstep; the episodes.

    `on_char` is called right after the policy's step that chose an action character, so a policy that
    keeps its last step's probabilities (`top`) can be read from it for that character.
    """
    max_length = max((ep.max_length for ep in episodes), default=0)
    fed = [BOS] * len(episodes)  # position 0: the start-of-line token
    if getattr(policy, "feeds_many", False):  # the characters every episode starts with forced, fed in one step
        fed = [BOS + "".join(chars) for chars in _take_forced(episodes, on_char)]
    for _ in range(max_length):
        choices = policy.step(fed)
        fed = []
        for i, ep in enumerate(episodes):
            if ep.done:
                fed.append(PAD)
                continue
            forced = ep.next_forced()
            if forced is not None:
                role, char = forced
            else:
                role, char = Role.ACTION, choices[i]
                ep.act(char)
            if on_char is not None:
                on_char(i, role, char)
            fed.append(char)
        if all(ep.done for ep in episodes):
            break
    return episodes


def _take_forced(episodes: list[Episode], on_char: OnChar | None) -> list[list[str]]:
    """Take the forced characters that every episode has waiting at its start (the shortest prompt's worth,
    and never the last position), each heard by `on_char` position by position as the lockstep loop would."""
    count = min(min(len(ep.forced) for ep in episodes), min(ep.max_length for ep in episodes) - 2)
    taken: list[list[str]] = [[] for _ in episodes]
    for _ in range(max(0, count)):
        for i, ep in enumerate(episodes):
            role, char = ep.next_forced()
            if on_char is not None:
                on_char(i, role, char)
            taken[i].append(char)
    return taken


def complete(policy: Policy, prompts: list[str], stop: str, max_new: int) -> list[str | None]:
    """Each prompt's continuation chosen by `policy`, without `stop`; None if `stop` did not come in `max_new`.

    The prompts (all of one length) are fed in lockstep; a row that has stopped is fed padding.
    """
    if len({len(p) for p in prompts}) > 1:
        raise ValueError("complete() feeds prompts in lockstep: give prompts of one length")
    width = len(prompts[0]) if prompts else 0
    choices: list[str] = []
    for pos in range(width):
        choices = policy.step([p[pos] for p in prompts])
    out = [[] for _ in prompts]
    done = [False] * len(prompts)
    for new in range(max_new):
        for i, c in enumerate(choices):
            if not done[i]:
                if c == stop:
                    done[i] = True
                else:
                    out[i].append(c)
        if all(done) or new == max_new - 1:
            break
        choices = policy.step([PAD if d else c for d, c in zip(done, choices, strict=True)])
    return ["".join(o) if d else None for o, d in zip(out, done, strict=True)]
