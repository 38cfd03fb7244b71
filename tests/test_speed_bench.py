"""`python -m bench.speed_bench` measures in one run every way breadth fine-tunes (today's loop, the peer loop, the
cheaper single run, lockstep groups) with GFLOP/s against the core's product rate, and the scoring rate of every
shipped model; it judges the scoring target only at the 30 sums a split it is set for."""

from __future__ import annotations

import json

from bench import speed_bench
from breadth.core.storage.presets import PRESETS


def test_one_run_prints_every_way_and_every_shipped_models_scoring(tmp_path, capsys):
    """Three steps a run, groups of 2, two sums a split: a line per way with its share of the product rate, the
    ratios to today's loop, and a scoring line per shipped model; the JSON holds the same measurements."""
    out_json = tmp_path / "speed.json"
    speed_bench.main(["--steps", "3", "--groups", "2", "--sums", "2", "--json", str(out_json)])
    out = capsys.readouterr().out
    for way in ("today", "peer", "cheap single", "lockstep K=2"):
        assert f"  {way} " in out and "of the product rate" in out
    assert "peer loop / today's: x" in out and "single run (cheap) / today's: x" in out
    for name in PRESETS:
        assert f"scoring {name}: 400 episodes in" in out
    assert out.count("(judged at 30 sums a split)") == len(PRESETS)
    saved = json.loads(out_json.read_text())
    assert set(saved["per_cpu_minute"]) == {"today", "peer", "cheap single", "lockstep K=2"}
    assert set(saved["scoring_cpu_s"]) == set(PRESETS) and all(v > 0 for v in saved["scoring_cpu_s"].values())
