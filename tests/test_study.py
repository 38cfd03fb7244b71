"""`breadth study FILE` (issue 33: a plan before the runs): a TOML plan of curve and transfer steps is checked whole
before any run, run into one store and resumed, each stored run recorded under the plan's hash; the report lists
every step and what was chosen after looking at results; an edited plan shows; bad plans are one line, exit 2."""

from __future__ import annotations

import argparse
import functools
import json
import sqlite3

import pytest
from fake_runs import fake_group, ran

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.cli.study import checked_args, step_runs
from breadth.core.results.study import Study, StudyError
from breadth.core.storage.store import Store
from breadth.core.sweeps import sweep

CURVE = '["--where", "operands=2", "--held", "4", "--splits", "2", "--n", "1,2", "--seeds", "0-1", "--demos", "4"]'
MAP = '["--where", "operands=3", "--hold", "form=postfix,op=sub", "--vary", "form", "--vary", "all", "--seeds", "0"]'
PLAN = f"""question = "Does held-out success rise with N on two-number sums?"
chosen_after_results = []

[[step]]
name = "two-number curve"
command = "curve"
args = {CURVE}

[[step]]
name = "postfix subtraction map"
command = "transfer"
args = {MAP}
"""


@pytest.fixture
def fake_workers(tmp_path, monkeypatch):
    """Every run answered at once by a stand-in worker (80 of 100 solved); the log of what each was asked."""
    log = tmp_path / "asked.log"
    monkeypatch.setattr(sweep, "_run_job", lambda: functools.partial(fake_group, str(log)))
    return log


def _study(tmp_path, text: str = PLAN):
    path = tmp_path / "plan.toml"
    path.write_text(text)
    return path


