"""Environments by id: every environment as a record with a stable, versioned id, found, filtered and drawn here.

An environment is an `Environment` (its coordinates, its seeded problems, its demonstrations and splits, the
calculator it calls and how a call is written) named `breadth/<name>-v<version>`, as Gymnasium names its
environments: `breadth/add-2x2-v1`, `breadth/add-3x2-v1` (an old id, `breadth/two-digit-v1`, reads as its
environment's: `OLD_NAMES`). A change that alters an environment's problems
or transcripts gets a new version; an id of a version that no longer exists is refused in one line that
names the current one, so a stored result never silently means another environment.

`environments()` lists the registry (the registered ones, `REGISTERED`, then those the generator makes); `where(...)`
filters it by coordinates; `draw(n, seed)` takes a seeded sample. Every refusal is one line (`EnvError`).
"""

from __future__ import annotations

import itertools
import random
import re
from functools import cache

from breadth.core.world.arithmetic.calculator import FORMS, OP
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS, Coordinates
from breadth.core.world.arithmetic.problem import OLD_NAMES, PLATE_FORM, canonical
from breadth.core.world.environments.environment import DEMO_POOL, REGISTERED, VALIDATION_POOL, Environment
from breadth.core.world.environments.labels import COUNT_WORDS
from breadth.core.world.environments.orders import numpy_order, sampled
from breadth.core.world.environments.task import Task
from breadth.core.world.episodes.episode import MAX_LENGTH

NAMESPACE = "breadth"
VERSION = 1  # every environment's version today (`Environment.version` once one changes)
_ID = re.compile(rf"(?:{NAMESPACE}/)?([a-z0-9][a-z0-9.-]*?)-v([0-9]+)")


class EnvError(ValueError):
    """An id, coordinates or draw that names no environment; the message is one line for people."""


def env_id(env: Task) -> str:
    """The environment's versioned id: `breadth/add-2x2-v1`."""
    return _id(env.name, env)


def _id(name: str, env: Task) -> str:
    return f"{NAMESPACE}/{name.replace('_', '-')}-v{version_of(env)}"


def old_ids() -> dict[str, str]:
    """Each id made of an old name (`OLD_NAMES`) -> its environment's id: `breadth/two-digit-v1` ->
    `breadth/add-2x2-v1`; scripts written before the rename still make their environment."""
    return {_id(old, REGISTERED[new]): env_id(REGISTERED[new]) for old, new in OLD_NAMES.items()}


def version_of(env: Task) -> int:
    """The environment's version (1 unless the environment says otherwise)."""
    return getattr(env, "version", VERSION)


OPERANDS = (2, 3, 4)  # the generator's operand counts: one to three calls
THREE_DIGIT_OPERANDS = (2, 3)  # the operand counts of the environments with a three-digit number (`three_digit`)
DIGITS = (1, 2)  # the digits an operand position may have
SIGNS = ("+", "-")  # the operation a gap may have
MIN_SUMS = 100  # an environment holds at least this many sums: demonstrations, test and validation splits
GENERATED_TEST = 1_000  # the test split of a generated environment too large to list
SAMPLED_SUMS = DEMO_POOL + GENERATED_TEST + VALIDATION_POOL  # a space too large to list holds its splits in full
LETTERS = {"+": "a", "-": "s"}  # a gap's operation in a generated name: 2a1s2 is 12+3-45


def environments() -> list[Environment]:
    """The grid's environments: the registered environments, then the generated ones, each once (the pool every
    command takes unless told another: `core.world.environments.pools`)."""
    return [*REGISTERED.values(), *generated().values()]


def every_environment() -> list[Environment]:
    """Every environment an id names: the grid's, then those with a three-digit number (`three_digit`)."""
    return [*environments(), *three_digit().values()]


@cache
def generated() -> dict[str, Environment]:
    """The generator's environments by name: every operand count, digits per position, operation per gap and call
    form (a form that writes one operator for a whole sum takes one operation throughout), kept when valid (at
    least MIN_SUMS sums, SAMPLED_SUMS for a space too large to list, whose sampled order would otherwise never reach
    its validation split; the longest episode fits the context and every call the calculator) and not already a
    registered environment."""
    return _generate(OPERANDS, DIGITS, lambda layout: True)


@cache
def three_digit() -> dict[str, Environment]:
    """The environments with a three-digit number (`123+45`, `3s1s2`: 987-6-54), two or three numbers of them, made as
    `generated` makes its own and kept also only when every running result fits a call (`fits_calculator`: `3a1a1`,
    whose first call may reach 1008, is left out). Only the pools `wide` and `all` hold them
    (`core.world.environments.pools`): `environments()`, `where` and the grid are as they were, so the curves already
    run keep their pools."""
    return _generate(THREE_DIGIT_OPERANDS, (*DIGITS, 3), lambda layout: 3 in layout)


def _generate(counts: tuple[int, ...], digits: tuple[int, ...], keep) -> dict[str, Environment]:
    """The valid environments of these operand counts and digits per position whose layout `keep` takes."""
    taken = {f.at for f in REGISTERED.values()}
    out: dict[str, Environment] = {}
    for n, form in itertools.product(counts, FORMS):
        for layout, signs in itertools.product(
            itertools.product(digits, repeat=n), itertools.product(SIGNS, repeat=n - 1)
        ):
            if not keep(layout) or (len(set(signs)) > 1 and OP not in FORMS[form].sep):
                continue
            at = Coordinates(n, layout, "".join(signs), form)
            if at in taken or at.longest_episode() > MAX_LENGTH or not at.fits_calculator():
                continue
            if at.count() < (SAMPLED_SUMS if sampled(at) else MIN_SUMS):
                continue
            env = _generated(at)
            out[env.name] = env
    return out


