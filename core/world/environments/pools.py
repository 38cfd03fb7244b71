"""Pools: the named sets of environments that `breadth envs`, `eval --envs`, `curve` and `transfer` choose from.

`grid` is the registry as every command has always taken it (`registry.environments()`: the ten named environments
and the 173 the generator makes), the default, so a command that names no pool keeps the pool it had and a stored
curve keeps its splits. `wide` is the pool of issue 34's longer axis: the environments a model learns when trained on
each alone, from the grid and from those with a three-digit number (`registry.three_digit`), which only `wide` and
`all` hold; `WIDE` lists them, chosen by `python -m bench.pool_screen` on validation sums (docs/environments.md gives
the screen, its budget and what it left out). `all` is every environment an id names.
"""

from __future__ import annotations

from breadth.core.world.environments.environment import Environment
from breadth.core.world.environments.registry import EnvError, by_name, environments, every_environment

DEFAULT_POOL = "grid"
POOLS = ("grid", "wide", "all")  # the names --pool takes
WIDE_BAR = 0.8  # the least validation success, mean over the screen's seeds, an environment of the wide pool reached

# The wide pool, in registry order: each environment that solved at least WIDE_BAR of its validation sums (mean over
# seeds 100 and 101) trained on alone, 30 demonstrations for 1,000 steps of the plate's recipe otherwise (`python -m
# bench.pool_screen --envs grid` and `--envs three-digit`, `--wide` printing these names). Written from the screen's
# output, never read from a file: a pool is the same wherever the package is installed.
WIDE: tuple[str, ...] = tuple(  # results/pool-screen-{grid,three-digit}-2seeds-30.json: what it passed
    """
    add_2x2 add_3x1 add_2x1 add_4x1 sub_2x2 sub_3x1 sub_4x1 sub_3x2 1a2 2a1 2s1 1a1_postfix 1a2_postfix 2a1_postfix
    2s1_postfix 2a2_postfix 2s2_postfix 1a1s1 1s1a1 1a1a2 1a1s2 1s1a2 1a2a1 1a2s1 1a2a2 1a2s2 2a1a1 2a1s1 2s1a1
    2s1s1 2a1a2 2a1s2 2s1a2 2s1s2 2a2a1 2a2s1 2s2a1 2s2s1 2a2s2 2s2a2 1a1a1_postfix 1s1s1_postfix 1a1a2_postfix
    1a2a1_postfix 1a2a2_postfix 2a1a1_postfix 2s1s1_postfix 2a1a2_postfix 2s1s2_postfix 2a2a1_postfix 2s2s1_postfix
    2s2s2_postfix 1a1a1s1 1a1s1a1 1a1s1s1 1s1a1a1 1s1a1s1 1s1s1a1 1a1a1s2 1a1s1s2 1s1a1a2 1s1a1s2 1s1s1a2 1a1a2s1
    1a1s2a1 1a1s2s1 1s1a2a1 1s1a2s1 1a1s2a2 1s1a2a2 1s1a2s2 1a2a1a1 1a2a1s1 1a2s1a1 1a2s1s1 1a2a1a2 1a2a1s2 1a2s1a2
    1a2s1s2 1a2a2a1 1a2a2s1 1a2s2a1 1a2s2s1 1a2a2a2 2a1a1a1 2a1a1s1 2a1s1a1 2a1s1s1 2s1a1a1 2s1a1s1 2s1s1a1 2s1s1s1
    2a1a1a2 2a1a1s2 2a1s1a2 2a1s1s2 2s1a1a2 2s1a1s2 2s1s1s2 2a1a2a1 2a1a2s1 2a1s2a1 2s1a2s1 2s1s2a1 2s1s2s1 2a1a2s2
    2a1s2s2 2s1s2a2 2s1s2s2 2s2a1a1 2s2a1s1 2s2s1a1 2s2s1s1 2s2a1s2 2s2s1a2 2s2s1s2 2a2a2a1 2s2s2a1 2s2s2s1 2s2s2a2
    2s2s2s2 1a1a1a1_postfix 1s1s1s1_postfix 1a1a2a1_postfix 1a1a2a2_postfix 2a1a1a1_postfix 2s1s1s1_postfix
    2a1a1a2_postfix 2s1s1s2_postfix 2s1s2s1_postfix 2s1s2s2_postfix 2a2a1a2_postfix 2s2s1s2_postfix 2s2s2s1_postfix
    2a2a2a2_postfix 2s2s2s2_postfix 1a3 2a3 3a1 3s1 3a2 3s2 3a3 3s3 1a3_postfix 2a3_postfix 3a1_postfix 3s1_postfix
    3a2_postfix 3s2_postfix 3a3_postfix 3s3_postfix 1a1a3 1s1a3 1a2a3 2a1a3 2s1a3 2a2s3 2s2a3 3s1a1 3s1s1 3s1a2
    3s1s2 3s1s3 3s2a1 3s2s1 3s3s1 3s3s2 1a1a3_postfix 1a2a3_postfix 3s1s1_postfix 3s1s2_postfix 3s1s3_postfix
    3s2s1_postfix 3s2s2_postfix 3s2s3_postfix 3s3s1_postfix 3s3s3_postfix
    """.split()
)


def pool(name: str) -> list[Environment]:
    """The environments of the pool called `name`, in registry order; EnvError (one line) for a name no pool has."""
    if name == "grid":
        return environments()
    if name == "all":
        return every_environment()
    if name == "wide":
        return [by_name(n) for n in WIDE]
    raise EnvError(f"no pool {str(name)[:20]!r}; the pools are {', '.join(POOLS)}")
