"""A training mix: how many demonstrations of each environment, parsed from `add_2x2=35,add_3x1=35`.

Environments can also be named by their coordinates on the grid's dimensions: `@operands:2=35` gives 35
demonstrations to every environment with two operands, `@all=10` to every environment, and
`@all!operands:3&digits:2=10` to every environment but those with three two-digit operands (`&` joins
conditions, `!` excludes what follows it). Later parts override earlier ones for the environments they
name; an environment named twice by its own name is refused. An environment may be named by its short label
(`a3x2`) or an old one (`2d`, `two_digit`) too: a mix stored with old names reads as the same mix (`canonical_spec`).
"""

from __future__ import annotations

from dataclasses import dataclass

from breadth.core.world.arithmetic.coordinates import DIMENSIONS
from breadth.core.world.arithmetic.problem import Problem, canonical, first_name
from breadth.core.world.environments.environment import REGISTERED, short_label
from breadth.core.world.environments.labels import brief
from breadth.core.world.environments.registry import EnvError, by_name, environment_named, order_of, where

PLATE_MIX = ("add_2x2", "add_3x1")  # the plate's mix of its two environments, called `mix` on its own


class MixError(ValueError):
    """A mix names an unknown environment or a count that does not add up."""


@dataclass(frozen=True)
class Mix:
    """Demonstration counts per environment, in registry order; environments with no demonstrations are left out."""

    counts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, **counts: int) -> Mix:
        """A mix from keyword counts, e.g. Mix.of(add_2x2=35, add_3x1=35) (or a2x2=35, or two_digit=35)."""
        named: dict[str, int] = {}
        for name, n in counts.items():
            found = environment_named(name)
            if found is None:
                raise MixError(
                    f"unknown environment {name!r}; known: {', '.join(REGISTERED)} (`breadth envs` lists more)"
                )
            if found.name in named:
                raise MixError(f"environment {found.name!r} appears twice in the mix")
            named[found.name] = n
        counts = named
        for name, n in counts.items():
            pool = by_name(name).demo_pool
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= pool:
                raise MixError(f"{name}: a count from 0 to {pool}, not {n!r}")
        if sum(counts.values()) == 0:
            raise MixError("a mix needs at least one demonstration")
        return cls(tuple((name, counts[name]) for name in order_of(counts) if counts[name] > 0))

    @classmethod
    def parse(cls, text: str) -> Mix:
        """A mix from `environment=count,...` or `@selector=count,...`; raises MixError with one readable line."""
        counts: dict[str, int] = {}
        named: set[str] = set()
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = part.rpartition("=") if part.startswith("@") else part.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not (value.isascii() and value.isdigit()):  # isdigit alone passes '²', which int() refuses
                raise MixError(f"expected environment=count or @selector=count, got {part[:60]!r}")
            if len(value) > 6:  # no pool is larger; thousands of digits would reach int()'s limit
                raise MixError(
                    f"{name[:40]}: a count of {len(value)} digits; no environment has that many demonstrations"
                )
            if name.startswith("@"):
                for selected in select(name[1:]):
                    counts[selected] = int(value)
                continue
            found = environment_named(name)  # a short label or an old name (`2d`, `two_digit`) names it too
            name = found.name if found else name
            if name in named:
                raise MixError(f"environment {name!r} appears twice in the mix")
            named.add(name)
            counts[name] = int(value)
        if not counts:
            raise MixError("empty mix; write e.g. add_2x2=35,add_3x1=35 or @operands:2=35")
        return cls.of(**counts)

    @property
    def total(self) -> int:
        """Demonstrations in all."""
        return sum(n for _, n in self.counts)

    def label(self) -> str:
        """Short display name, e.g. `add_2x2 35 + add_3x1 35`."""
        return " + ".join(f"{name} {n}" for name, n in self.counts)

    def spec(self) -> str:
        """The mix in the form `parse` reads."""
        return ",".join(f"{name}={n}" for name, n in self.counts)

    def short(self) -> str:
        """A label that fits a narrow column, e.g. `a2x2 35+a3x1 35`; past three environments, `10 envs 100`."""
        if len(self.counts) > 3:
            return f"{len(self.counts)} envs {self.total}"
        return "+".join(f"{short_label(name)} {n}" for name, n in self.counts)

    def words(self) -> str:
        """`Mix.short` in words a listener reads: `two-digit 70`, `3 singles 70`, the plate's mix `mix 35+35`,
        `3 singles 36+two-digit minus 36`; past three environments, `10 envs 100`."""
        if len(self.counts) > 3:
            return f"{len(self.counts)} envs {self.total}"
        if [name for name, _ in self.counts] == list(PLATE_MIX):
            return "mix " + "+".join(str(n) for _, n in self.counts)
        return "+".join(f"{brief(by_name(name))} {n}" for name, n in self.counts)

    def name_for(self, codes: bool = False) -> str:
        """Its words, or, where a person asked for codes, its short label (`a2x2 35+a3x1 35`)."""
        return self.short() if codes else self.words()

    def slug(self) -> str:
        """The mix as a file-name part, e.g. `add_2x235+add_3x135`."""
        return slug(self.spec())

    def demonstrations(self, seed: int) -> list[Problem]:
        """Every demonstration problem of the mix for `seed`, environment by environment."""
        return [p for name, n in self.counts for p in by_name(name).demonstrations(seed, n)]


