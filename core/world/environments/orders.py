"""Seeded orders of an environment's sums, and the two orderings that make them (an environment is given one).

An ordering takes an environment's coordinates, its name and a seed and gives its sums in a seeded order, the
operand tuple at each index; the demonstrations and splits are cut from that order. A space of at most LISTED_UP_TO
candidate tuples is listed (every allowed tuple, put in order); a larger one is sampled (candidate indices drawn
without replacement, each kept if the domain rules allow it), which gives the same prefix for any length asked.

`plate_order` is the registered environments' (Python's random, seeded by the name they were first made with): their
demonstrations and held-out sums are pinned. `numpy_order` is the generated environments' (numpy's PCG64 seeded by
the name and the seed, in batches): fast enough for hundreds of environments. Both repeat on any machine.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from functools import cache
from typing import Protocol

import numpy as np

from breadth.core.world.arithmetic.coordinates import Coordinates, bounds
from breadth.core.world.arithmetic.problem import first_name

BATCH = 4096  # candidate indices drawn at a time for a sampled space
LISTED_UP_TO = 100_000  # spaces with at most this many candidate tuples are listed and put in order; larger are sampled


class Order(Protocol):
    """A seeded order of an environment's sums: the operand tuple at each index."""

    def __getitem__(self, index: int) -> tuple[int, ...]: ...


Ordering = Callable[[Coordinates, str, int], Order]  # (coordinates, name, seed) -> the sums in that seed's order


def sampled(at: Coordinates) -> bool:
    """True if the space at these coordinates is too large to list and is sampled instead."""
    return at.candidates > LISTED_UP_TO


@cache
def space(at: Coordinates) -> tuple[tuple[int, ...], ...]:
    """Every allowed operand tuple of a listed space, in lexicographic order (built once per coordinates)."""
    if sampled(at):
        raise ValueError(f"{at.candidates:,} candidate sums: too many to list")
    tuples = decode(at, np.arange(at.candidates))  # lexicographic, as itertools.product lists them
    return tuple(map(tuple, tuples[allowed(at, tuples)].tolist()))  # numpy: no Python call per candidate


def plate_order(at: Coordinates, name: str, seed: int) -> Order:
    """The registered environments' order: the listed space shuffled by Python's random, or sampled index by index
    with it, seeded by the name the environment was first made with (as the plate pinned it)."""
    r = random.Random(f"{first_name(name)}/{seed}")
    if sampled(at):
        return Sampled(at, r)
    items = list(space(at))
    r.shuffle(items)
    return Shuffled(tuple(items))


def numpy_order(at: Coordinates, name: str, seed: int) -> Order:
    """The generated environments' order: every allowed tuple permuted by numpy, or drawn in numpy batches."""
    if sampled(at):
        return Drawn(at, name, seed, _share(at))
    return listed(at, name, seed)


@cache
def _share(at: Coordinates) -> float:
    """The share of candidate tuples the domain rules allow (counted once per coordinates: a count takes ms)."""
    return at.count() / at.candidates


class Shuffled:
    """A listed space in a seeded order made with Python's random, kept as tuples."""

    def __init__(self, items: tuple[tuple[int, ...], ...]) -> None:
        self.items = items

    def __getitem__(self, index: int) -> tuple[int, ...]:
        return self.items[index]


class Sampled:
    """A seeded order of a space too large to list, drawn with Python's random: distinct indices drawn one by one,
    kept as drawn if the domain rules allow them."""

    def __init__(self, at: Coordinates, rng: random.Random) -> None:
        self.at, self.rng = at, rng
        self.items: list[tuple[int, ...]] = []
        self.seen: set[int] = set()

    def __getitem__(self, index: int) -> tuple[int, ...]:
        while len(self.items) <= index:
            i = self.rng.randrange(self.at.candidates)
            if i not in self.seen:
                self.seen.add(i)
                candidate = self.at.candidate(i)
                if self.at.contains(candidate):  # a `-` environment skips sums that would go below zero
                    self.items.append(candidate)
        return self.items[index]


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
