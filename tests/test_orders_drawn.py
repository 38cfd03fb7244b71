"""A sampled environment's seeded order reads its batches lazily and still gives exactly the order of reading each
batch whole (the order every generated environment's splits were defined by), across batch boundaries."""

from __future__ import annotations

import pytest

from breadth.core.world.environments.orders import Drawn, allowed, decode, rng
from breadth.core.world.environments.registry import generated


def eager(family, seed: int, count: int) -> list[tuple[int, ...]]:
    """The first `count` items as the order was first written: every batch drawn and read whole."""
    at, r = family.at, rng(family.name, seed)
    batch = Drawn(at, family.name, seed, family.size() / family.at.candidates).batch
    items, seen = [], set()
    while len(items) < count:
        drawn = r.integers(0, at.candidates, size=batch)
        tuples = decode(at, drawn)
        keep = allowed(at, tuples)
        for i, row in zip(drawn[keep].tolist(), tuples[keep].tolist(), strict=True):
            if i not in seen:
                seen.add(i)
                items.append(tuple(row))
    return items[:count]


SAMPLED = [f for f in generated().values() if f.sampled]


@pytest.mark.parametrize("name", [SAMPLED[0].name, SAMPLED[len(SAMPLED) // 2].name, SAMPLED[-1].name])
@pytest.mark.parametrize("seed", [0, 7])
def test_lazy_batches_give_the_eager_order(name, seed):
    """The first 9,000 items (two batches and more) are the eager order's, read in any order of indices."""
    family = generated()[name]
    drawn = Drawn(family.at, family.name, seed, family.size() / family.at.candidates)
    assert drawn[30] == eager(family, seed, 31)[30]  # a few first, as 30 test sums ask
    assert [drawn[i] for i in range(9_000)] == eager(family, seed, 9_000)
    assert all(isinstance(x, int) for x in drawn[8_999])
