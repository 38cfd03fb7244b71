"""The breadth curve (Cobbe's protocol): seeded splits of a pool of environments, nested training subsets, a budget
that grows with N, a ceiling per split, every run scored on exactly its training and held-out environments, the
points read back from the store with the share of pairs that transfer, and `breadth curve` resuming from the store."""

from __future__ import annotations

import functools
import json
import math
import os

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.breadth_curve import CEILING, PLATE_PASSES, CurvePlan, StoredCurve
from breadth.core.results.curve_points import by_environment, by_neighbour, points, warnings
from breadth.core.results.grid import GridError
from breadth.core.storage.store import Store, StoredRun
from breadth.core.sweeps import sweep
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

POOL = tuple(f.name for f in where(form="infix", op="add", operands="3"))  # eight layouts of three numbers


def plan(**changes) -> CurvePlan:
    fields = {
        "pool": POOL,
        "held": 2,
        "splits": 3,
        "sizes": (1, 2, 4, 8),
        "demos": 30,
        "seeds": (0, 1),
        "settings": FinetuneSettings(),
    }
    return CurvePlan(**(fields | changes))


def test_splits_are_seeded_disjoint_and_nested_subsets_take_the_same_order():
    """A split holds out the same environments every time; training subsets are prefixes of one order, never
    touching the held-out ones; different splits hold out different environments."""
    p = plan()
    held, order = p.split(0)
    assert p.split(0) == (held, order) and len(held) == 2 and not set(held) & set(order)
    assert sorted(held + order) == sorted(POOL)
    assert len({tuple(p.split(s)[0]) for s in range(3)}) > 1
    assert p.sizes_of(0) == [1, 2, 4, 6]  # 8 is more than the split leaves: capped at its 6


def test_the_budget_shows_each_demonstration_as_often_as_the_plate_does():
    """The plate's 70 demonstrations take its 400 steps; N environments of 30 take proportionally more, never fewer
    than min_steps."""
    p = plan(demos=70, min_steps=1)
    assert p.steps(1) == 400 and PLATE_PASSES == pytest.approx(400 * 8 / 70)
    q = plan()
    assert q.steps(1) == 400 and q.steps(8) == 1372 and q.steps(16) > 2 * q.steps(8) - 2


def test_every_run_is_scored_on_its_training_and_held_out_environments_and_a_ceiling_per_split():
    """Jobs: every split x N and a ceiling, per seed; each names the families it is scored on, and its key differs
    from a plain sweep's of the same mix (the families are part of it)."""
    p = plan()
    jobs = p.jobs("b")
    assert len(jobs) == 2 * 3 * (4 + 1)
    for job, s, n in jobs:
        held, order = p.split(s)
        trained = [name for name, _ in job.cell.mix.counts]
        assert trained == (sorted(held, key=POOL.index) if n == CEILING else sorted(order[:n], key=POOL.index))
        assert set(job.environments) == set(trained) | set(held)
        assert job.settings.steps == p.steps(len(trained)) and job.settings.seed in (0, 1)
    assert len({job.key for job, _, _ in jobs}) == len(jobs)


