"""Sweeps print plain progress lines when stdout is not a terminal (rich's bar shows nothing in a pipe or a log)."""

from __future__ import annotations

import re

from breadth.core.cli import grids
from breadth.core.results.grid import Grid
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store
from breadth.core.sweeps import sweep
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _fake_job(spec: dict) -> dict:
    """Stands in for a worker's run: a record with no scores, at once."""
    settings = FinetuneSettings.from_dict(spec["settings"])
    record = RunMeta("finetune", settings, spec["mix"], settings.seed, spec["held_out"], {}, (1.0,), 0.1)
    return {"record": record.to_dict(), "versions": {}}


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_a_sweep_into_a_pipe_prints_a_line_every_ten_runs_and_at_the_end(tmp_path, monkeypatch, capsys):
    """14 runs, 2 stored, not a terminal: what is to run, a line after its tenth run (12 of 14) and one at the end."""
    monkeypatch.setattr(sweep, "_run_job", lambda: _fake_job)
    base_hash = weights_hash(BASE)
    jobs = Grid((Mix.parse("two_digit=4"),), FinetuneSettings(), (), tuple(range(14)), 3).jobs(base_hash)
    with Store(tmp_path / "s.sqlite") as store:
        grids.run_with_progress(jobs[:2], store, BASE, base_hash, "test", 1, None)
        capsys.readouterr()
        outcome = grids.run_with_progress(jobs, store, BASE, base_hash, "test", 1, None)
    assert outcome.ran == 12
    lines = _lines(capsys)
    assert lines[0] == "runs: 12 to run, 2 already stored"
    assert [re.match(r"runs: (\d+) of 14 done, (\d+) to go, \d+:\d\d so far, about \d+:\d\d left", x).groups()
            for x in lines[1:]] == [("12", "2"), ("14", "0")]  # fmt: skip


def test_a_line_also_comes_when_half_a_minute_has_passed(capsys):
    """Runs slower than 30 s apart each get their line; quick ones wait for the tenth."""
    now = [0.0]
    on_run = grids.plain_progress(clock=lambda: now[0])
    on_run(None, None, 0, 100)
    for done, seconds in enumerate([1, 1, 31, 40, 1, 1], start=1):
        now[0] += seconds
        on_run(object(), None, done, 100)
    lines = _lines(capsys)
    assert lines == [
        "runs: 100 to run",
        "runs: 3 of 100 done, 97 to go, 0:33 so far, about 17:47 left",
        "runs: 4 of 100 done, 96 to go, 1:13 so far, about 29:12 left",
    ]
