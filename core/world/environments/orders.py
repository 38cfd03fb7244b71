"""Seeded orders of a generated environment's sums, made with numpy: fast enough for hundreds of environments.

The registered environments keep their Python-random orders (their demonstrations and held-out sums are
pinned); a generated environment's order is its own, defined here: a listed space (at most
LISTED_UP_TO candidates) is every allowed tuple, permuted; a larger one is drawn in batches of
candidate indices, each kept the first time it is drawn if the domain rules allow it. Both come from
numpy's PCG64 seeded by the environment's name and the seed, so they repeat on any machine.
"""

from __future__ import annotations

import hashlib

import numpy as np

from breadth.core.world.arithmetic.coordinates import Coordinates, bounds

BATCH = 4096  # candidate indices drawn at a time for a sampled space


def rng(name: str, seed: int) -> np.random.Generator:
    """The generator of environment `name`'s order for `seed` (the same on every machine)."""
    digest = hashlib.sha256(f"{name}/{seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def decode(at: Coordinates, index: np.ndarray) -> np.ndarray:
    """Candidate indices -> operand tuples (N, operands), in lexicographic order as itertools.product lists them."""
    out = np.empty((len(index), at.operands), dtype=np.int64)
    rest = index.astype(np.int64)
    for i in range(at.operands - 1, -1, -1):
        low, high = bounds(at.layout[i])
        rest, r = np.divmod(rest, high - low + 1)
        out[:, i] = low + r
    return out


def allowed(at: Coordinates, tuples: np.ndarray) -> np.ndarray:
    """Which tuples keep every gap's domain rule (a `-` never takes the running result below zero)."""
    ok = np.ones(len(tuples), dtype=bool)
    acc = tuples[:, 0].copy()
    for i, o in enumerate(at.operations):
        acc = acc + tuples[:, i + 1] if o.symbol == "+" else acc - tuples[:, i + 1]
        if o.floor is not None:
            ok &= acc >= o.floor
    return ok


def listed(at: Coordinates, name: str, seed: int) -> Listed:
    """Every allowed tuple of a listed space, in the seeded order."""
    tuples = decode(at, np.arange(at.candidates))
    tuples = tuples[allowed(at, tuples)]
    return Listed(tuples[rng(name, seed).permutation(len(tuples))])


class Listed:
    """A listed space in its seeded order, kept as one array (a tuple is made only when asked for)."""

    def __init__(self, tuples: np.ndarray) -> None:
        self.tuples = tuples

    def __getitem__(self, index: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.tuples[index])


class Drawn:
    """A seeded order of a space too large to list: distinct allowed tuples in the order first drawn.

    A batch of candidates is drawn at a time and read only as far as an index asks (30 test sums need a few
    dozen of its thousands), so the order is the same as reading every batch whole, at a fraction of the cost.
    """

    def __init__(self, at: Coordinates, name: str, seed: int, share: float) -> None:
        self.at, self.rng = at, rng(name, seed)
        self.batch = int(min(BATCH / max(share, 1e-3), 2**20))  # about BATCH allowed tuples a draw
        self.items: list[tuple[int, ...]] = []
        self.seen: set[int] = set()
        self._drawn: np.ndarray = np.empty(0, dtype=np.int64)  # the current batch's allowed indices, not yet read
        self._tuples: np.ndarray = np.empty((0, at.operands), dtype=np.int64)  # and their tuples
        self._read = 0  # how far the current batch has been read

    def __getitem__(self, index: int) -> tuple[int, ...]:
        while len(self.items) <= index:
            if self._read == len(self._drawn):
                drawn = self.rng.integers(0, self.at.candidates, size=self.batch)
                tuples = decode(self.at, drawn)
                keep = allowed(self.at, tuples)  # a tuple the rules refuse never becomes an item, however often drawn
                self._drawn, self._tuples, self._read = drawn[keep], tuples[keep], 0
                continue
            i = int(self._drawn[self._read])
            if i not in self.seen:
                self.seen.add(i)
                self.items.append(tuple(int(x) for x in self._tuples[self._read]))
            self._read += 1
        return self.items[index]
