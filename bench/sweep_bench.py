"""Sweep throughput: runs per minute with 1 local worker, 2 local workers and a 2-worker Dask LocalCluster.

Each configuration runs the same `--runs` fine-tunes (the default mix and settings, seeds 0..n-1,
held-out 30) into a fresh temporary store, timed from submitting the first job to storing the last
(worker start-up, which imports torch, included). Target: 2 workers at least 1.7x one.
`python -m bench.sweep_bench [--runs 8] [--json PATH]`. A benchmark, not a unit test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.outputs import refused, write
from breadth.core.results.grid import Grid
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import DEFAULT_PRESET, PRESETS
from breadth.core.storage.store import Store
from breadth.core.sweeps.sweep import run_jobs
from breadth.core.world.runs.settings import FinetuneSettings

TARGET = 1.7  # 2 local workers should give at least this many times one worker's runs per minute


def measure(runs: int, workers: int, cluster: str | None, folder: Path) -> dict:
    """Run the grid once with this executor; runs per minute and seconds."""
    grid = Grid((PRESETS[DEFAULT_PRESET].mix,), FinetuneSettings(), (), tuple(range(runs)), 30)
    base_hash = weights_hash(BASE)
    with Store(folder / f"{workers}-{'dask' if cluster else 'local'}.sqlite") as store:
        start = time.perf_counter()
        outcome = run_jobs(grid.jobs(base_hash), store, BASE, base_hash, "bench", workers, cluster)
        seconds = time.perf_counter() - start
    if outcome.failed or outcome.ran != runs:
        raise RuntimeError(f"{len(outcome.failed)} runs failed: {outcome.failed[:1]}")
    scores = {k: {n: s.solved for n, s in r.run.scores.items()} for k, r in outcome.stored.items()}
    return {"runs": runs, "seconds": seconds, "per_minute": 60 * runs / seconds, "scores": scores}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sweep_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    from distributed import LocalCluster

    results = {}
    with tempfile.TemporaryDirectory(prefix="breadth-bench-") as tmp:
        folder = Path(tmp)
        results["1 local worker"] = measure(args.runs, 1, None, folder)
        results["2 local workers"] = measure(args.runs, 2, None, folder)
        # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 for its workers, which halves torch's speed: unset it
        import dask

        with (
            dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}),
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            ) as cluster,
        ):
            results["2-worker Dask LocalCluster"] = measure(args.runs, 2, cluster.scheduler_address, folder)
    one = results["1 local worker"]["per_minute"]
    table = Table(title=f"{args.runs} fine-tunes (400 steps, held-out 30) per configuration", title_justify="left")
    for column in ("configuration", "seconds", "runs/min", "vs 1 worker"):
        table.add_column(column, justify="left" if column == "configuration" else "right")
    for name, r in results.items():
        table.add_row(name, f"{r['seconds']:.1f}", f"{r['per_minute']:.1f}", f"{r['per_minute'] / one:.2f}x")
    console = Console()
    console.print(table)
    same = len({json.dumps(r["scores"], sort_keys=True) for r in results.values()}) == 1
    ratio = results["2 local workers"]["per_minute"] / one
    console.print(
        f"scores identical across the three: {same}; 2 workers / 1 worker = {ratio:.2f}x "
        f"(target {TARGET}x) {'ok' if ratio >= TARGET else 'MISSED'}"
    )
    write(args.json, {k: {kk: vv for kk, vv in v.items() if kk != "scores"} for k, v in results.items()})
    return 0 if ratio >= TARGET and same else 1


if __name__ == "__main__":
    sys.exit(main())
