"""Pools: the named sets of environments that `breadth envs`, `eval --envs`, `curve` and `transfer` choose from.

`grid` is the registry as every command has always taken it (`registry.environments()`: the ten named environments
and the 173 the generator makes), the default, so a command that names no pool keeps the pool it had and a stored
curve keeps its splits. `all` is every environment an id names: the grid's and those with a three-digit number
(`registry.three_digit`), which no other pool holds.
"""

from __future__ import annotations

from breadth.core.world.environments.environment import Environment
from breadth.core.world.environments.registry import EnvError, environments, every_environment

DEFAULT_POOL = "grid"
POOLS = ("grid", "all")  # the names --pool takes
WIDE_BAR = 0.8  # the least validation success, mean over the screen's seeds, an environment of the wide pool reached


def pool(name: str) -> list[Environment]:
    """The environments of the pool called `name`, in registry order; EnvError (one line) for a name no pool has."""
    if name == "grid":
        return environments()
    if name == "all":
        return every_environment()
    raise EnvError(f"no pool {str(name)[:20]!r}; the pools are {', '.join(POOLS)}")
