"""Stand-ins for a sweep's workers in tests: a run or a lockstep group answered at once with made-up scores, and
what each was asked to train (the tests of lockstep groups and of a curve's splits read it)."""

from __future__ import annotations

import os

from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.recipes import FINETUNE, recipe
from breadth.core.world.runs.records import Lockstep, RunMeta


def fake_group(log: str, spec: dict, solved: int = 80) -> dict:
    """Stands in for a worker: a job alone or a group (notes `group K` or `alone` in `log`); every environment it
    names (a sweep's: add_2x2) solved `solved` of 100, a group's records marked with their places."""
    specs = spec.get("runs", [spec])
    with open(log, "a") as f:
        f.write(f"{os.getpid()} {f'group {len(specs)}' if 'runs' in spec else 'alone'}\n")
    out = []
    for index, one in enumerate(specs):
        made_by = recipe(one.get("recipe", FINETUNE))
        settings = made_by.settings.from_dict(one["settings"])
        scores = {name: HeldOutScore(name, solved, 100, {}) for name in one.get("families", ["add_2x2"])}
        marker = Lockstep(tuple(spec["group"]), index) if "runs" in spec else None
        run = RunMeta(
            made_by.name, settings, one["mix"], settings.seed, one["held_out"], scores, (1.0,), lockstep=marker
        )
        out.append({"record": run.to_dict()})
    return {"runs": out, "versions": {}} if "runs" in spec else out[0] | {"versions": {}}


def ran(path) -> list[str]:
    """What the stand-ins were asked, in order: `alone` or `group K` for each call."""
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []
