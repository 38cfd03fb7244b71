"""`breadth transfer`, the transfer map (issue 33): designs (environments held out by coordinates) x ways of varying
(all the rest, or one step along chosen dimensions), each cell one designed curve at its one N beside a ceiling at
the same steps; cells with nothing to train on say so; the table, JSON and figure; one-line refusals."""

from __future__ import annotations

import functools
import json

import pytest
from fake_runs import fake_group

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.grid import GridError
from breadth.core.results.transfer_map import StoredMap, cells, held_failures, parse_design, parse_vary, read
from breadth.core.storage.store import Store, StoredRun
from breadth.core.sweeps import sweep
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

THREE = tuple(f.name for f in where(operands="3"))
POSTFIX_SUB, LAYOUT = ("form=postfix", "op=sub"), ("digits=2.?.1",)


def test_cells_are_every_design_by_every_way_of_varying_each_at_its_one_n_beside_a_matched_ceiling():
    """Two designs x three rows: rows first; a row that leaves a design nothing to train on has no plan and says
    why; every plan is one split at N = all it may train on, its ceiling at that N's steps."""
    made = cells(THREE, [POSTFIX_SUB, LAYOUT], [(), ("form",), ("op",)], 30, (0, 1), FinetuneSettings(), 30)
    assert [(c.vary, c.design) for c in made] == [
        (v, d) for v in [(), ("form",), ("op",)] for d in (POSTFIX_SUB, LAYOUT)
    ]
    empty = [c for c in made if c.plan is None]
    assert [(c.design, c.vary, c.why) for c in empty] == [
        (LAYOUT, ("form",), "nothing to train on"), (LAYOUT, ("op",), "nothing to train on")
    ]  # fmt: skip
    for c in made:
        if c.plan is not None:
            rest = c.plan.split(0)[1]
            assert c.plan.splits == 1 and c.plan.sizes == (len(rest),) and c.plan.budget == "ceiling"
            steps = {n: j.settings.steps for j, _, n in c.plan.jobs("b")}
            assert len(set(steps.values())) == 1  # the ceiling trains as long as the row's run
    assert parse_vary("all") == () and parse_vary("op, form") == ("op", "form")
    assert parse_design("form=postfix, op=sub") == POSTFIX_SUB
    with pytest.raises(GridError, match="--hold takes DIM=VALUE conditions"):
        parse_design(" , ")


def test_a_matched_budget_trains_every_cell_and_its_ceiling_for_the_largest_cells_steps():
    """With budget "matched", the one-dimension rows (5 environments, 858 steps each on their own) train as long as
    the `all` row (35 environments, 6,000 steps), ceilings too; the `all` row's runs keep their own keys; a budget
    that is not one is refused."""
    rows = [(), ("form",), ("op",)]
    own = cells(THREE, [POSTFIX_SUB], rows, 30, (0,), FinetuneSettings(), 30)
    matched = cells(THREE, [POSTFIX_SUB], rows, 30, (0,), FinetuneSettings(), 30, "matched")
    steps = [{j.settings.steps for j, _, _ in c.plan.jobs("b")} for c in own]
    assert steps == [{6000}, {858}, {858}]
    assert [{j.settings.steps for j, _, _ in c.plan.jobs("b")} for c in matched] == [{6000}] * 3
    assert [j.key for j, _, _ in matched[0].plan.jobs("b")] == [j.key for j, _, _ in own[0].plan.jobs("b")]
    with pytest.raises(GridError, match="a map's budget is one of own, matched"):
        cells(THREE, [POSTFIX_SUB], rows, 30, (0,), FinetuneSettings(), 30, "largest")


def test_a_cell_reads_held_out_success_and_its_ceiling_from_the_store():
    """Made-up runs: held out 20% and 40% on two seeds, the ceiling 80%: the reading is their mean with a seed
    interval; before the ceiling is stored there is no reading."""
    (cell,) = cells(THREE, [POSTFIX_SUB], [("form",)], 30, (0, 1), FinetuneSettings(), 30)
    runs = {}
    for job, _, n in cell.plan.jobs("b"):
        held = cell.plan.split(0)[0]
        rate = 80 if n == 0 else 20 + 20 * job.seed
        scores = {name: HeldOutScore(name, rate if name in held else 90, 100, {}) for name in job.environments}
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "transfer")
    r = read(cell, runs, "b")
    assert r.held[0] == pytest.approx(0.3) and r.held[1] < 0.3 < r.held[2] and r.ceiling[0] == pytest.approx(0.8)
    assert r.train[0] == pytest.approx(0.9) and r.seeds == 2
    ceilings = {j.key for j, _, n in cell.plan.jobs("b") if n == 0}
    assert read(cell, {k: v for k, v in runs.items() if k not in ceilings}, "b") is None