def select(selector: str) -> list[str]:
    """Environments named by coordinates: `operands:2`, `op:sub&digits:1`, `all`, `all!operands:3&digits:2`."""
    keep, bang, drop = selector.partition("!")
    chosen = list(REGISTERED) if keep.strip() == "all" else _where(keep)
    dropped = set(_where(drop)) if bang else set()
    out = [name for name in chosen if name not in dropped]
    if not out:
        raise MixError(f"@{selector} names no environment")
    return out


def _where(conditions: str) -> list[str]:
    values: dict[str, str] = {}
    for condition in conditions.split("&"):
        dimension, colon, value = (x.strip() for x in condition.partition(":"))
        if not colon or dimension not in DIMENSIONS or not value:
            raise MixError(f"expected dimension:value ({', '.join(DIMENSIONS)}), or all, got {condition.strip()!r}")
        values[dimension] = value
    try:
        return [environment.name for environment in where(list(REGISTERED.values()), **values)]
    except EnvError:  # coordinates no registered environment has: a selector that names none
        return []


def slug(spec: str) -> str:
    """A mix spec (`add_2x2=35,add_3x1=35`) as a file-name part (`add_2x235+add_3x135`)."""
    return "".join(c for c in spec.replace(",", "+").replace("=", "") if c.isalnum() or c in "_+-") or "model"


def canonical_spec(spec: str) -> str:
    """A mix spec as stored, with each old environment name as its environment's (`two_digit=70` -> `add_2x2=70`), the
    rest of its text as it is: a run stored under an old name is one of the same mix as a new one."""
    return _renamed(spec, canonical)


def first_spec(spec: str) -> str:
    """A mix spec with each environment as its name was when run keys were first made (`add_2x2=70` ->
    `two_digit=70`): a run's key stays the one it was stored under."""
    return _renamed(spec, first_name)


def spellings(spec: str) -> list[str]:
    """Every way a mix spec may be stored: as written now and with the old names (one if they are the same)."""
    return list(dict.fromkeys([canonical_spec(spec), first_spec(spec)]))


def _renamed(spec: str, name_of) -> str:
    parts = (part.partition("=") for part in spec.split(","))
    return ",".join(name_of(name) + eq + count for name, eq, count in parts)


def spec_name(spec: str, codes: bool = False) -> str:
    """A mix spec in words (`Mix.words`), or as codes where a person asked for them; the spec itself if it does not
    parse."""
    try:
        return Mix.parse(spec).name_for(codes)
    except MixError:
        return spec


def short_spec(spec: str) -> str:
    """A mix spec as `Mix.short` shows it, or the spec itself if it does not parse."""
    return spec_name(spec, codes=True)
