"""Batched greedy rollouts with the calculator in the loop, one position per step for every episode.

All episodes of a batch advance in lockstep. At each position an episode either takes a forced
character (its prompt, or a tool result the environment queued) or the model's greedy choice from
the previous position. A policy only has to map the characters just fed to the next choices, so a
scripted fake can stand in for the model, and the real one decodes with a KV cache (one position
per step, not the whole sequence).
"""

from __future__ import annotations

from typing import Callable, Protocol

from .episode import MAX_LENGTH, Episode
from .transcript import Role
from .vocab import BOS, CHARS, PAD, PAD_ID, encode


class Policy(Protocol):
    """Anything that, fed one character per row, returns each row's next character."""

    def step(self, chars: list[str]) -> list[str]:
        """Feed the characters at the next position (PAD for finished rows); return the choices."""
        ...


OnChar = Callable[[int, Role, str], None]  # (episode index, who wrote it, character)


def rollout(policy: Policy, prompts: list[str], max_length: int = MAX_LENGTH, on_char: OnChar | None = None,
            ) -> list[Episode]:
    """Play every prompt to its end; `on_char` hears each character as it enters a transcript."""
    episodes = [Episode(p, max_length=max_length) for p in prompts]
    fed = [BOS] * len(episodes)  # position 0: the start-of-line token
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


class GreedyPolicy:
    """The model as a policy: argmax of its next-character logits, decoded with a KV cache."""

    def __init__(self, model, batch: int):
        import torch

        from .model import KVCache

        self._torch = torch
        self.model = model.eval()
        self.cache = KVCache(model.config, batch)

    def step(self, chars: list[str]) -> list[str]:
        torch = self._torch
        ids = torch.tensor([[encode(c)[0] if c != PAD else PAD_ID] for c in chars])  # (B, 1)
        with torch.no_grad():
            logits, _ = self.model(ids, cache=self.cache)  # (B, 1, vocab)
        logits[:, -1, PAD_ID] = float("-inf")  # the model never chooses padding
        return [CHARS[i] for i in logits[:, -1].argmax(-1).tolist()]