def test_points_read_the_store_with_intervals_the_gap_and_the_share_that_transfer():
    """Scores made up per (split, seed): the ceiling row, the gap, and the share of pairs above half their ceiling
    (a pair whose ceiling is 0 cannot be judged and is left out)."""
    p = plan(sizes=(1, 4), splits=2)
    runs = {}
    for job, s, n in p.jobs("b"):
        held, _ = p.split(s)
        rate = {CEILING: 90, 1: 10, 4: 60}[n] if job.seed == 0 else {CEILING: 0, 1: 0, 4: 50}[n]
        scores = {name: HeldOutScore(name, rate if name in held else 95, 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "curve")
    found = {pt.n: pt for pt in points(p, runs, "b")}
    assert list(found) == [1, 4, CEILING] and found[1].pairs == 4
    assert found[1].train[0] == pytest.approx(0.95) and found[1].held[0] == pytest.approx(0.05)
    assert found[4].gap[0] == pytest.approx(0.95 - 0.55)
    assert found[1].transfer == 0.0 and found[4].transfer == 1.0  # seed 1's ceiling is 0: not judged
    assert found[CEILING].transfer is None
    assert any("ceiling is 45%" in w for w in warnings(list(found.values())))
    ceiling = found[CEILING].held  # both splits at 45%: their means agree, so the interval is the mean itself
    assert ceiling == pytest.approx((0.45, 0.45, 0.45)) and found[1].splits == 2
    assert all(-1.0 <= x <= 1.0 for pt in found.values() for x in pt.gap)


def _held_by_split(p: CurvePlan, rate_of) -> dict:
    """Stored runs of plan `p` whose held-out environments score `rate_of(split, seed, n)` %, training ones 95%."""
    runs = {}
    for job, s, n in p.jobs("b"):
        held, _ = p.split(s)
        rate = rate_of(s, job.seed, n)
        scores = {name: HeldOutScore(name, rate if name in held else 95, 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "curve")
    return runs


def test_intervals_take_the_split_as_the_unit_not_the_split_x_seed_pair():
    """Three splits whose ten seeds all agree (40, 50, 60% held out): the interval is the t interval of the three
    split means (50 +- 4.30 x 5.77 = [25-75]), not that of 30 pairs as if independent ([47-53]); one split is
    within [0-100] clamped, and the gap's interval clusters alike."""
    p = plan(sizes=(1,), splits=3, seeds=tuple(range(10)))
    found = {pt.n: pt for pt in points(p, _held_by_split(p, lambda s, seed, n: 40 + 10 * s), "b")}
    low, high = found[1].held[1:]
    assert found[1].held[0] == pytest.approx(0.5) and found[1].splits == 3 and found[1].pairs == 30
    assert low == pytest.approx(0.5 - 4.303 * 0.1 / math.sqrt(3), abs=1e-3) and high == pytest.approx(1 - low)
    assert found[1].gap[1] == pytest.approx(0.95 - high) and found[1].gap[2] == pytest.approx(0.95 - low)
    assert not any("one split" in w for w in warnings(list(found.values())))


def test_one_split_has_intervals_over_its_seeds_and_says_so():
    """With one split nothing clusters: the interval is over its seeds (10 and 20% on alternate seeds), and the
    curve warns that it says nothing of another draw."""
    p = plan(sizes=(1,), splits=1, seeds=tuple(range(4)))
    found = {pt.n: pt for pt in points(p, _held_by_split(p, lambda s, seed, n: 10 + 10 * (seed % 2)), "b")}
    assert found[1].splits == 1 and 0.0 < found[1].held[1] < 0.15 < found[1].held[2] < 0.3
    assert any(w.startswith("N=1: one draw of training environments") for w in warnings(list(found.values())))


def _fake_job(log: str, spec: dict) -> dict:
    """Stands in for a worker's run: every environment it is scored on solved 80 of 100; notes the run in `log`."""
    settings = FinetuneSettings.from_dict(spec["settings"])
    with open(log, "a") as f:
        f.write(f"{os.getpid()} {spec['mix']}\n")
    scores = {name: HeldOutScore(name, 80, 100, {}) for name in spec["families"]}
    record = RunMeta("finetune", settings, spec["mix"], settings.seed, spec["held_out"], scores, (1.0,), 1.0)
    return {"record": record.to_dict(), "versions": {}}


def test_breadth_curve_runs_what_the_store_lacks_and_resumes(tmp_path, monkeypatch, capsys):
    """The command runs every job once, prints the curve and writes its JSON; run again, it runs nothing."""
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_fake_job, str(log)))
    argv = [
        "curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--held", "2",
        "--splits", "2", "--n", "1,2", "--seeds", "0", "--workers", "1", "--json", str(tmp_path / "c.json"),
    ]  # fmt: skip
    assert main(argv) == 0
    assert len(log.read_text().splitlines()) == 2 * 3
    written = json.loads((tmp_path / "c.json").read_text())
    rows = written["points"]
    assert [r["n"] for r in rows] == [1, 2, CEILING] and rows[0]["held"][0] == pytest.approx(0.8)
    held = {r["environment"] for r in written["by_environment"]}
    assert held and held <= set(POOL) and all(r["runs"] in (1, 2) for r in written["by_environment"])  # 2 splits
    assert {r["dimension"] for r in written["by_dimension"]} and all(r["pairs"] for r in written["by_dimension"])
    assert main(argv) == 0
    assert len(log.read_text().splitlines()) == 6 and "ran 0, already stored 6" in capsys.readouterr().out
    with Store(read_only=True) as store:  # the plan is in the store once, for the app's curve view
        [(name, data, _)] = store.curves()
    curve = StoredCurve.from_dict(data)
    assert curve.name == name and curve.what == "form=infix op=add operands=3"
    assert curve.plan.splits == 2 and curve.plan.sizes == (1, 2) and curve.plan.held == 2