def _generated(at: Coordinates) -> Environment:
    """The environment at generated coordinates: named by them (`2a1s2` is 12+3-45; `_postfix` for that form). Its
    seeded orders are made with numpy (`numpy_order`), so hundreds of them are cheap; a sampled one's test split is
    GENERATED_TEST problems after its demonstrations."""
    name = str(at.layout[0]) + "".join(
        LETTERS[o.symbol] + str(d) for o, d in zip(at.operations, at.layout[1:], strict=True)
    )
    name += "" if at.form == PLATE_FORM else f"_{at.form}"
    calls = at.operands - 1
    form = FORMS[at.form]
    description = (
        f"{at.operands} numbers of {', '.join(map(str, at.layout))} digits, "
        f"{' then '.join(o.name for o in at.operations)}: {calls} call{'s' if calls > 1 else ''}, {form.about}"
    )
    words = f"{COUNT_WORDS.get(at.operands, at.operands)} numbers"
    return Environment(name, name, words, description, at, ordering=numpy_order, sampled_test=GENERATED_TEST)


def environment(text: str) -> Environment:
    """The environment with this id (`breadth/add-2x2-v1`, or `add-2x2-v1`; an old id, `breadth/two-digit-v1`, reads
    as its environment's); EnvError for an unknown id or a version that does not exist (naming the current one)."""
    if not isinstance(text, str):
        raise EnvError(f"an environment id is text such as {NAMESPACE}/add-2x2-v1, not {repr(text)[:40]}")
    m = _ID.fullmatch(text.strip().lower())
    if m is None:
        raise EnvError(f"{text.strip()[:60]!r} is not an environment id such as {NAMESPACE}/add-2x2-v1")
    slug, version = canonical(m.group(1).replace("-", "_")).replace("_", "-"), int(m.group(2))
    env = next((f for f in every_environment() if f.name.replace("_", "-") == slug), None)
    if env is None:
        raise EnvError(f"no environment {NAMESPACE}/{slug}; `breadth envs` lists them")
    if version != version_of(env):
        raise EnvError(f"{NAMESPACE}/{slug}-v{version} does not exist (removed or never made); use {env_id(env)}")
    return env


def coordinates_of(env: Task) -> dict[str, str]:
    """The environment's value on each named dimension, as text: {"operands": "3", "digits": "2.1.2", ...}."""
    return {d: env.at.value(d) for d in ENV_DIMENSIONS}


def where(pool: list[Environment] | None = None, **values: str) -> list[Environment]:
    """The environments whose coordinates have these values (`operands="3"`, `op="sub"`), in registry order, from
    `pool` (default: every environment; `list(REGISTERED.values())` for the registered ones, as a mix's `@` selector
    takes them); EnvError for an unknown dimension or for coordinates no environment in the pool has."""
    unknown = [d for d in values if d not in ENV_DIMENSIONS]
    if unknown:
        raise EnvError(f"no dimension {unknown[0]!r}; dimensions: {', '.join(ENV_DIMENSIONS)}")
    pool = environments() if pool is None else pool
    found = [f for f in pool if all(coordinates_of(f)[d] == str(v) for d, v in values.items())]
    if not found:
        asked = ", ".join(f"{d}={v}" for d, v in values.items())
        raise EnvError(f"no environment at {asked}")
    return found


def draw(n: int, seed: int, pool: list[Environment] | None = None) -> list[Environment]:
    """`n` distinct environments drawn from `pool` (default: all) by `seed`, in registry order; EnvError if the pool
    holds fewer."""
    pool = environments() if pool is None else pool
    if not 1 <= n <= len(pool):
        raise EnvError(f"cannot draw {n} environments from {len(pool)}: draw 1 to {len(pool)}")
    chosen = set(random.Random(f"draw/{seed}").sample(range(len(pool)), n))
    return [f for i, f in enumerate(pool) if i in chosen]


def environment_named(text: str) -> Environment | None:
    """The environment called `text` by name, short label or alias (`add_3x2`, `a3x2`, `2d`, an old name such as
    `two_digit`), any case: a registered one, else one the environment generator makes (`2a1s2`)."""
    key = canonical(text.strip().lower())
    found = next((f for f in REGISTERED.values() if key in f.names()), None)
    return found if found is not None else generated().get(key) or three_digit().get(key)


def by_name(name: str) -> Environment:
    """The environment (registered or generated) of exactly this name, or of an old name of it (`two_digit`); KeyError
    naming it otherwise."""
    found = REGISTERED.get(canonical(name)) or environment_named(name)
    if found is None or found.name != canonical(name):
        raise KeyError(f"no environment named {name!r}")
    return found


def order_of(names) -> list[str]:
    """`names` in registry order: the registered environments first, then generated environments by name's order
    of generation."""
    names = list(names)
    if all(n in REGISTERED for n in names):  # the registered environments alone: never build the generator's hundreds
        rank = {n: i for i, n in enumerate(REGISTERED)}
        return sorted(names, key=rank.__getitem__)
    rank = {n: i for i, n in enumerate([*REGISTERED, *generated(), *three_digit()])}
    return sorted(names, key=lambda n: rank.get(n, len(rank)))
