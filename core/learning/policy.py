"""The model as a policy: next characters decoded with a KV cache, greedily or sampled. The one decoder breadth has.

Rollouts (episodes with the calculator) and worksheet completions both go through `GreedyPolicy`,
so what the app shows, what the held-out score counts and what pre-training checks are decoded alike.
`SamplingPolicy` is the same decoder choosing by sampling (temperature, a seeded generator), for
learning from reward: every row of a batch advances together, with the calculator in the loop.
"""

from __future__ import annotations

import torch

from breadth.core.learning.model import GPT, KVCache
from breadth.core.world.vocab import CHARS, PAD, PAD_ID, encode

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
        """Feed one character per row (PAD for finished rows); return each row's next character."""
        ids = torch.tensor([[encode(c)[0] if c != PAD else PAD_ID] for c in chars])  # (B, 1)
        with torch.no_grad():
            logits, _ = self.model(ids, cache=self.cache)  # (B, 1, vocab)
        logits[:, -1, PAD_ID] = float("-inf")  # the model never chooses padding
        self._last = logits[:, -1]
        return [CHARS[i] for i in self.choose(self._last).tolist()]

    def choose(self, logits: torch.Tensor) -> torch.Tensor:
        """Each row's choice from its next-character logits (B, vocab) -> (B,): the likeliest."""
        return logits.argmax(-1)

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


class SamplingPolicy(GreedyPolicy):
    """Samples each row's next character from softmax(logits / temperature) with a seeded generator.

    The same seed and the same model give the same characters on one machine; rows draw from one
    stream in row order, so a batch repeats exactly as a whole.
    """

    def __init__(self, model: GPT, batch: int, temperature: float = 1.0, generator: torch.Generator | None = None):
        super().__init__(model, batch)
        if not temperature > 0:
            raise ValueError(f"a sampling temperature is above 0, not {temperature}")
        self.temperature = temperature
        self.generator = generator if generator is not None else torch.Generator().manual_seed(0)

    def choose(self, logits: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(logits.float() / self.temperature, -1)  # (B, vocab); padding has probability 0
        return torch.multinomial(probs, 1, generator=self.generator)[:, 0]  # (B,)


def greedy(model: GPT):
    """A `MakePolicy` for `core.world.scoring.play`: batch size -> a fresh GreedyPolicy of `model`."""
    return lambda batch: GreedyPolicy(model, batch)


def sampling(model: GPT, temperature: float = 1.0, seed: int = 0):
    """A `MakePolicy` that samples: every batch it makes draws from one generator seeded once with `seed`."""
    generator = torch.Generator().manual_seed(seed)
    return lambda batch: SamplingPolicy(model, batch, temperature, generator)