def test_a_stored_plan_reads_back_as_it_was_written_and_names_its_base():
    """A plan through the store's JSON is the same plan (same jobs, same keys); another base is another curve."""
    p = plan(passes=60.0, min_steps=300, settings=FinetuneSettings(lr=1e-3, dropout=0.1))
    curve = StoredCurve(p, "operands=3", "b" * 20)
    again = StoredCurve.from_dict(json.loads(json.dumps(curve.to_dict())))
    assert again == curve and [j.key for j, _, _ in again.plan.jobs("x")] == [j.key for j, _, _ in p.jobs("x")]
    assert StoredCurve(p, "operands=3", "c" * 20).name != curve.name


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"pool": "a2x2"}, "not lists"),
        ({"pool": ["breadth-nope"]}, "not registered here"),
        ({"splits": True}, "wrong kind"),
        ({"passes": float("inf")}, "--passes takes a number above 0"),
        ({"passes": 0}, "--passes takes a number above 0"),
        ({"passes": float("nan")}, "--passes takes a number above 0"),
        ({"held_out": 10**9}, "--held-out-sums takes 1 to 100,000, not 1000000000"),
        ({"min_steps": 10**6}, "--min-steps takes 1 to 100,000"),
        ({"passes": 1e5}, "would take 2,250,000 steps: more than 100,000"),
        ({"seeds": [0, 0]}, "--seeds: 0 appears twice"),
        ({"sizes": [1, 2, 1]}, "--n: 1 appears twice"),
        ({"seeds": list(range(1000)), "splits": 1000}, "more than 100,000 runs"),
        ({"settings": {"lr": 9.0}}, "settings"),
        ({"extra": 1}, "unexpected shape"),
    ],
)
def test_a_stored_plan_breadth_did_not_write_is_one_line(change, says):
    """Plans read from a store are checked before any run is listed: a bad one is one GridError line."""
    data = plan().to_dict() | change
    with pytest.raises(GridError, match=says):
        StoredCurve.from_dict({"plan": data, "what": "x", "base": "y"})


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--held", "8"], "hold out 1 to 7"),
        (["--n", "1,x"], "--n takes whole numbers"),
        (["--n", "0"], "N counts training environments"),
        (["--where", "digits=7"], "no environment at"),  # with operands=3 below: an empty pool
        (["--steps", "10"], "unrecognized arguments: --steps"),  # the budget sets the steps
        (["--passes", "nan"], "--passes takes a number above 0"),
        (["--passes", "inf"], "--passes takes a number above 0"),
        (["--passes", "0"], "--passes takes a number above 0"),
        (["--passes", "-1"], "--passes takes a number above 0"),
        (["--passes", "100000"], "the largest run (4 environments x 30 demonstrations, each seen 100000 times) would"),
        (["--passes", "1e308", "--demos", "1000000"], "would take endless steps: more than 100,000"),
        (["--held-out-sums", "1000000000"], "--held-out-sums takes 1 to 100,000, not 1000000000"),
        (["--min-steps", "1000000"], "--min-steps takes 1 to 100,000, not 1000000"),
        (["--seeds", "0-99999", "--n", "1", "--splits", "1"], "the plan asks for 200,000 runs (100,000 seeds x 1 "),
        (["--seeds", "0,0", "--lockstep", "2"], "0 appears twice"),
        (["--group-size", "4"], "unrecognized arguments: --group-size"),  # the curve fine-tunes on demonstrations
    ],
)
def test_a_curve_that_cannot_run_is_one_line(extra, says, tmp_path, monkeypatch, capsys):
    """Holding out the whole pool, a bad N, an empty pool, a flag the curve does not take, a plan outside the limits
    its readers apply (passes, held-out sums, steps, runs): one line, exit 2, no store made and no run trained."""
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_fake_job, str(tmp_path / "log")))
    store = tmp_path / "s.sqlite"
    argv = ["curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--store", str(store)]
    assert main([*argv, *extra]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err
    assert not store.exists() and not (tmp_path / "log").exists()
    with pytest.raises(GridError):
        plan(held=len(POOL))


def test_held_out_success_is_read_by_the_dimension_a_training_environment_is_one_step_along():
    """Three environments: add_2x2 and 2a2_postfix differ in the call's form alone, 2a2_postfix and 1a1_postfix
    in the digits alone, add_2x2 and 1a1_postfix in both (no single step). Each held-out environment's success
    is counted under the dimensions along which a training environment of that run is one step away, else `none`."""
    pool = ("add_2x2", "1a1_postfix", "2a2_postfix")
    one_step = {  # hand-written: which dimension separates two environments, if exactly one does
        frozenset({"add_2x2", "2a2_postfix"}): "form",
        frozenset({"2a2_postfix", "1a1_postfix"}): "digits",
    }
    rate_of = {"add_2x2": 0.1, "1a1_postfix": 0.3, "2a2_postfix": 0.5}
    p = CurvePlan(pool, 1, 3, (1, 2), 30, (0,), FinetuneSettings())
    runs, expected = {}, {}
    for job, s, n in p.jobs("b"):
        (held,) = p.split(s)[0]
        scores = {name: HeldOutScore(name, round(100 * rate_of[name]), 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "curve")
        if n != CEILING:
            trained = [name for name, _ in job.cell.mix.counts]
            dims = {one_step[frozenset({held, t})] for t in trained if frozenset({held, t}) in one_step} or {"none"}
            for dim in dims:
                expected.setdefault(dim, {}).setdefault(n, []).append(rate_of[held])
    found = by_neighbour(p, runs, "b")
    assert set(found) == set(expected) and len(found) >= 2
    for dim, row in expected.items():
        assert {n: (pytest.approx(sum(v) / len(v)), len(v)) for n, v in row.items()} == found[dim]


def test_no_two_splits_hold_out_the_same_set_so_no_run_is_counted_twice():
    """Six environments, two held out: the seeded draws of splits 0 and 2 hold out the same pair, which ran every
    run of split 0 twice and counted it as two pairs; split 2 is drawn again, and every job's key is its own."""
    pool = tuple(f.name for f in where(digits="1", op="add"))
    p = CurvePlan(pool, 2, 3, (1, 2, 4), 30, (0, 1), FinetuneSettings())
    held = [frozenset(p.split(i)[0]) for i in range(3)]
    assert len(set(held)) == 3 and held[0] == frozenset({"add_2x1", "add_4x1"})  # the first draw is kept
    keys = [job.key for job, _, _ in p.jobs("b")]
    assert len(keys) == len(set(keys)) == 2 * 3 * 4
    with pytest.raises(GridError, match="4 splits need as many different held-out sets: 3 environments have 3"):
        CurvePlan(pool[:3], 2, 4, (1,), 30, (0,), FinetuneSettings())  # three environments have three pairs


def test_more_splits_than_a_curve_draws_are_one_line_at_once(tmp_path, monkeypatch, capsys):
    """`--splits 5000` over 40 environments (10,000 runs) drew the splits again for every split, for minutes, and
    then stored the plan; 12,870 splits of 16 environments (every held-out set of 8) could not all be drawn. Now
    splits are at most 1,000, drawn once per plan: one line, exit 2, no store, no run."""
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_fake_job, str(tmp_path / "log")))
    store = tmp_path / "s.sqlite"
    argv = ["curve", "--where", "operands=3", "--splits", "5000", "--n", "1", "--seeds", "0", "--store", str(store)]
    assert main(argv) == USAGE_ERROR
    assert "--splits takes 1 to 1,000, not 5000" in capsys.readouterr().err
    assert not store.exists() and not (tmp_path / "log").exists()
    pool = tuple(f.name for f in where(operands="3"))[:16]
    with pytest.raises(GridError, match="--splits takes 1 to 1,000, not 12870"):
        CurvePlan(pool, 8, math.comb(16, 8), (1,), 30, (0,), FinetuneSettings())
    assert len(CurvePlan(pool, 8, 1000, (1,), 30, (0,), FinetuneSettings()).jobs("b")) == 2000


