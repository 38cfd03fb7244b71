"""How a breadth curve splits its pool into held-out and training environments: random draws, or folds.

`random_splits` (the curves shipped before issue 33): each split a seeded shuffle of the pool, its first `held`
held out, drawn again while an earlier split holds the same set. Some environments are then held out in every
split and others never (19 of the three-number pool's 40 in its 3 splits). `fold_splits`: the pool shuffled and cut
into disjoint held-out sets of `held`, one shuffle after another, so that every environment is held out as often
as every other (within one) and no set repeats; a split's training order is its own seeded shuffle of the rest.
Both are cached: a plan draws its splits once per process.
"""

from __future__ import annotations

import functools
import random

from breadth.core.results.grid import GridError

Split = tuple[list[str], list[str]]  # (held out, in pool order; the others, in the order nested subsets take them)


@functools.cache
def random_splits(pool: tuple[str, ...], held: int, count: int) -> list[Split]:
    """The first `count` splits of `pool`: each a seeded shuffle (`curve/<i>`), drawn again (`curve/<i>/<attempt>`)
    while its held-out set is one an earlier split holds. The first draws are kept, so curves whose splits never
    collided keep their runs."""
    out: list[Split] = []
    seen: set[frozenset[str]] = set()
    for i in range(count):
        for attempt in range(10_000):
            names = list(pool)
            random.Random(f"curve/{i}" if attempt == 0 else f"curve/{i}/{attempt}").shuffle(names)
            if frozenset(names[:held]) not in seen:
                break
        else:
            raise GridError(f"no held-out set for split {i} that no earlier split holds")
        seen.add(frozenset(names[:held]))
        out.append((sorted(names[:held], key=pool.index), names[held:]))
    return out


@functools.cache
def fold_splits(pool: tuple[str, ...], held: int, count: int) -> list[Split]:
    """The first `count` splits of `pool` as folds: the pool in a stream of seeded shuffles (`folds/<round>`), cut
    into held-out sets of `held` (an environment already in the set being cut waits for the next), a set an earlier
    split holds drawn again from the stream; the rest in a seeded order (`folds/<i>/order`)."""
    out: list[Split] = []
    seen: set[frozenset[str]] = set()
    waiting: list[str] = []  # the stream: what the shuffles so far have not yet put in a held-out set
    rounds = 0
    for i in range(count):
        for _ in range(10_000):
            chosen: list[str] = []
            while len(chosen) < held:
                if not any(name not in chosen for name in waiting):
                    names = list(pool)
                    random.Random(f"folds/{rounds}").shuffle(names)
                    waiting += names
                    rounds += 1
                name = next(name for name in waiting if name not in chosen)
                waiting.remove(name)
                chosen.append(name)
            if frozenset(chosen) not in seen:
                break
        else:
            raise GridError(f"no held-out set for split {i} that no earlier split holds")
        seen.add(frozenset(chosen))
        rest = [name for name in pool if name not in chosen]
        random.Random(f"folds/{i}/order").shuffle(rest)
        out.append((sorted(chosen, key=pool.index), rest))
    return out
