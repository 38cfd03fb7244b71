"""The model as a policy: greedy next characters, decoded with a KV cache. The one decoder breadth has.

Rollouts (episodes with the calculator) and worksheet completions both go through `GreedyPolicy`,
so what the app shows, what the held-out score counts and what pre-training checks are decoded alike.
"""

from __future__ import annotations

import torch

from ..world.vocab import CHARS, PAD, PAD_ID, encode
from .model import GPT, KVCache

TOP = 4  # characters a policy reports per position (`GreedyPolicy.top`): the chosen one and three alternatives


class GreedyPolicy:
    """Argmax of the model's next-character logits; one position per step for every row.

    After each step, `top` gives every row's likeliest characters with their probabilities (the first is
    the one chosen), computed only when read, for showing the model's confidence.
    """

    def __init__(self, model: GPT, batch: int):
        self.model = model.eval()
        self.cache = KVCache(model.config, batch)
        self._last: torch.Tensor | None = None  # the last step's logits (B, vocab)

    def step(self, chars: list[str]) -> list[str]:
        """Feed one character per row (PAD for finished rows); return each row's greedy next character."""
        ids = torch.tensor([[encode(c)[0] if c != PAD else PAD_ID] for c in chars])  # (B, 1)
        with torch.no_grad():
            logits, _ = self.model(ids, cache=self.cache)  # (B, 1, vocab)
        logits[:, -1, PAD_ID] = float("-inf")  # the model never chooses padding
        self._last = logits[:, -1]
        return [CHARS[i] for i in logits[:, -1].argmax(-1).tolist()]

    @property
    def top(self) -> list[list[tuple[str, float]]]:
        """Per row, the TOP likeliest next characters of the last step and their probabilities, likeliest first."""
        if self._last is None:
            return []
        probs, ids = torch.softmax(self._last.float(), -1).topk(TOP, -1)
        return [
            [(CHARS[i], p) for i, p in zip(row_ids, row_p, strict=True)]
            for row_ids, row_p in zip(ids.tolist(), probs.tolist(), strict=True)
        ]


def greedy(model: GPT):
    """A `MakePolicy` for `core.world.scoring.play`: batch size -> a fresh GreedyPolicy of `model`."""
    return lambda batch: GreedyPolicy(model, batch)