def test_a_plan_the_writer_accepts_reads_back_at_its_limits():
    """The writer and the readers apply the same limits: a plan at the edge of every one (the largest seed, held-out
    size and min_steps) reads back from the store as it was written, where readers once refused seeds above 10**9."""
    p = plan(seeds=(0, 2**32 - 1), held_out=100_000, min_steps=100_000, passes=1e-3)
    curve = StoredCurve(p, "edges", "b")
    assert StoredCurve.from_dict(json.loads(json.dumps(curve.to_dict()))) == curve


def _failing_job(spec: dict) -> dict:
    """Stands in for a worker's run that fails the way a run can (a worker raises)."""
    raise RuntimeError("the loss went to nan at step 3")


def test_a_failed_run_is_printed_with_its_reason(tmp_path, monkeypatch, capsys):
    """A curve whose runs fail says which run failed and why, a line each, not only a count; exit 1."""
    monkeypatch.setattr(sweep, "_run_job", lambda: _failing_job)
    argv = [
        "curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--held", "2",
        "--splits", "1", "--n", "1", "--seeds", "0", "--workers", "1",
    ]  # fmt: skip
    assert main(argv) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("failed: ")]
    assert "failed 2" in out and len(failed) == 2
    assert "N=1 of split 1 seed 0" in failed[0] and "the ceiling of split 1 seed 0" in failed[1]
    assert all("RuntimeError: the loss went to nan at step 3" in line for line in failed)


