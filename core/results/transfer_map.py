"""The transfer map (issue 33): which dimensions of variation carry to a designed hold-out, each cell at a matched
budget.

A column is a design: the environments of a pool held out by coordinates (`--hold form=postfix,op=sub`). A row is
what training varied along: every other environment of the pool (`all`), or only those that differ from a held-out
one along the named dimensions alone (`form`: the infix subtractions of the same layouts; `op`: the postfix
additions; `op,form`: both). A cell is one designed curve (`CurvePlan` with `hold` and `vary`) at its one N, every
training environment it may take, trained beside a ceiling at the same steps (`budget="ceiling"`), on every seed:
held-out success against the ceiling's, each a mean with its 95% t interval over seeds (one draw: there is nothing
else to cluster). A row whose dimensions leave nothing to train on for a design has no cell there.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace

from breadth.core.results.breadth_curve import CEILING, PLATE_PASSES, CurvePlan
from breadth.core.results.curve_points import points
from breadth.core.results.grid import GridError
from breadth.core.results.splits import designed
from breadth.core.storage.store import StoredRun
from breadth.core.world.runs.settings import FinetuneSettings

ALL = "all"  # a row that trains on every environment the design does not hold out
LEARNED = 0.5  # below this on its training environments or its ceiling, a cell cannot show transfer


@dataclass(frozen=True)
class Cell:
    """One design x one way of varying: its plan, or why there is none."""

    design: tuple[str, ...]  # DIM=VALUE conditions
    vary: tuple[str, ...]  # dimensions; () for ALL
    plan: CurvePlan | None
    why: str = ""  # why no plan: the design leaves nothing to train on when varied so


@dataclass(frozen=True)
class Reading:
    """What a cell's stored runs say: success on training and held-out environments and the ceiling's, each
    (mean, low, high) over seeds, and on how many seeds."""

    train: tuple[float, float, float]
    held: tuple[float, float, float]
    ceiling: tuple[float, float, float]
    seeds: int

    @property
    def learned(self) -> bool:
        """Whether its training environments and its ceiling both reach LEARNED: else it says nothing of transfer."""
        return self.train[0] >= LEARNED and self.ceiling[0] >= LEARNED


def parse_design(text: str) -> tuple[str, ...]:
    """`form=postfix,op=sub` as conditions; GridError (one line) for an empty one."""
    conditions = tuple(part.strip() for part in text.split(",") if part.strip())
    if not conditions:
        raise GridError(f"--hold takes DIM=VALUE conditions joined by commas, not {text[:40]!r}")
    return conditions


def parse_vary(text: str) -> tuple[str, ...]:
    """`op,form` as dimensions, `all` as none (train on every environment not held out)."""
    dims = tuple(part.strip() for part in text.split(",") if part.strip())
    if not dims:
        raise GridError(f"--vary takes dimensions joined by commas, or {ALL}, not {text[:40]!r}")
    return () if dims == (ALL,) else dims


MAP_BUDGETS = ("own", "matched")  # each cell's own steps, or every cell at the map's largest cell's steps


def cells(
    pool: tuple[str, ...],
    designs: list[tuple[str, ...]],
    varies: list[tuple[str, ...]],
    demos: int,
    seeds: tuple[int, ...],
    settings: FinetuneSettings,
    held_out: int,
    budget: str = "own",
    passes: float = PLATE_PASSES,
    min_steps: int = 400,
) -> list[Cell]:
    """Every design x way of varying, rows (ways of varying) first; GridError (one line) for a design that holds out
    nothing or a dimension environments do not have. Each cell trains (and its ceiling, at the same steps) for its
    own budget (each demonstration seen `passes` times, at least `min_steps`), or with `budget` "matched" for the
    largest cell's: every row then trains as long, and differs only in what it saw."""
    if budget not in MAP_BUDGETS:
        raise GridError(f"a map's budget is one of {', '.join(MAP_BUDGETS)}, not {budget!r}")
    out = []
    for vary in varies:
        for design in designs:
            try:
                held, rest = designed(pool, design, vary)
            except GridError as e:
                if "leaves nothing to train on" not in str(e):
                    raise
                out.append(Cell(design, vary, None, "nothing to train on"))
                continue
            plan = CurvePlan(
                pool, len(held), 1, (len(rest),), demos, seeds, settings, held_out, passes, min_steps, hold=design,
                vary=vary, budget="ceiling",
            )  # fmt: skip
            out.append(Cell(design, vary, plan))
    if budget == "matched":  # every cell at the largest one's steps: its own at least as many, so none trains less
        steps = max((c.plan.steps_of(c.plan.largest()) for c in out if c.plan is not None), default=min_steps)
        out = [replace(c, plan=replace(c.plan, min_steps=steps)) if c.plan is not None else c for c in out]
    return out


