"""Environments by id: every family as a record with a stable, versioned id, found, filtered and drawn here.

An environment is a `Family` (its coordinates, its seeded problems, its demonstrations and splits, the
calculator it calls and how a call is written) named `breadth/<name>-v<version>`, as Gymnasium names its
environments: `breadth/two-digit-v1`, `breadth/add-3x2-v1`. A change that alters an environment's problems
or transcripts gets a new version; an id of a version that no longer exists is refused in one line that
names the current one, so a stored result never silently means another environment.

`environments()` lists the registry (the named families, then those the generator makes); `where(...)`
filters it by coordinates; `draw(n, seed)` takes a seeded sample. Every refusal is one line (`EnvError`).
"""

from __future__ import annotations

import random
import re

from breadth.core.world.families import DIMENSIONS, FAMILIES, Family

NAMESPACE = "breadth"
VERSION = 1  # every environment's version today (`Family.version` once a family changes)
_ID = re.compile(rf"(?:{NAMESPACE}/)?([a-z0-9][a-z0-9.-]*?)-v([0-9]+)")


class EnvError(ValueError):
    """An id, coordinates or draw that names no environment; the message is one line for people."""


def env_id(family: Family) -> str:
    """The environment's versioned id: `breadth/two-digit-v1`."""
    return f"{NAMESPACE}/{family.name.replace('_', '-')}-v{version_of(family)}"


def version_of(family: Family) -> int:
    """The environment's version (1 unless the family says otherwise)."""
    return getattr(family, "version", VERSION)


def environments() -> list[Family]:
    """Every registered environment, in registry order."""
    return list(FAMILIES.values())


def environment(text: str) -> Family:
    """The environment with this id (`breadth/two-digit-v1`, or `two-digit-v1`); EnvError for an unknown id or a
    version that does not exist (naming the current one)."""
    m = _ID.fullmatch(text.strip().lower())
    if m is None:
        raise EnvError(f"{text.strip()[:60]!r} is not an environment id such as {NAMESPACE}/two-digit-v1")
    slug, version = m.group(1), int(m.group(2))
    family = next((f for f in environments() if f.name.replace("_", "-") == slug), None)
    if family is None:
        raise EnvError(f"no environment {NAMESPACE}/{slug}; `breadth envs` lists them")
    if version != version_of(family):
        raise EnvError(f"{NAMESPACE}/{slug}-v{version} does not exist (removed or never made); use {env_id(family)}")
    return family


def coordinates_of(family: Family) -> dict[str, str]:
    """The environment's value on each named dimension, as text: {"operands": "3", "digits": "1", ...}."""
    return {d: family.at.value(d) for d in DIMENSIONS}


def where(pool: list[Family] | None = None, **values: str) -> list[Family]:
    """The environments whose coordinates have these values (`operands="3"`, `op="sub"`), in registry order;
    EnvError for an unknown dimension or for coordinates no environment has."""
    unknown = [d for d in values if d not in DIMENSIONS]
    if unknown:
        raise EnvError(f"no dimension {unknown[0]!r}; dimensions: {', '.join(DIMENSIONS)}")
    pool = environments() if pool is None else pool
    found = [f for f in pool if all(coordinates_of(f)[d] == str(v) for d, v in values.items())]
    if not found:
        asked = ", ".join(f"{d}={v}" for d, v in values.items())
        raise EnvError(f"no environment at {asked}")
    return found


def draw(n: int, seed: int, pool: list[Family] | None = None) -> list[Family]:
    """`n` distinct environments drawn from `pool` (default: all) by `seed`, in registry order; EnvError if the pool
    holds fewer."""
    pool = environments() if pool is None else pool
    if not 1 <= n <= len(pool):
        raise EnvError(f"cannot draw {n} environments from {len(pool)}: draw 1 to {len(pool)}")
    chosen = set(random.Random(f"draw/{seed}").sample(range(len(pool)), n))
    return [f for i, f in enumerate(pool) if i in chosen]
