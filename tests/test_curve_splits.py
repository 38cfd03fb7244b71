"""How a breadth curve splits its pool: `--folds` holds every environment out as often as every other, in disjoint
sets round after round, never one set twice, and is stored with the plan (a plan without it keeps its name); the
random splits the shipped curves were drawn with are unchanged."""

from __future__ import annotations

import functools
from collections import Counter

import pytest
from fake_runs import fake_group

from breadth.core.cli.main import main
from breadth.core.results.breadth_curve import CurvePlan, StoredCurve
from breadth.core.results.grid import GridError
from breadth.core.results.splits import fold_splits, random_splits
from breadth.core.storage.store import Store
from breadth.core.sweeps import sweep
from breadth.core.world.environments.registry import where
from breadth.core.world.runs.settings import FinetuneSettings

THREE = tuple(f.name for f in where(operands="3"))  # the three-number pool: 40 environments


def test_folds_hold_every_environment_out_equally_often_in_disjoint_sets():
    """40 environments, 8 held out, 10 splits: splits 1-5 are disjoint and cover the pool, as are 6-10; every
    environment is held out exactly twice; no set repeats; each split trains on the rest only."""
    splits = fold_splits(THREE, 8, 10)
    for first in (0, 5):
        held = [name for h, _ in splits[first : first + 5] for name in h]
        assert sorted(held) == sorted(THREE)
    assert set(Counter(name for h, _ in splits for name in h).values()) == {2}
    assert len({frozenset(h) for h, _ in splits}) == 10
    assert all(sorted(h + rest) == sorted(THREE) and len(h) == 8 for h, rest in splits)
    assert fold_splits(THREE, 8, 4) == splits[:4]  # more splits keep the first ones


def test_folds_that_do_not_divide_the_pool_stay_within_one():
    """12 environments, 5 held out, 7 splits: 35 held-out places over 12 environments, each held out 2 or 3 times,
    never twice in one split."""
    pool = THREE[:12]
    splits = fold_splits(pool, 5, 7)
    counts = Counter(name for h, _ in splits for name in h)
    assert set(counts) == set(pool) and max(counts.values()) - min(counts.values()) <= 1
    assert all(len(set(h)) == 5 for h, _ in splits)


def test_random_splits_are_those_the_shipped_curves_were_drawn_with():
    """The first random split of the three-number pool is what it always was (the shipped store's runs name it):
    19 of the 40 environments held out over its 3 splits, `2s2s2_postfix` in all three."""
    splits = random_splits(THREE, 8, 3)
    held = Counter(name for h, _ in splits for name in h)
    assert len(held) == 19 and held["2s2s2_postfix"] == 3


def test_a_plan_of_folds_is_stored_as_such_and_a_plan_without_keeps_its_name():
    """`folds` goes through the plan's JSON only when on; a stored `folds` of another value is refused."""
    plain = CurvePlan(THREE, 8, 3, (1, 2), 30, (0,), FinetuneSettings())
    folds = CurvePlan(THREE, 8, 3, (1, 2), 30, (0,), FinetuneSettings(), folds=True)
    assert "folds" not in plain.to_dict() and folds.to_dict()["folds"] is True
    assert CurvePlan.from_dict(folds.to_dict()) == folds and CurvePlan.from_dict(plain.to_dict()) == plain
    assert StoredCurve(plain, "x", "b").name != StoredCurve(folds, "x", "b").name
    assert folds.split(1) == fold_splits(THREE, 8, 3)[1] and plain.split(1) == random_splits(THREE, 8, 3)[1]
    with pytest.raises(GridError, match="wrong kind"):
        CurvePlan.from_dict(plain.to_dict() | {"folds": False})


def test_breadth_curve_folds_trains_on_the_folds_and_says_so(tmp_path, monkeypatch, capsys):
    """`breadth curve --folds`: the output names the folds, and the ceiling runs train on the fold's held-out sets."""
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    argv = ["curve", "--where", "operands=3", "--held", "8", "--splits", "5", "--n", "1", "--seeds", "0"]
    assert main([*argv, "--folds", "--alone", "--workers", "1", "--store", str(tmp_path / "s.sqlite")]) == 0
    assert "5 folds x N 1" in " ".join(capsys.readouterr().out.split())
    with Store(tmp_path / "s.sqlite") as store:
        ceilings = [r.run.mix for r in store.runs() if len(r.run.mix.split(",")) == 8]
    held = [name for mix in ceilings for name in (part.split("=")[0] for part in mix.split(","))]
    assert sorted(held) == sorted(THREE)  # five disjoint folds of eight: every environment held out once
