"""A breadth curve's matched controls as flags (issue 33): the ceiling trained at the largest N's steps, every run at
the largest N's steps, and the same demonstrations in all split over a run's environments; each stored with the plan
only when on (a plan without them keeps its name), refused in one line where it cannot run."""

from __future__ import annotations

import functools

import pytest
from fake_runs import fake_group

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.breadth_curve import CEILING, CurvePlan, StoredCurve
from breadth.core.results.grid import GridError
from breadth.core.storage.store import Store
from breadth.core.sweeps import sweep
from breadth.core.world.environments.registry import where
from breadth.core.world.runs.settings import FinetuneSettings

POOL = tuple(f.name for f in where(operands="3", digits="2"))  # two-digit numbers: pools of thousands of sums


def _plan(**changes) -> CurvePlan:
    fields = dict(pool=POOL, held=2, splits=2, sizes=(1, 2, 4), demos=30, seeds=(0,), settings=FinetuneSettings())
    return CurvePlan(**(fields | changes))


def _steps(plan: CurvePlan) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for job, _, n in plan.jobs("b"):
        out.setdefault(n, set()).add(job.settings.steps)
    return out


def test_the_budget_gives_the_ceiling_or_every_run_the_largest_ns_steps():
    """Own budgets: N=1 and 2 at 400, N=4 686, the ceiling (2 environments) 400; `ceiling`: the ceiling at 686;
    `largest`: every run at 686. The runs' keys differ from the own-budget plan's only where the steps do."""
    own, ceiling, largest = _plan(), _plan(budget="ceiling"), _plan(budget="largest")
    assert _steps(own) == {1: {400}, 2: {400}, 4: {686}, CEILING: {400}}
    assert _steps(ceiling) == {1: {400}, 2: {400}, 4: {686}, CEILING: {686}}
    assert _steps(largest) == {1: {686}, 2: {686}, 4: {686}, CEILING: {686}}
    same = {j.key for j, _, _ in own.jobs("b")} & {j.key for j, _, _ in ceiling.jobs("b")}
    assert len(same) == len(own.jobs("b")) - 2  # the two splits' ceilings are other runs


def test_total_demonstrations_are_split_over_a_runs_environments():
    """`total_demos` 120: N=1 trains on 120 demonstrations of its one environment, N=4 on 30 of each, the ceiling
    (2 held out) on 60 of each; each run then takes about the same steps (each demonstration seen as often)."""
    plan = _plan(total_demos=120)
    counts = {n: {c for _, c in job.cell.mix.counts} for job, _, n in plan.jobs("b")}
    assert counts == {1: {120}, 2: {60}, 4: {30}, CEILING: {60}}
    assert set().union(*_steps(plan).values()) == {686}


def test_controls_are_stored_only_when_on_and_read_back():
    """A plan at its own budget with --demos each writes neither key (its stored name is unchanged); one with them
    reads back as itself; a stored default value, or a value of another kind, is refused."""
    plain, matched = _plan(), _plan(budget="largest", total_demos=120)
    assert not {"budget", "total_demos"} & set(plain.to_dict())
    assert CurvePlan.from_dict(matched.to_dict()) == matched
    assert StoredCurve(plain, "x", "b").name != StoredCurve(matched, "x", "b").name
    for bad in ({"budget": "own"}, {"budget": 3}, {"total_demos": 0}, {"total_demos": "120"}):
        with pytest.raises(GridError, match="wrong kind"):
            CurvePlan.from_dict(plain.to_dict() | bad)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"budget": "matched"}, "--budget is one of own, ceiling, largest"),
        ({"total_demos": 3}, "--total-demos 3 gives each of a run's environments at least one demonstration only"),
    ],
)
def test_controls_that_cannot_run_are_refused(changes, says):
    """An unknown budget, and fewer demonstrations in all than the largest run has environments, are GridErrors."""
    with pytest.raises(GridError, match=says):
        _plan(**changes)


def test_breadth_curve_says_which_control_it_runs(tmp_path, monkeypatch, capsys):
    """`--budget ceiling --total-demos 120`: the header names both; `--total-demos 1` is one line, exit 2."""
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(tmp_path / "log")))
    argv = ["curve", "--where", "operands=3", "--where", "digits=2", "--held", "2", "--n", "1,4", "--seeds", "0"]
    argv += ["--alone", "--workers", "1", "--store", str(tmp_path / "s.sqlite")]
    assert main([*argv, "--budget", "ceiling", "--total-demos", "120"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "120 demonstrations in all a run, the ceiling at N=4's steps" in out
    with Store(tmp_path / "s.sqlite") as store:
        assert {r.run.settings.steps for r in store.runs()} == {686}
    assert main([*argv, "--total-demos", "1"]) == USAGE_ERROR
    assert "--total-demos 1 gives" in capsys.readouterr().err
