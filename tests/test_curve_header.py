"""`breadth curve`'s header names the N values that will run (capped per split by what it leaves), not those asked."""

from __future__ import annotations

from breadth.core.cli.main import main
from breadth.core.sweeps import sweep
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _fake_job(spec: dict) -> dict:
    """Stands in for a worker's run: every environment it is scored on solved 80 of 100."""
    settings = FinetuneSettings.from_dict(spec["settings"])
    scores = {name: HeldOutScore(name, 80, 100, {}) for name in spec["families"]}
    record = RunMeta("finetune", settings, spec["mix"], settings.seed, spec["held_out"], scores, (1.0,), 1.0)
    return {"record": record.to_dict(), "versions": {}}


def test_the_header_names_the_sizes_capped_to_what_a_split_leaves(tmp_path, monkeypatch, capsys):
    """Eight environments, two held out, N 1,2,4,8,16 asked: six are left, so the header says N 1,2,4,6."""
    monkeypatch.setattr(sweep, "_run_job", lambda: _fake_job)
    argv = [
        "curve", "--where", "form=infix", "--where", "op=add", "--where", "operands=3", "--held", "2",
        "--splits", "1", "--n", "1,2,4,8,16", "--seeds", "0", "--workers", "1",
        "--store", str(tmp_path / "s.sqlite"),
    ]  # fmt: skip
    assert main(argv) == 0
    header = " ".join(capsys.readouterr().out.split("\n\n")[0].split())
    assert header.startswith("5 runs: 8 environments") and "1 splits x N 1,2,4,6 + a ceiling each" in header
