"""The task: what the rest of breadth needs of an environment to draw and score episodes, and no more.

A task has a name and coordinates, a version, a size, and three splits cut from one seeded order (demonstrations
at its front, then the test split, then the validation split); `problem(seed, index)` is the index-th sum of that
order, and each split's problems are read from it. A registered environment and a generated one satisfy it alike
(both are `Environment`s, which add names and words for people, labelled by `core.world.environments.labels`, and
differ only by the ordering they are given: `core.world.environments.orders`). Code that only draws and scores
episodes types against `Task`: ids and coordinates (`registry`), the Gymnasium environments, `breadth envs` and
`breadth eval --envs`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from breadth.core.world.arithmetic.coordinates import Coordinates
from breadth.core.world.arithmetic.problem import Problem


@runtime_checkable
class Task(Protocol):
    """An environment as drawn and scored: its name, coordinates and version, its size, its splits' problems."""

    name: str  # the registry key and the name in mixes, stores and checkpoints, e.g. `add_2x2`
    at: Coordinates  # where it sits on the named dimensions
    version: int  # changes whenever its problems or transcripts would (its id names it)

    def size(self) -> int:
        """How many distinct sums it holds."""
        ...

    @property
    def demo_pool(self) -> int:
        """How many problems at the front of each seeded order are kept for demonstrations."""
        ...

    @property
    def test_pool(self) -> int:
        """How many problems follow the demonstrations as the test split."""
        ...

    @property
    def validation_pool(self) -> int:
        """How many problems the validation split holds, after the test split."""
        ...

    def problem(self, seed: int, index: int) -> Problem:
        """The index-th problem of its order for `seed`."""
        ...

    def demonstrations(self, seed: int, count: int) -> list[Problem]:
        """The first `count` problems of the seeded order (at most the demonstration pool)."""
        ...

    def held_out(self, seed: int, count: int | None = ...) -> list[Problem]:
        """`count` problems of the test split (None: all of it), the same first ones for any count asked."""
        ...

    def validation(self, seed: int, count: int | None = ...) -> list[Problem]:
        """`count` problems of the validation split (None: all of it)."""
        ...