def read(cell: Cell, runs: dict[str, StoredRun], base_hash: str) -> Reading | None:
    """A cell's reading from the stored runs, or None before its runs and its ceiling's are stored."""
    if cell.plan is None:
        return None
    found = {p.n: p for p in points(cell.plan, runs, base_hash)}
    trained = found.get(max(cell.plan.sizes))
    ceiling = found.get(CEILING)
    if trained is None or ceiling is None:
        return None
    return Reading(trained.train, trained.held, ceiling.held, trained.pairs)


@dataclass(frozen=True)
class HeldFailures:
    """What a cell's held-out episodes did, over its seeds' runs (not the ceiling's): solved of played, the failure
    kinds counted, and the unsolved episodes the runs kept (a few per environment), as (environment, text, kind)."""

    solved: int
    played: int
    kinds: dict[str, int]  # failure kind -> episodes, most first
    kept: list[tuple[str, str, str]]


def held_failures(cell: Cell, runs: dict[str, StoredRun], base_hash: str) -> HeldFailures | None:
    """The failures of a cell's held-out episodes in its trained runs; None before any of them is stored."""
    if cell.plan is None:
        return None
    held = cell.plan.split(0)[0]
    solved = played = 0
    kinds: dict[str, int] = {}
    kept: list[tuple[str, str, str]] = []
    stored = [runs[job.key] for job, _, n in cell.plan.jobs(base_hash) if n != CEILING and job.key in runs]
    for run in stored:
        for name in held:
            score = run.run.scores.get(name)
            if score is None:
                continue
            solved, played = solved + score.solved, played + score.total
            for kind, count in score.failures.items():
                kinds[kind] = kinds.get(kind, 0) + count
            kept += [(name, episode.text, episode.failure) for episode in score.examples]
    if not stored:
        return None
    return HeldFailures(solved, played, dict(sorted(kinds.items(), key=lambda kv: -kv[1])), kept)


@dataclass(frozen=True)
class StoredMap:
    """A transfer map as the store keeps it (so the app's map view can draw it as it fills): its designs, its ways
    of varying, every cell's plan (or why it has none), the words that chose its pool, and the base."""

    designs: tuple[tuple[str, ...], ...]
    varies: tuple[tuple[str, ...], ...]
    cells: tuple[Cell, ...]  # rows first, as `cells` makes them, each plan as it trains (its lockstep group size too)
    what: str  # `operands=3`, or `every environment`
    base_hash: str
    created: float = 0.0

    @property
    def name(self) -> str:
        """Its name in the store: a hash of its cells and base."""
        text = json.dumps([self.to_dict()["cells"], self.base_hash], sort_keys=True)
        return "map-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        """What the store keeps under the name."""
        return {
            "designs": [list(d) for d in self.designs],
            "varies": [list(v) for v in self.varies],
            "cells": [
                {
                    "design": list(c.design),
                    "vary": list(c.vary),
                    "plan": c.plan.to_dict() if c.plan else None,
                    "why": c.why,
                }
                for c in self.cells
            ],  # fmt: skip
            "what": self.what,
            "base": self.base_hash,
        }

    @classmethod
    def from_dict(cls, data: object, created: float = 0.0) -> StoredMap:
        """A stored map from the store's JSON; GridError (one line) for data breadth did not write."""
        try:
            if set(data) != {"designs", "varies", "cells", "what", "base"}:
                raise TypeError
            designs = tuple(_words(d) for d in data["designs"])
            varies = tuple(_words(v) for v in data["varies"])
            made = tuple(
                Cell(_words(c["design"]), _words(c["vary"]), CurvePlan.from_dict(c["plan"]) if c["plan"] else None,
                     str(c["why"])[:80])
                for c in data["cells"]
            )  # fmt: skip
            if not all(isinstance(data[k], str) for k in ("what", "base")) or len(made) != len(designs) * len(varies):
                raise TypeError
        except (TypeError, KeyError, AttributeError):
            raise GridError("a stored transfer map of an unexpected shape") from None
        return cls(designs, varies, made, data["what"][:200], data["base"][:64], created)

    def readings(self, runs: dict[str, StoredRun]) -> list[tuple[Cell, Reading | None]]:
        """Each cell with its reading from the stored runs (None before its runs are stored)."""
        return [(c, read(c, runs, self.base_hash)) for c in self.cells]


def _words(items: object) -> tuple[str, ...]:
    """A stored list of short strings (conditions, dimensions); TypeError for anything else."""
    if not isinstance(items, list) or not all(isinstance(x, str) and len(x) <= 80 for x in items):
        raise TypeError
    return tuple(items)
