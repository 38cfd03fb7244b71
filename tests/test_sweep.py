"""`breadth sweep`, `runs` and `report`: paired grids into the store, resumable after kill -9, the same on Dask."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.storage.store import Store
from breadth.core.sweeps import cluster
from breadth.core.world.environments.environment import REGISTERED

pytestmark = pytest.mark.slow  # fine-tunes in worker processes
QUICK = ["--steps", "3", "--held-out", "3"]
BREADTH = Path(sys.executable).parent / "breadth"


def _scores(store_path: Path) -> dict[str, dict]:
    with Store(store_path) as store:
        return {r.key: {n: (s.solved, s.total) for n, s in r.run.scores.items()} for r in store.runs()}


def test_a_sweep_fills_the_store_and_running_it_again_repeats_nothing(capsys, tmp_path):
    """Every cell runs on every seed once; the same command again finds them all stored and runs none."""
    store, out = tmp_path / "s.sqlite", tmp_path / "cells.json"
    argv = [
        "sweep",
        "--mix",
        "add_2x2=4",
        "--mix",
        "add_3x1=4",
        "--seeds",
        "0-1",
        "--lr",
        "1e-3,2e-3",
        "--workers",
        "2",
        "--store",
        str(store),
        "--json",
        str(out),
        *QUICK,
    ]
    assert main(argv) == 0
    assert "ran 8, already stored 0, failed 0" in capsys.readouterr().out.replace("\n", " ")
    cells = json.loads(out.read_text())
    assert len(cells) == 4 and all(c["seeds"] == [0, 1] for c in cells)
    assert all(f["total"] == 6 for c in cells for f in c["families"].values())  # 3 held-out sums x 2 seeds
    assert main(argv) == 0
    assert "ran 0, already stored 8" in capsys.readouterr().out.replace("\n", " ")
    assert len(_scores(store)) == 8


def test_a_sweep_killed_halfway_finishes_on_rerun_with_each_run_once_and_equal_scores(tmp_path):
    """SIGKILL a sweep once some runs are stored; rerun it: each run is stored once, scores as an unbroken sweep's."""
    killed, whole = tmp_path / "killed.sqlite", tmp_path / "whole.sqlite"
    args = [
        "sweep",
        "--share",
        "add_2x2/add_3x1=8:4",
        "--seeds",
        "0-1",
        "--workers",
        "1",
        "--steps",
        "40",  # a group of two seeds takes about 1 s: two groups' time between the first stored and the last
        "--held-out",
        "3",
    ]
    proc = subprocess.Popen(
        [str(BREADTH), *args, "--store", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: os.nice(10),  # on a loaded machine this poll, not the sweep, gets the core: it sees 2 or 4
    )
    deadline = time.monotonic() + 120
    stored = 0
    while stored < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if killed.exists():
            try:
                stored = sqlite3.connect(killed).execute("SELECT count(*) FROM runs").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0  # the tables are not there yet
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 2 <= stored < 6
    assert main([*args, "--store", str(killed)]) == 0
    assert main([*args, "--store", str(whole)]) == 0
    assert sqlite3.connect(killed).execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone() == (6, 6)
    assert _scores(killed) == _scores(whole)


def test_a_dask_cluster_gives_the_same_scores_as_the_local_pool(tmp_path):
    """The same runs on a Dask LocalCluster (127.0.0.1) and on local processes give identical scores."""
    import distributed  # the test extra installs it; a missing one fails here rather than skipping

    local, remote = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    args = ["sweep", "--mix", "add_2x2=4,add_3x1=4", "--seeds", "0-1", *QUICK]
    assert main([*args, "--workers", "2", "--store", str(local)]) == 0
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        assert main([*args, "--cluster", cluster.scheduler_address, "--store", str(remote)]) == 0
    assert _scores(local) == _scores(remote) and len(_scores(local)) == 2


def test_an_unreachable_cluster_is_one_line_within_seconds(capsys, tmp_path, monkeypatch):
    """A cluster address where nothing listens is refused in one line after the connect timeout, not a hang (the
    bound shortened to 1 s here; test_sweep_failures waits out the real one in a `breadth` process)."""
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    start = time.monotonic()
    argv = ["sweep", "--mix", "add_2x2=4", "--cluster", "tcp://127.0.0.1:9", "--store", str(tmp_path / "s.sqlite")]
    assert main(argv) == USAGE_ERROR
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err.strip()
    assert "cannot reach a Dask scheduler" in err and "within 1 s" in err and "\n" not in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["sweep", "--mix", "nope=4"], "unknown environment"),
        (["sweep", "--mix", "add_2x2=4", "--lr", "0"], "lr"),
        (["sweep", "--mix", "add_2x2=4", "--colour", "red"], "unrecognized"),
        (["sweep"], "no mixes"),
        (["sweep", "--mix", "add_2x2=4", "--seeds", ""], "no seeds"),
        (["report", "--lr", "fast"], "lr"),
    ],
)
def test_bad_sweep_input_is_one_line(capsys, tmp_path, argv, needle):
    """An unknown family or setting, a bad value or an empty grid: one line and exit 2, before any run."""
    assert main([*argv, "--store", str(tmp_path / "s.sqlite")]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_a_store_that_is_not_ours_is_refused_by_every_command(capsys, tmp_path):
    """`--store` naming a text file: sweep, runs, report and train refuse it in one line and leave it as it was."""
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    for argv in (
        ["sweep", "--mix", "add_2x2=4"],
        ["runs"],
        ["report"],
        ["train", "--mix", "add_2x2=4", "--steps", "1", "--out", str(tmp_path / "m.safetensors")],
    ):
        assert main([*argv, "--store", str(notes)]) == USAGE_ERROR
    assert notes.read_text() == "keep me\n"
    assert capsys.readouterr().err.count("not an SQLite file") == 4


def test_train_and_plate_record_their_runs_and_plate_never_repeats_one(capsys, tmp_path):
    """`breadth train` stores its run with the checkpoint's path; a second `plate` finds all its runs stored."""
    store = tmp_path / "s.sqlite"
    out = tmp_path / "m.safetensors"
    assert main(["train", "--mix", "add_2x2=4", "--steps", "2", "--out", str(out), "--store", str(store)]) == 0
    with Store(store) as s:
        (run,) = s.runs()
    assert run.source == "train" and run.checkpoint == str(out) and run.versions["torch"]
    plate = ["plate", "--seeds", "0", "--steps", "2", "--held-out", "3", "--store", str(store)]
    assert main(plate) == 0
    assert main(plate) == 0
    assert "(0 run now, 3 found in the store)" in capsys.readouterr().out.replace("\n", " ")


def test_runs_export_csv_and_json_and_report_compares_and_draws(capsys, tmp_path):
    """Stored runs export as CSV (a row per run and family) and JSON; report compares two cells and draws a curve."""
    store = tmp_path / "s.sqlite"
    assert (
        main(["sweep", "--mix", "add_2x2=4", "--lr", "1e-3,2e-3", "--seeds", "0-1", *QUICK, "--store", str(store)]) == 0
    )
    table, data = tmp_path / "runs.csv", tmp_path / "runs.json"
    assert main(["runs", "--store", str(store), "--csv", str(table), "--json", str(data), "--lr", "1e-3"]) == 0
    rows = list(csv.DictReader(table.open()))
    assert (
        len(rows) == 2 * len(REGISTERED)  # two runs, a row per family scored
        and {r["lr"] for r in rows} == {"0.001"}
        and {r["family"] for r in rows} == set(REGISTERED)
    )
    assert len(json.loads(data.read_text())) == 2
    figure = tmp_path / "curve"
    assert main(["report", "--store", str(store), "--compare", "1", "2", "--figure", str(figure)]) == 0
    printed = capsys.readouterr().out
    assert "paired by seed" in printed and "2 " in printed
    assert figure.with_suffix(".png").stat().st_size > 1000 and figure.with_suffix(".svg").read_text().startswith(
        "<?xml"
    )


def test_a_budget_sweep_prints_the_cost_of_mixing_and_draws_it(capsys, tmp_path):
    """`sweep --budget a/b=2,4` runs each family alone and the even mix at each total, prints the paired cost of
    mixing per family and total, and draws it (PNG and SVG)."""
    store, figure = tmp_path / "s.sqlite", tmp_path / "cost"
    argv = ["sweep", "--budget", "add_2x2/add_3x1=2,4", "--seeds", "0-1", *QUICK, "--store", str(store)]
    assert main([*argv, "--figure", str(figure)]) == 0
    printed = capsys.readouterr().out
    assert "the cost of mixing" in printed and "mix - alone" in printed
    with Store(store) as s:
        assert {r.run.mix for r in s.runs()} == {
            "add_2x2=2",
            "add_3x1=2",
            "add_2x2=1,add_3x1=1",
            "add_2x2=4",
            "add_3x1=4",
            "add_2x2=2,add_3x1=2",
        }
    assert figure.with_suffix(".png").stat().st_size > 1000 and "<svg" in figure.with_suffix(".svg").read_text()


def test_the_matrix_runs_what_is_missing_and_prints_every_family_for_every_row(capsys, tmp_path):
    """`breadth matrix` trains each row's mix on each seed (once: a second call finds them stored), scores every
    family, marks the trained ones, and writes JSON and a picture."""

    store, figure, data = tmp_path / "s.sqlite", tmp_path / "m", tmp_path / "m.json"
    argv = ["matrix", "--mix", "@operands:4&op:add=3", "--mix", "add_2x2=3", "--seeds", "0-1", *QUICK]
    assert main([*argv, "--store", str(store), "--figure", str(figure), "--json", str(data)]) == 0
    printed = capsys.readouterr().out
    assert "ran 4, already stored 0" in printed and "*" in printed
    rows = json.loads(data.read_text())
    assert [r["mix"] for r in rows] == ["add_4x1=3,add_4x2=3", "add_2x2=3"]
    assert all(set(r["families"]) == set(REGISTERED) and r["seeds"] == [0, 1] for r in rows)
    assert rows[0]["trained"] == ["add_4x1", "add_4x2"]
    cell = rows[1]["families"]["add_4x2"]  # held out from a 3-demonstration model: it fails, and says how
    unsolved = sum(cell["failures"].values())
    assert unsolved > 0 and 0 < len(cell["failed"]) <= 6 and {f["seed"] for f in cell["failed"]} == {0, 1}
    assert all(re.fullmatch(r"\d{2}(\+\d{2}){3}=.+", f["transcript"], re.DOTALL) for f in cell["failed"])  # its sums
    assert all(f["failure"] in cell["failures"] for f in cell["failed"])
    assert figure.with_suffix(".png").stat().st_size > 1000
    assert main([*argv, "--store", str(store)]) == 0
    assert "ran 0, already stored 4" in capsys.readouterr().out.replace("\n", " ")