def test_breadth_transfer_prints_writes_and_draws_the_map(tmp_path, monkeypatch, capsys):
    """Every environment scored 80% by the stand-in: each cell reads 80 [80-80] / 80; the empty cells say so; the JSON
    holds a record per cell and the figure is written; run again, nothing trains; the store holds the map once."""
    log = tmp_path / "log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    argv = ["transfer", "--where", "operands=3", "--hold", "form=postfix,op=sub", "--hold", "digits=2.?.1"]
    argv += ["--vary", "all", "--vary", "form", "--seeds", "0,1", "--workers", "1", "--store", str(tmp_path / "s")]
    argv += ["--json", str(tmp_path / "m.json"), "--figure", str(tmp_path / "m")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("80 [80-80] / 80") == 3 and "nothing to train on" in out
    records = json.loads((tmp_path / "m.json").read_text())
    assert len(records) == 4 and sum("held" in r for r in records) == 3
    assert (tmp_path / "m.png").exists() and (tmp_path / "m.svg").exists()
    assert "warning" not in out  # 80% everywhere: every cell's training took
    ran = log.read_text().count("\n")
    assert main(argv) == 0 and log.read_text().count("\n") == ran
    with Store(tmp_path / "s", read_only=True) as store:  # the map is in the store once, as the app's view reads it
        (stored,) = [StoredMap.from_dict(data) for _, data, _ in store.maps()]
        runs = {r.key: r for r in store.runs()}
    readings = [r for c, r in stored.readings(runs) if c.plan is not None]
    assert len(readings) == 3 and all(r.held[0] == pytest.approx(0.8) for r in readings)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--where", "operands=3"], "the following arguments are required: --hold"),
        (["--hold", "form=sideways"], "holds out none of the pool"),
        (["--hold", "form=postfix", "--hold", "form=postfix"], "twice"),
    ],
)
def test_bad_maps_are_one_line_and_exit_2(argv, says, tmp_path, capsys):
    """No design, a design that holds out nothing, a design given twice: one line, exit 2, no store made."""
    store = tmp_path / "s.sqlite"
    assert main(["transfer", *argv, "--store", str(store)]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and not store.exists()


def test_a_cell_whose_training_did_not_take_is_said_to_show_nothing(tmp_path, monkeypatch, capsys):
    """Every environment at 30%: the map still prints, and each cell gets a warning that its training environments
    and its ceiling are below 50%, so its held out says nothing about transfer."""
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(tmp_path / "log"), solved=30))
    argv = ["transfer", "--where", "operands=3", "--hold", "form=postfix,op=sub", "--vary", "form", "--seeds", "0"]
    assert main([*argv, "--workers", "1", "--store", str(tmp_path / "s")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "warning: form x form=postfix op=sub: training environments 30%, ceiling 30%: below 50%" in out


def test_a_cells_held_out_failures_are_counted_over_its_runs_and_printed_with_kept_episodes(tmp_path, capsys):
    """held_failures sums the held-out environments' failure kinds over the cell's trained runs (never its
    ceiling's) and keeps their kept episodes; --failures prints each cell's, the episodes as written (text, not
    markup)."""
    from breadth.core.cli.transfer import print_failures
    from breadth.core.world.episodes.scores import FailedEpisode
    from breadth.core.world.text.transcript import Role, Segment

    (cell,) = cells(THREE, [POSTFIX_SUB], [("op",)], 30, (0, 1), FinetuneSettings(), 30)
    held = cell.plan.split(0)[0]
    wrote = FailedEpisode("wrong operands", (Segment(Role.PROMPT, "7,1,2-="), Segment(Role.ACTION, "B7,1+|[red]")))
    runs = {}
    for job, _, n in cell.plan.jobs("b"):
        kinds = {"malformed call": 50} if n == 0 else {"wrong operands": 9, "malformed call": 1}
        scores = {
            name: HeldOutScore(name, 90 if name in held else 100, 100, kinds if name in held else {},
                               (wrote,) if name == held[0] and n != 0 else ())
            for name in job.environments
        }  # fmt: skip
        record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
        runs[job.key] = StoredRun(job.key, record, "b", "transfer")
    found = held_failures(cell, runs, "b")
    assert (found.solved, found.played) == (2 * 5 * 90, 2 * 5 * 100)  # two seeds x five held out, not the ceiling
    assert found.kinds == {"wrong operands": 90, "malformed call": 10} and len(found.kept) == 2
    print_failures(cell, found)
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "op x form=postfix op=sub: held out solved 900 of 1000; failures: wrong operands 90, malformed call 10" in out
    )
    assert f"{held[0]}: 7,1,2-=B7,1+|[red] (wrong operands)" in out
