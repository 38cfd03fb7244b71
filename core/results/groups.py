"""Runs in lockstep: which jobs of a sweep or a curve train together, and the keys that say so.

`core.learning.lockstep` trains K fine-tunes as one batched model, more runs a minute than one at a time. A
run's numbers depend a little on its group (batches padded to the group's widest, scoring batched), so its
group is part of its key (`run_key(..., lockstep=...)`) and of its record (`Lockstep`): a lockstep run is never
taken for a run trained alone, nor for one of another group, and a later single-run sweep does not skip it.

Groups are formed from the jobs alone, the same way every time: the seeds of one cell (the same mix, settings,
held-out size and scored environments: runs that differ only in their seed, so they take as many steps and pad
little), in the order given, K at a time. The same command forms the same groups, so a stopped lockstep sweep
resumes; a group of which some runs are stored trains again whole (its runs' numbers are those of that group)
and stores only what is missing; adding seeds changes only each cell's last group, if it was not full.

Lockstep trains with the fine-tuning settings it names (`TRAINS_WITH`); a setting added to the recipe and not yet
to lockstep is refused in one line, never trained as if it were not there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from breadth.core.results.grid import GridError, Job
from breadth.core.storage.store import run_key
from breadth.core.world.runs.recipes import FINETUNE, recipe_of
from breadth.core.world.runs.records import MAX_GROUP, Lockstep

# The fine-tuning settings `core.learning.lockstep` trains with (tests/test_lockstep.py reads each in its source):
# a setting the recipe gains is refused by `lockstep_groups` until it is named here and trained with there.
TRAINS_WITH = ("steps", "lr", "batch_size", "dropout", "weight_decay", "seed", "warmup")


@dataclass(frozen=True)
class Group:
    """Jobs trained together in lockstep, each under its key as a member of this group, in the stacked order."""

    jobs: tuple[Job, ...]  # keyed by the group (`run_key(..., lockstep=alone)`)
    alone: tuple[str, ...]  # the same jobs' keys as runs trained alone: what names the group

    def marker(self, index: int) -> Lockstep:
        """What the record of the group's run `index` says about how it was trained."""
        return Lockstep(self.alone, index)


AUTO_GROUP = 16  # the largest group chosen unless told: bench.lockstep_bench measured K = 8 and 16 alike (1.64-1.65x)


def group_size(jobs: Sequence[Job], workers: int) -> int | None:
    """The lockstep group size a sweep or a curve takes unless told: the largest K up to AUTO_GROUP (and the most
        seeds a cell has) that still forms at least one group per worker, so no worker waits while one trains K, evened
    out over those groups; None
        (each run alone) where that K is 1, or where lockstep cannot train the jobs (another recipe, a setting it
        lacks)."""
    try:
        sizes = [len(members) for members in _cells(jobs).values()]
    except GridError:
        return None
    largest = min(AUTO_GROUP, max(sizes, default=0))
    fits = [k for k in range(2, largest + 1) if sum(-(-n // k) for n in sizes) >= workers]  # groups per K
    if not fits:
        return None
    k = max(fits)  # then as even as the same groups allow: ten seeds in two groups are 5 + 5, not 9 + 1
    return max(-(-n // -(-n // k)) for n in sizes)


def lockstep_groups(jobs: Sequence[Job], k: int, base_hash: str) -> list[Group]:
    """`jobs` (keyed as runs alone) in groups of up to `k` seeds of one cell, cells in the order they first come,
    seeds in the order given; GridError (one line) for a `k` below 1 or a recipe lockstep cannot train."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_GROUP:
        raise GridError(f"--lockstep takes 1 to {MAX_GROUP} runs a group, not {k!r}")
    out = []
    for members in _cells(jobs).values():
        for start in range(0, len(members), k):
            chunk = members[start : start + k]
            alone = tuple(job.key for job in chunk)
            keyed = tuple(replace(job, key=_key(job, base_hash, alone)) for job in chunk)
            out.append(Group(keyed, alone))
    return out


def _cells(jobs: Sequence[Job]) -> dict[tuple, list[Job]]:
    """The jobs by cell (runs that differ only in their seed), cells in the order they first come; GridError (one
    line) for a recipe lockstep cannot train."""
    cells: dict[tuple, list[Job]] = {}
    for job in {job.key: job for job in jobs}.values():  # a job listed twice runs once
        made_by = recipe_of(job.settings).name
        if made_by != FINETUNE:
            raise GridError(f"--lockstep trains fine-tunes on demonstrations; the {made_by} recipe runs one at a time")
        if untrained := [f.name for f in fields(job.settings) if f.name not in TRAINS_WITH]:
            raise GridError(f"--lockstep does not train with {', '.join(untrained)} yet: run without --lockstep")
        cell = (job.cell.mix.spec(), json.dumps(job.cell.settings.to_dict(), sort_keys=True), job.held_out)
        cells.setdefault((*cell, job.environments), []).append(job)
    return cells


def _key(job: Job, base_hash: str, alone: tuple[str, ...]) -> str:
    """The key of `job` trained in the lockstep group `alone`."""
    return run_key(job.cell.mix.spec(), job.settings, job.held_out, base_hash, job.environments, lockstep=alone)