def test_each_held_out_environment_is_kept_per_n_and_printed_on_asking(tmp_path, monkeypatch, capsys):
    """`by_environment`: every environment a split held out, per N and for the ceiling, over the runs that held
    it out; `--by-environment` prints it as a table, one row per environment, in the pool's order."""
    p = plan(sizes=(1, 4), splits=2)
    runs = {}
    for job, s, n in p.jobs("b"):
        held, _ = p.split(s)
        rate = {CEILING: 90, 1: 10, 4: 60}[n] + (5 if held[0] == POOL[0] and s == 0 else 0)
        scores = {name: HeldOutScore(name, rate if name in held else 95, 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "curve")
    each = by_environment(p, runs, "b")
    held = [name for s in range(2) for name in p.split(s)[0]]
    assert list(each) == [name for name in POOL if name in held]
    for name, row in each.items():
        assert list(row) == [1, 4, CEILING] and all(count == 2 * held.count(name) for _, count in row.values())
        assert row[4][0] >= 0.6 and row[CEILING][0] >= 0.9
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(_fake_job, str(log)))
    argv = [
        "curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--held", "2",
        "--splits", "2", "--n", "1,2", "--seeds", "0", "--workers", "1", "--by-environment",
        "--store", str(tmp_path / "s.sqlite"),
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "held out % by environment" in out and "ceiling" in out.split("held out % by environment")[1]


def test_an_environment_with_a_smaller_pool_gives_all_it_has_and_the_others_keep_theirs():
    """A run on the wide pool with --demos 200 gives 200 demonstrations to every environment whose pool holds them
    and all they have to the ones whose pool is smaller (add_2x1: 50), not 50 to every environment; the ceiling too."""
    from breadth.core.world.environments.registry import by_name

    pool = ("add_2x1", "add_2x2", "add_3x1", "1a1s2", "sub_2x2")
    p = CurvePlan(pool, 1, 2, (1, 2, 4), 200, (0,), FinetuneSettings(), passes=20, min_steps=10)
    runs = p.jobs("b")
    assert any(len(job.cell.mix.counts) == 4 for job, _, _ in runs)  # the largest N trains on all but one
    for job, _, _ in runs:
        counts = dict(job.cell.mix.counts)
        assert counts == {name: min(200, by_name(name).demo_pool) for name in counts}
    assert {by_name(name).demo_pool for name in pool} == {50, 82, 200}  # small pools, so the rule is exercised
