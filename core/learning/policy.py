"""The model as a policy: next characters decoded with a KV cache, greedily or sampled. The one decoder breadth has.

Rollouts (episodes with the calculator) and worksheet completions both go through `GreedyPolicy`,
so what the app shows, what the held-out score counts and what pre-training checks are decoded alike.
`SamplingPolicy` is the same decoder choosing by sampling (temperature, a seeded generator), for
learning from reward: every row of a batch advances together, with the calculator in the loop.
"""

from __future__ import annotations

import torch

from breadth.core.learning.model import GPT, KVCache
from breadth.core.world.text.vocab import CHARS, PAD, PAD_ID, encode

TOP = 4  # characters a policy reports per position (`GreedyPolicy.top`): the chosen one and three alternatives


class GreedyPolicy:
    """Argmax of the model's next-character logits; one position per step for every row.

    After each step, `top` gives every row's likeliest characters with their probabilities (the first is
    the one chosen), computed only when read, for showing the model's confidence.

    Two ways to decode faster, for learning from reward (off by default, so what is played and scored is
    decoded one position at a time as always): with `feeds_many`, `rollout` may feed every row's first
    characters (its prompt) in one step; with `drop_finished`, a row fed padding is taken as finished for
    good (as `rollout` and `complete` feed it), and once at least half the rows decoded are finished they
    leave the batch and the cache, so one episode that runs on to the context's end costs one row per
    position, not the whole batch. Their choices are PAD from then on, and `top` covers the rows still decoded.
    """

    def __init__(self, model: GPT, batch: int, drop_finished: bool = False, feeds_many: bool = False):
        self.model = model.eval()
        self.cache = KVCache(model.config, batch)
        self._last: torch.Tensor | None = None  # the last step's logits (B, vocab)
        self.drop_finished = drop_finished
        self.feeds_many = feeds_many  # `step` takes text of one length per row, not only one character
        self._rows = list(range(batch))  # the caller's rows the cache holds, in cache order

    def step(self, chars: list[str]) -> list[str]:
        """Feed one character per row (PAD for finished rows; with `feeds_many`, text of one length per row);
        return each row's next character."""
        if self.drop_finished:
            self._drop([i for i in self._rows if chars[i] != PAD])
        ids = torch.tensor([encode(chars[i]) if chars[i] != PAD else [PAD_ID] for i in self._rows])  # (B, T)
        with torch.no_grad():
            logits, _ = self.model(ids, cache=self.cache)  # (B, T, vocab)
        logits[:, -1, PAD_ID] = float("-inf")  # the model never chooses padding
        self._last = logits[:, -1]
        chosen = self.choose(self._last).tolist()
        if len(self._rows) == len(chars):
            return [CHARS[i] for i in chosen]
        out = [PAD] * len(chars)
        for row, i in zip(self._rows, chosen, strict=True):
            out[row] = CHARS[i]
        return out

    def _drop(self, active: list[int]) -> None:
        """Keep only the `active` rows in the batch and the cache, once they are at most half of it."""
        if not active or len(active) > len(self._rows) // 2:
            return
        where = {row: j for j, row in enumerate(self._rows)}
        keep = torch.tensor([where[row] for row in active])
        self.cache.k, self.cache.v = self.cache.k[:, keep], self.cache.v[:, keep]  # (L, B', nh, T_max, hs)
        self._rows = active

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

    def __init__(
        self,
        model: GPT,
        batch: int,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
        drop_finished: bool = False,
        feeds_many: bool = False,
    ):
        super().__init__(model, batch, drop_finished, feeds_many)
        if not temperature > 0:
            raise ValueError(f"a sampling temperature is above 0, not {temperature}")
        self.temperature = temperature
        self.generator = generator if generator is not None else torch.Generator().manual_seed(0)

    def choose(self, logits: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(logits.float() / self.temperature, -1)  # (B, vocab); padding has probability 0
        return torch.multinomial(probs, 1, generator=self.generator)[:, 0]  # (B,)


def greedy(model: GPT):
    """A `MakePolicy` for `core.world.episodes.scoring.play`: batch size -> a fresh GreedyPolicy of `model`."""
    return lambda batch: GreedyPolicy(model, batch)


def sampling(model: GPT, temperature: float = 1.0, seed: int = 0):
    """A `MakePolicy` that samples: every batch it makes draws from one generator seeded once with `seed`."""
    generator = torch.Generator().manual_seed(seed)
    return lambda batch: SamplingPolicy(model, batch, temperature, generator)
