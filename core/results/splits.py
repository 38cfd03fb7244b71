"""How a breadth curve splits its pool into held-out and training environments: random draws, or folds.

`random_splits` (the curves shipped before issue 33): each split a seeded shuffle of the pool, its first `held`
held out, drawn again while an earlier split holds the same set. Some environments are then held out in every
split and others never (19 of the three-number pool's 40 in its 3 splits). `fold_splits`: the pool shuffled and cut
into disjoint held-out sets of `held`, one shuffle after another, so that every environment is held out as often
as every other (within one) and no set repeats; a split's training order is its own seeded shuffle of the rest.
`held_splits` (a designed hold-out, `--hold DIM=VALUE`): every environment at those coordinates held out in every
split, training on the rest (or with `--vary DIM`, on those that differ from a held-out one along DIM alone), each
split its own order of them. All are cached: a plan draws its splits once per process.
"""

from __future__ import annotations

import functools
import random
from fnmatch import fnmatchcase

from breadth.core.results.grid import GridError
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS
from breadth.core.world.environments.registry import by_name, coordinates_of

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


def parse_hold(conditions: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """`--hold DIM=PATTERN` conditions by dimension (`form=postfix`, `op=sub.*`: shell-style patterns on the values
    `breadth envs` lists); GridError (one line) for one that is not DIM=PATTERN on a dimension environments have."""
    out: dict[str, tuple[str, ...]] = {}
    for text in conditions:
        dim, eq, pattern = text.partition("=")
        if not eq or not pattern.strip() or dim.strip() not in ENV_DIMENSIONS:
            raise GridError(f"--hold takes DIM=VALUE on one of {', '.join(ENV_DIMENSIONS)}, not {text[:40]!r}")
        out[dim.strip()] = (*out.get(dim.strip(), ()), pattern.strip())
    return out


def designed(pool: tuple[str, ...], hold: tuple[str, ...], vary: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """A designed hold-out: (the environments of `pool` that `hold` names, those training may take), in pool order.

    An environment is held out when, on every dimension `hold` names, its value matches one of that dimension's
    patterns (patterns of one dimension are alternatives; dimensions must all match). Training takes the rest, or
    with `vary`, only those that differ from some held-out environment along the `vary` dimensions alone: training
    that varied along those dimensions only. GridError (one line) when either set is empty."""
    conditions = parse_hold(hold)
    unknown = [d for d in vary if d not in ENV_DIMENSIONS]
    if unknown:
        raise GridError(f"--vary takes dimensions of {', '.join(ENV_DIMENSIONS)}, not {unknown[0][:20]!r}")
    at = {name: coordinates_of(by_name(name)) for name in pool}
    held = [n for n in pool if all(any(fnmatchcase(at[n][d], p) for p in ps) for d, ps in conditions.items())]
    fixed = [d for d in ENV_DIMENSIONS if d not in vary]
    rest = [n for n in pool if n not in held]
    if vary:
        rest = [n for n in rest if any(all(at[n][d] == at[h][d] for d in fixed) for h in held)]
    if not held or not rest:
        which = "holds out none of" if not held else "leaves nothing to train on in"
        raise GridError(f"--hold {' '.join(hold)}{' --vary ' + ' '.join(vary) if vary else ''} {which} the pool")
    return held, rest


@functools.cache
def held_splits(pool: tuple[str, ...], hold: tuple[str, ...], vary: tuple[str, ...], count: int) -> list[Split]:
    """The first `count` splits of a designed hold-out: the same held-out environments each time, the training
    environments in each split's own seeded order (`hold/<i>`), so nested subsets differ from split to split."""
    held, rest = designed(pool, hold, vary)
    out: list[Split] = []
    for i in range(count):
        order = list(rest)
        random.Random(f"hold/{i}").shuffle(order)
        out.append((held, order))
    return out