def test_a_study_runs_every_step_records_its_runs_under_the_plans_hash_and_a_rerun_trains_nothing(
    tmp_path, fake_workers, capsys
):
    """Both steps run into one store; every run either stored is recorded under the plan's hash; the report names
    each step with its pool, design and reading; the same command again trains nothing and says so."""
    path, store = _study(tmp_path), tmp_path / "s.sqlite"
    argv = ["study", str(path), "--store", str(store), "--workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    plan_hash = Study.read(path).plan_hash
    with Store(store, read_only=True) as s:
        runs, recorded = {r.key for r in s.runs()}, s.study_runs()
    assert runs and set(recorded) == runs and all(v == {plan_hash} for v in recorded.values())
    assert f"the study's report (plan {plan_hash})" in out
    report = " ".join(out.split("the study's report")[1].split())  # as one line: the console wraps at its width
    assert "1. two-number curve: breadth curve --where operands=2" in report
    assert "pool operands=2, 4 held out per split, drawn" in report
    assert "2. postfix subtraction map: breadth transfer" in report
    assert "held out by design: form=postfix,op=sub, training varied along: form | all" in report
    assert report.count("reading: ") == 2 and "N=1: held out" in report and "/ ceiling 80%" in report
    assert "chosen after looking at results: nothing, the plan says" in report
    asked = len(ran(fake_workers))
    assert main(argv) == 0
    assert len(ran(fake_workers)) == asked  # resumed: nothing trained again
    assert "ran 0, already stored" in " ".join(capsys.readouterr().out.split())


def test_an_edited_plan_is_another_plan_and_the_report_says_its_runs_were_stored_for_another_version(
    tmp_path, fake_workers, capsys
):
    """A plan edited after its runs (here: a choice added) has another hash; its runs, found stored, are recorded
    for it too, and the report says they were also stored for another version, and lists the choice."""
    store = tmp_path / "s.sqlite"
    assert main(["study", str(_study(tmp_path)), "--store", str(store), "--workers", "1"]) == 0
    edited = PLAN.replace("chosen_after_results = []", 'chosen_after_results = ["N=2 added after a pilot"]')
    path = _study(tmp_path, edited)
    capsys.readouterr()
    assert main(["study", str(path), "--store", str(store), "--workers", "1"]) == 0
    report = " ".join(capsys.readouterr().out.split("the study's report")[1].split())
    assert "also for another version of it" in report
    assert "chosen after looking at results (so not part of the plan made before the runs):" in report
    assert "- N=2 added after a pilot" in report
    with Store(store, read_only=True) as s:
        assert all(len(hashes) == 2 for hashes in s.study_runs().values())


@pytest.mark.parametrize(
    "text, says",
    [
        ("question = 'q'\n", "no steps"),
        ("[[step]]\ncommand = 'curve'\n", "states its question"),
        (
            "question = 'q'\nquestoin = 1\n[[step]]\ncommand = 'curve'\n",
            "unknown key questoin; did you mean 'question'?",
        ),
        ("question = 'q'\n[[step]]\ncommand = 'curv'\n", "command is one of curve, transfer, not 'curv'; did you mean"),
        ("question = 'q'\n[[step]]\ncommand = 'curve'\nargs = '--n 1'\n", "args is a list of strings"),
        ("question = 'q'\n[[step]]\ncommand = 'curve'\nargs = ['--store', 'x']\n", "--store is the study's to give"),
        (
            "question = 'q'\n[[step]]\ncommand = 'curve'\nargs = ['--n', 'x']\n",
            "plan.toml: step 1: --n takes whole numbers",
        ),
        ("question = 'q'\n[[step]]\ncommand = 'curve'\nargs = ['--nope']\n", "unrecognized arguments: --nope"),
        ("question = [\n", "not a study file (TOML)"),
        ("question = 'q'\n[[step]]\nname='a'\ncommand='curve'\n[[step]]\nname='a'\ncommand='curve'\n", "named a"),
    ],
)
def test_a_plan_that_cannot_run_is_one_line_and_exit_2_before_any_run(text, says, tmp_path, fake_workers, capsys):
    """Each bad plan (or bad step, checked by its command's own parser before any step runs) is one line naming
    the file, exit status 2, and nothing is trained or stored."""
    store = tmp_path / "s.sqlite"
    assert main(["study", str(_study(tmp_path, text)), "--store", str(store)]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert says in err and "plan.toml" in err and "\n" not in err and "Traceback" not in err
    assert ran(fake_workers) == [] and not store.exists()


def test_a_later_bad_step_stops_the_study_before_its_first_step_runs(tmp_path, fake_workers, capsys):
    """Every step is checked before any runs: a bad second step means the first one never trains."""
    text = PLAN.replace('"--vary", "all"', '"--vary", "al"')  # no such way of varying
    assert main(["study", str(_study(tmp_path, text)), "--store", str(tmp_path / "s.sqlite")]) == USAGE_ERROR
    assert ran(fake_workers) == []


def test_a_step_output_over_the_plan_itself_is_refused(tmp_path, fake_workers, capsys):
    """A step's --json naming the study's own file is refused in one line; the plan stays as it was."""
    path = tmp_path / "plan.toml"
    text = PLAN.replace(f"args = {CURVE}", f'args = {CURVE[:-1]}, "--json", "{path}"]')
    path.write_text(text)
    assert main(["study", str(path), "--store", str(tmp_path / "s.sqlite")]) == USAGE_ERROR
    assert "that is the study's plan" in capsys.readouterr().err and path.read_text() == text


def test_an_older_store_gains_the_study_table_and_keeps_its_runs(tmp_path):
    """A schema-4 store (before studies and maps) is migrated when written: empty study_runs and maps tables."""
    path = tmp_path / "old.sqlite"
    with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute("DROP TABLE study_runs")
    db.execute("DROP TABLE maps")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    with Store(path, read_only=True) as store:
        assert store.study_runs() == {} and store.maps() == []
    with Store(path) as store:
        assert store.add_study_runs("abc", ["k1", "k2", "k1"]) == 2
        assert store.study_runs() == {"k1": {"abc"}, "k2": {"abc"}}


def test_reading_a_plan_keeps_its_question_steps_and_choices_and_hashes_its_bytes(tmp_path):
    """The plan reads back as written; one byte more is another hash."""
    study = Study.read(_study(tmp_path))
    assert study.question.startswith("Does held-out") and [s.command for s in study.steps] == ["curve", "transfer"]
    assert study.steps[1].args[:2] == ("--where", "operands=3") and study.chosen_after == ()
    assert Study.read(_study(tmp_path, PLAN + "\n")).plan_hash != study.plan_hash
    over_lines = PLAN.replace('"Does held-out success', '"""Does held-out\n  success').replace('sums?"', 'sums?"""')
    assert Study.read(_study(tmp_path, over_lines)).question == study.question  # read as one line
    with pytest.raises(StudyError, match="not a study file"):
        Study.read(_study(tmp_path, "\xff"))


def _status(capsys, argv: list[str]) -> str:
    """`breadth study ... --status`, its exit 0, and what it printed as one line (the console wraps at its width)."""
    capsys.readouterr()
    assert main([*argv, "--status"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_status_counts_each_steps_stored_runs_and_trains_nothing(tmp_path, fake_workers, capsys):
    """For a study over sessions: `--status` on an empty store counts every run as to train (and creates no store);
    after the first step's command alone has run, step 1 is whole and step 2 untouched; after the study, all of it;
    nothing is ever trained by it; a run with a state saved partway is counted as such."""
    path, store = _study(tmp_path), tmp_path / "s.sqlite"
    argv = ["study", str(path), "--store", str(store), "--workers", "1"]
    before = _status(capsys, argv)
    assert not store.exists() and ran(fake_workers) == []
    total = int(before.split("in all: 0 of ")[1].split()[0])
    assert "step 1: two-number curve: 0 of" in before and f"(0%); {total} runs to train" in before

    assert main(["curve", *json.loads(CURVE), "--store", str(store), "--workers", "1"]) == 0
    with Store(store, read_only=True) as s:
        curve_runs = len(s.keys())
    asked = len(ran(fake_workers))
    half = _status(capsys, argv)
    assert f"step 1: two-number curve: {curve_runs} of {curve_runs} runs stored" in half
    assert "step 2: postfix subtraction map: 0 of" in half and f"in all: {curve_runs} of {total} runs" in half
    assert "partway" not in half
    step = Study.read(path).steps[1]  # a run of step 2 stopped partway leaves its state beside the store
    args = checked_args(step, argparse.Namespace(file=str(path), workers=1, cluster=None, store=str(store)))
    planted = sweep.unfinished(store) / f"{step_runs(step.command, args)[0].key}.safetensors"
    planted.parent.mkdir()
    planted.write_bytes(b"a state")
    assert f"{total - curve_runs} runs to train, 1 of them partway" in _status(capsys, argv)
    planted.unlink()

    assert main(argv) == 0
    trained = len(ran(fake_workers))
    assert trained > asked  # the study trained the map's runs
    after = _status(capsys, argv)
    with Store(store, read_only=True) as s:
        assert len(s.keys()) == total
    assert f"in all: {total} of {total} runs stored" in after and "(100%); 0 runs to train" in after
    assert len(ran(fake_workers)) == trained  # the status trained nothing
