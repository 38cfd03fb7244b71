"""Designed hold-outs (`breadth curve --hold DIM=VALUE [--vary DIM]`, issue 33): every environment at a coordinate
held out in every split, training on the rest or only on what differs from them along chosen dimensions; the ceiling
and the largest N are one run per seed, never counted once per split; one-line refusals."""

from __future__ import annotations

import functools

import pytest
from fake_runs import fake_group

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.breadth_curve import CEILING, CurvePlan, StoredCurve
from breadth.core.results.curve_points import points, warnings
from breadth.core.results.grid import GridError
from breadth.core.results.splits import designed
from breadth.core.storage.store import StoredRun
from breadth.core.sweeps import sweep
from breadth.core.world.environments.registry import by_name, coordinates_of, where
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

THREE = tuple(f.name for f in where(operands="3"))  # 40 environments
POSTFIX_SUB = ("form=postfix", "op=sub")


def test_hold_names_every_environment_at_the_coordinates_and_vary_chooses_the_training_ones():
    """Postfix subtractions: the five held out, 35 to train on; along the call's form alone, the five infix
    subtractions of the same digits; along the operation alone, the five postfix additions; patterns match values."""
    held, rest = designed(THREE, POSTFIX_SUB, ())
    assert held == ["1s1s1_postfix", "2s1s1_postfix", "2s1s2_postfix", "2s2s1_postfix", "2s2s2_postfix"]
    assert len(rest) == 35 and not set(held) & set(rest)
    assert designed(THREE, POSTFIX_SUB, ("form",))[1] == ["sub_3x1", "sub_3x2", "2s1s1", "2s1s2", "2s2s1"]
    assert all(n.endswith("_postfix") and "a" in n for n in designed(THREE, POSTFIX_SUB, ("op",))[1])
    pattern = designed(THREE, ("digits=2.?.1",), ())[0]  # a shell pattern: both middle widths
    alternatives = designed(THREE, ("digits=2.1.1", "digits=2.2.1"), ())[0]  # one dimension's values: either
    assert pattern == alternatives and len(pattern) == 12  # 4 operations x 2 infix layouts, 2 x 2 postfix
    assert all(coordinates_of(by_name(n))["digits"] in ("2.1.1", "2.2.1") for n in pattern)


@pytest.mark.parametrize(
    ("hold", "vary", "says"),
    [
        (("form=sideways",), (), "holds out none of the pool"),
        (POSTFIX_SUB, ("digits",), "leaves nothing to train on"),
        (("colour=red",), (), "--hold takes DIM=VALUE on one of operands, digits, op, form"),
        (("form",), (), "--hold takes DIM=VALUE"),
        (POSTFIX_SUB, ("size",), "--vary takes dimensions of"),
    ],
)
def test_a_hold_that_cannot_be_is_one_line(hold, vary, says):
    """No environment at the coordinates, nothing left to train on, an unknown dimension or a malformed condition."""
    with pytest.raises(GridError, match=says):
        designed(THREE, hold, vary)


def _plan(**changes) -> CurvePlan:
    fields = dict(pool=THREE, held=5, splits=3, sizes=(1, 4, 35), demos=30, seeds=(0, 1), settings=FinetuneSettings())
    return CurvePlan(**(fields | {"hold": POSTFIX_SUB} | changes))


def test_a_designed_plan_holds_the_same_set_out_and_runs_its_ceiling_and_largest_n_once_per_seed():
    """Every split holds out the five; the splits' training orders differ; per seed: 3 splits x N 1 and 4, then N=35
    (all 35: the same run whichever split) and the ceiling once each, so no run is listed twice."""
    plan = _plan()
    assert all(plan.split(s)[0] == plan.split(0)[0] for s in range(3))
    assert len({tuple(plan.split(s)[1]) for s in range(3)}) == 3
    jobs = plan.jobs("b")
    assert len(jobs) == 2 * (3 * 2 + 2) and len({j.key for j, _, _ in jobs}) == len(jobs)
    assert sorted((s, n) for j, s, n in jobs if j.seed == 0 and n in (35, CEILING)) == [(0, CEILING), (0, 35)]


def test_its_points_judge_every_split_against_the_one_ceiling_and_say_where_one_draw_is_all():
    """Made-up runs: held out 10% at N=1 on split 0 and 40% elsewhere, the ceiling 60%: every split's pairs are
    judged against the one ceiling (4 of 6 above half of it); the ceiling and N=35 are one draw, and the warning names
    N=35 only (the ceiling is one by design)."""
    plan = _plan()
    runs = {}
    for job, s, n in plan.jobs("b"):
        rate = {CEILING: 60, 35: 50}.get(n, 10 if s == 0 else 40)
        held = plan.split(s)[0]
        scores = {name: HeldOutScore(name, rate if name in held else 90, 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "curve")
    found = {p.n: p for p in points(plan, runs, "b")}
    assert found[1].transfer == pytest.approx(4 / 6) and found[1].splits == 3
    assert found[CEILING].pairs == 2 and found[CEILING].splits == 1 and found[35].splits == 1
    said = [w for w in warnings(list(found.values())) if "one draw" in w]
    assert len(said) == 1 and said[0].startswith("N=35:")


def test_a_designed_plan_is_stored_as_such_and_refuses_what_contradicts_it():
    """hold and vary go through the plan's JSON (as lists) only when given; --vary without --hold, --folds with
    --hold, and a held count that is not the hold's are GridErrors."""
    plan = _plan(vary=("form",), sizes=(1, 5))
    assert plan.to_dict()["hold"] == list(POSTFIX_SUB) and CurvePlan.from_dict(plan.to_dict()) == plan
    plain = _plan(hold=(), held=5)
    assert not {"hold", "vary"} & set(plain.to_dict())
    assert StoredCurve(plain, "x", "b").name != StoredCurve(plan, "x", "b").name
    for changes, says in (
        ({"hold": (), "vary": ("form",)}, "--vary chooses the training environments of a designed hold-out"),
        ({"folds": True}, "--folds draws the held-out sets and --hold names them"),
        ({"held": 4}, "names the held-out environments: --held cannot count them"),
    ):
        with pytest.raises(GridError, match=says):
            _plan(**changes)


def test_breadth_curve_hold_says_what_it_holds_and_refuses_held_beside_it(tmp_path, monkeypatch, capsys):
    """`--hold form=postfix --hold op=sub --vary form`: the header names the design and what it trains on; with
    --held as well it is one line and exit 2, before a store is made."""
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(tmp_path / "log")))
    argv = ["curve", "--where", "operands=3", "--hold", "form=postfix", "--hold", "op=sub", "--n", "1,5"]
    argv += ["--seeds", "0", "--alone", "--workers", "1"]
    assert main([*argv, "--vary", "form", "--store", str(tmp_path / "s.sqlite")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "5 held out by design (form=postfix op=sub), training on 5 that differ from them along form alone" in out
    assert "+ one ceiling" in out
    store = tmp_path / "t.sqlite"
    assert main([*argv, "--held", "4", "--store", str(store)]) == USAGE_ERROR
    assert "drop --held 4" in capsys.readouterr().err and not store.exists()
