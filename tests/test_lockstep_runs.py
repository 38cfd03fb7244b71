"""Sweeps and curves in lockstep (`--lockstep K`): deterministic groups of seeds of one cell, keys and records that
name the group (never taken for runs trained alone), resuming a group partly stored, one-line refusals, and a real
group trained twice giving identical records."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from dataclasses import replace

import pytest
from fake_runs import fake_group, ran

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.learning import experiment
from breadth.core.results.breadth_curve import CurvePlan, StoredCurve
from breadth.core.results.grid import Grid, GridError
from breadth.core.results.groups import group_size, lockstep_groups
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store
from breadth.core.sweeps import sweep
from breadth.core.sweeps.sweep import run_jobs
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.records import Lockstep, RunMeta
from breadth.core.world.runs.settings import FinetuneSettings, RewardSettings

POOL = tuple(f.name for f in where(form="infix", op="add", operands="3"))  # eight layouts of three numbers
CURVE = [
    "curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--held", "2",
    "--splits", "1", "--n", "1,2", "--seeds", "0-2", "--workers", "1",
]  # fmt: skip


def _grid(seeds=(0, 1, 2, 3, 4), settings=None) -> Grid:
    mixes = (Mix.of(add_2x2=4), Mix.of(add_3x1=4))
    return Grid(mixes, settings or FinetuneSettings(), (), seeds, 3)


def test_groups_hold_up_to_k_seeds_of_one_cell_in_seed_order_the_same_every_time():
    """Two cells on five seeds, K 2: each cell's seeds 0-1, 2-3 and 4 train together; the same jobs form the same
    groups and keys; a key names the group (not the run's key alone); more seeds change only a cell's last group."""
    jobs = _grid().jobs("b")
    groups = lockstep_groups(jobs, 2, "b")
    assert [[(j.cell.mix.spec(), j.seed) for j in g.jobs] for g in groups] == [
        [("add_2x2=4", 0), ("add_2x2=4", 1)],
        [("add_2x2=4", 2), ("add_2x2=4", 3)],
        [("add_2x2=4", 4)],
        [("add_3x1=4", 0), ("add_3x1=4", 1)],
        [("add_3x1=4", 2), ("add_3x1=4", 3)],
        [("add_3x1=4", 4)],
    ]
    assert lockstep_groups(jobs, 2, "b") == groups
    alone = {j.key for j in jobs}
    together = [j.key for g in groups for j in g.jobs]
    assert len(set(together)) == len(jobs) and not alone & set(together)
    assert all(g.alone == tuple(j.key for j in jobs if (j.cell, j.seed) in {(m.cell, m.seed) for m in g.jobs})
               for g in groups)  # fmt: skip
    more = lockstep_groups(_grid(seeds=tuple(range(6))).jobs("b"), 2, "b")
    changed = {j.key for g in more for j in g.jobs} ^ set(together)
    assert len(changed) == 2 * 3  # per cell: seed 4 alone, and seeds 4-5 together


@pytest.mark.parametrize(
    ("seeds", "workers", "k"),
    [
        (range(10), 2, 10),
        (range(10), 4, 5),
        (range(10), 6, 4),
        (range(40), 1, 14),
        (range(3), 4, 2),
        (range(3), 7, None),
        ((0,), 1, None),
    ],
)
def test_the_group_size_unless_told_is_the_largest_that_keeps_every_worker_busy(seeds, workers, k):
    """Two cells of ten seeds: one group each on two workers, groups of 5 on four (not 9 + 1), 4 + 3 + 3 on six;
    never more than 16 a group (forty seeds: 14 + 13 + 13);
    three seeds on seven workers (fewer groups than workers at any K of 2 or more) and one seed train alone."""
    assert group_size(_grid(seeds=tuple(seeds)).jobs("b"), workers) == k


def test_the_group_size_unless_told_is_none_for_a_recipe_lockstep_cannot_train():
    """The reward recipe trains alone unless `--lockstep` is given (which refuses it in one line)."""
    assert group_size(_grid(settings=RewardSettings()).jobs("b"), 1) is None


def test_lockstep_that_cannot_run_is_refused_in_one_line():
    """K below 1 and the reward recipe (lockstep trains fine-tunes on demonstrations) are GridErrors."""
    with pytest.raises(GridError, match="--lockstep takes 1 to"):
        lockstep_groups(_grid().jobs("b"), 0, "b")
    with pytest.raises(GridError, match="the reward recipe runs one at a time"):
        lockstep_groups(_grid(settings=RewardSettings()).jobs("b"), 2, "b")
    with pytest.raises(GridError, match="--lockstep takes 1 to"):
        CurvePlan(POOL, 2, 1, (1,), 30, (0,), FinetuneSettings(), lockstep=-1)


def test_a_lockstep_record_names_its_group_and_other_records_keep_their_form():
    """The marker goes through the record's JSON and names the run (`lockstep 2`); a run trained alone has none; a
    malformed one is MetadataError."""
    run = RunMeta("finetune", FinetuneSettings(), "add_2x2=4", 0, 3, {}, (1.0,))
    assert "lockstep" not in run.to_dict() and RunMeta.from_dict(run.to_dict()).lockstep is None
    marked = replace(run, lockstep=Lockstep(("a" * 20, "b" * 20), 1))
    assert RunMeta.from_dict(json.loads(json.dumps(marked.to_dict()))) == marked
    assert run.settings_note == "" and marked.settings_note == "lockstep 2"  # how tables and the app name the run
    for bad in ({"group": "ab", "index": 0}, {"group": ["a"], "index": 1}, {"group": [], "index": 0}, [1]):
        with pytest.raises(MetadataError, match="lockstep"):
            RunMeta.from_dict(run.to_dict() | {"lockstep": bad})


def test_a_lockstep_curve_is_another_curve_and_a_plan_alone_keeps_its_name():
    """A plan of runs trained alone stores no `lockstep` (its stored name is unchanged); one in lockstep reads back
    as itself, is another curve, and keys every run apart from the plan alone's."""
    alone = CurvePlan(POOL, 2, 2, (1, 2), 30, (0, 1, 2), FinetuneSettings())
    together = replace(alone, lockstep=2)
    assert "lockstep" not in alone.to_dict() and CurvePlan.from_dict(together.to_dict()) == together
    assert StoredCurve(alone, "x", "b").name != StoredCurve(together, "x", "b").name
    keys = [j.key for j, _, _ in together.jobs("b")]
    assert len(set(keys)) == len(keys) and not set(keys) & {j.key for j, _, _ in alone.jobs("b")}
    assert [(s, n) for _, s, n in together.jobs("b")] == [(s, n) for _, s, n in alone.jobs("b")]
    assert [len(g.jobs) for g in together.groups("b")] == [2, 1] * 6  # seeds 0-1 and 2 of each split x N
    with pytest.raises(GridError, match="wrong kind"):
        CurvePlan.from_dict(alone.to_dict() | {"lockstep": 0})


def test_a_lockstep_curve_runs_groups_resumes_and_is_never_taken_for_one_trained_alone(tmp_path, monkeypatch, capsys):
    """`--lockstep 2` on three seeds: each point's seeds 0-1 and 2 train as groups, the output says so, the records
    name their groups; the same command runs nothing; the curve alone runs all nine again; a group missing one run
    trains again whole and stores that run only."""
    log, store = tmp_path / "log", tmp_path / "s.sqlite"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    argv = [*CURVE, "--store", str(store)]
    assert main([*argv, "--lockstep", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "trained in lockstep: 6 groups of up to 2 seeds" in out and "in lockstep (up to 2 a group)" in out
    assert "ran 9, already stored 0" in out and sorted(ran(log)) == ["group 1"] * 3 + ["group 2"] * 3
    with Store(store) as s:
        runs = s.runs()
    assert len(runs) == 9 and all(r.run.lockstep is not None for r in runs)
    assert main([*argv, "--lockstep", "2"]) == 0 and len(ran(log)) == 6
    assert "ran 0, already stored 9" in " ".join(capsys.readouterr().out.split())
    assert main([*argv, "--alone"]) == 0  # trained alone: nothing of the lockstep curve counts as stored
    out = " ".join(capsys.readouterr().out.split())
    assert "each run trained alone" in out and "ran 9, already stored 0" in out and ran(log)[6:] == ["alone"] * 9
    pair = next(r for r in runs if len(r.run.lockstep.group) == 2)
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA foreign_keys=ON")  # its scores go with it
        db.execute("DELETE FROM runs WHERE key = ?", (pair.key,))
    assert main([*argv, "--lockstep", "2"]) == 0
    assert "ran 1, already stored 8" in " ".join(capsys.readouterr().out.split()) and ran(log)[15:] == ["group 2"]


def test_a_curve_or_sweep_unless_told_trains_seeds_together_and_alone_where_it_must(tmp_path, monkeypatch, capsys):
    """No flag: the curve's three seeds of each point train as one group (one worker), and say so; a sweep of the
    reward recipe (which lockstep cannot train) and `--alone` train each run by itself."""
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    assert main([*CURVE, "--store", str(tmp_path / "a.sqlite")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "trained in lockstep: 3 groups of up to 3 seeds" in out and ran(log) == ["group 3"] * 3
    assert main([*CURVE, "--alone", "--store", str(tmp_path / "b.sqlite")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "each run trained alone" in out and ran(log)[3:] == ["alone"] * 9
    reward = ["sweep", "--mix", "add_2x2=4", "--recipe", "reward", "--seeds", "0-2", "--workers", "1"]
    assert main([*reward, "--store", str(tmp_path / "c.sqlite")]) == 0
    assert "lockstep" not in capsys.readouterr().out and ran(log)[12:] == ["alone"] * 3


def _diverges_first(spec: dict) -> dict:
    """A worker's group whose first run diverged."""
    answer = fake_group(os.devnull, spec)
    answer["runs"][0] = {"error": "Diverged: the loss became nan at step 3; try a lower learning rate"}
    return answer


def test_a_run_that_diverges_in_a_group_fails_alone(tmp_path, monkeypatch):
    """The group's other run is stored; the diverged one is a failure in one line, and the sweep goes on."""
    monkeypatch.setattr(sweep, "_run_job", lambda: _diverges_first)
    base_hash = weights_hash(BASE)
    plan = CurvePlan(POOL, 2, 1, (1,), 30, (0, 1), FinetuneSettings(), lockstep=2)
    with Store(tmp_path / "s.sqlite") as store:
        outcome = run_jobs(plan.groups(base_hash), store, BASE, base_hash, "test", workers=1)
    assert outcome.ran == 2 and len(outcome.failed) == 2  # two points (N 1 and the ceiling), seeds 0-1 each
    assert all(job.seed == 0 and why.startswith("Diverged: the loss became nan") for job, why in outcome.failed)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([*CURVE, "--lockstep", "0"], "--lockstep: expected a positive number"),
        ([*CURVE, "--lockstep", "x"], "--lockstep: expected a whole number"),
        (["sweep", "--mix", "add_2x2=4", "--recipe", "reward", "--lockstep", "2"], "reward recipe runs one at a"),
    ],
)
def test_bad_lockstep_flags_are_one_line_and_exit_2(argv, says, capsys, tmp_path):
    """K below 1, not a number, or with the reward recipe: one line, exit 2, and no store made."""
    store = tmp_path / "s.sqlite"
    assert main([*argv, "--store", str(store)]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and not store.exists()


def test_a_sweep_in_lockstep_groups_seeds_of_each_cell(tmp_path, monkeypatch, capsys):
    """`breadth sweep --lockstep 2` on three seeds: each cell's seeds 0-1 and 2 are two groups, said in its header."""
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    argv = ["sweep", "--mix", "add_2x2=4", "--seeds", "0-2", "--workers", "1", "--store", str(tmp_path / "s")]
    assert main([*argv, "--lockstep", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "in lockstep: 2 groups of up to 2 seeds of one cell" in out and "ran 3, already stored 0" in out
    assert sorted(ran(log)) == ["group 1", "group 2"]


def test_the_same_lockstep_group_twice_gives_identical_records(one_thread):
    """A real group of two tiny runs (dropout on) trained twice on this machine: the same records, seconds aside,
    each naming its group and place."""
    settings = FinetuneSettings(steps=4, dropout=0.1)
    spec = {
        "runs": [
            {"mix": "add_2x2=6", "settings": replace(settings, seed=seed).to_dict(), "held_out": 2,
             "families": ["add_2x2", "sub_2x2"]}
            for seed in (0, 1)
        ],
        "group": ["k0", "k1"],
        "base_hash": weights_hash(BASE),
        "base_path": str(BASE),
    }  # fmt: skip

    def records() -> list[dict]:
        out = experiment.run_group(spec)["runs"]
        return [{k: v for k, v in r["record"].items() if not k.endswith("seconds")} for r in out]

    first = records()
    assert first == records() and first[0]["losses"] != first[1]["losses"]
    assert [r["lockstep"] for r in first] == [{"group": ["k0", "k1"], "index": 0}, {"group": ["k0", "k1"], "index": 1}]
    assert set(first[0]["scores"]) == {"add_2x2", "sub_2x2"}
