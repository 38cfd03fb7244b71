"""How long scoring 200 environments x 30 sums takes with a shipped model on one core (target: under 5 s).

The workload is what `breadth eval CHECKPOINT --envs all` does after loading the model: build each chosen
environment's test split (30 sums), play every sum greedily with the calculator in the loop, judge it, tally
per environment and summarise by dimension. The registry holds fewer than 200 environments today (183), so the
200 test splits are every environment's on seed 0 and, for the rest, environments drawn by seed 0 on seed 1:
6,000 episodes. One torch thread. Each round prints wall time (what a user waits) and CPU time (what the work
costs on a shared machine), and the load average, since other processes share the cores; round 1 also builds
the splits cold (a fresh `breadth eval` pays that once). `--check` first scores the same sums with today's
`evaluate` (one position a step, batches of 256) and says whether every episode and verdict is the same.

`python -m bench.envs_bench [--model mix_35_35] [--rounds 3] [--environments 200] [--sums 30] [--check]`.
A benchmark, not a unit test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from breadth.core.learning import checkpoint
from breadth.core.learning.evaluate import evaluate, evaluate_environments
from breadth.core.learning.train import use_one_thread
from breadth.core.results.dimensions import summarise
from breadth.core.storage.presets import checkpoint_path
from breadth.core.world.environments.registry import draw, environments

TARGET = 5.0  # seconds for 200 environments x 30 sums (issue 17)


def workload(count: int) -> list[tuple[int, list[str]]]:
    """(split seed, environment names) pairs making `count` test splits: every environment on seed 0 (a seeded
    draw if fewer are asked), then environments drawn on seed 1, 2, ... until there are `count`."""
    pool = environments()
    out, seed = [], 0
    while count > 0:
        take = min(count, len(pool))
        out.append((seed, [f.name for f in (pool if take == len(pool) else draw(take, seed, pool))]))
        count, seed = count - take, seed + 1
    return out


def load() -> str:
    """The load average over 1, 5 and 15 minutes, and the cores."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def score(model, splits: list[tuple[int, list[str]]], sums: int, fast: bool = True):
    """Every split scored (the fast path `breadth eval --envs` takes, or today's `evaluate`) and summarised;
    the episodes' texts and verdicts, in order."""
    out, scores = [], {}
    for seed, names in splits:
        if fast:
            got, scored = evaluate_environments(model, seed, sums, names)
        else:
            got, scored = evaluate(model, seed, sums, environments=names)
        scores |= {(seed, name): s for name, s in got.items()}
        out += [(s.problem.environment, s.episode.transcript.text, s.verdict) for s in scored]
    summarise({name: s for (seed, name), s in scores.items() if seed == 0})
    return out, scores


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.envs_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="mix_35_35", help="a shipped model or a checkpoint (default mix_35_35)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    p.add_argument("--environments", type=int, default=200, help="test splits scored (default 200)")
    p.add_argument("--sums", type=int, default=30, help="sums per test split (default 30)")
    p.add_argument("--check", action="store_true", help="first compare every episode with today's evaluate")
    args = p.parse_args(argv)
    use_one_thread()
    model, _ = checkpoint.load(checkpoint_path(args.model))
    splits = workload(args.environments)
    print(f"{args.model}: {sum(len(n) for _, n in splits)} test splits x {args.sums} sums; {load()}")

    def timed(fast: bool):
        wall, cpu = time.perf_counter(), time.process_time()
        played, scores = score(model, splits, args.sums, fast)
        return played, scores, time.perf_counter() - wall, time.process_time() - cpu

    walls, cpus, first = [], [], None
    for r in range(args.rounds):
        played, scores, wall, cpu = timed(fast=True)
        first = first or played
        solved = sum(s.solved for s in scores.values())
        note = " (splits built cold)" if r == 0 else ""
        print(
            f"round {r + 1}: {len(played)} episodes in {wall:.2f} s wall, {cpu:.2f} s CPU{note}; "
            f"{solved} solved; {load()}"
        )
        walls.append(wall)
        cpus.append(cpu)
        assert played == first, "a round played differently"
    warm = walls[1:] or walls
    verdict = "under" if statistics.median(warm) < TARGET else "over"
    print(
        f"median of the warm rounds: {statistics.median(warm):.2f} s wall, {statistics.median(cpus[1:] or cpus):.2f}"
        f" s CPU: {verdict} the {TARGET:.0f} s target"
    )
    if args.check:
        played, _, wall, cpu = timed(fast=False)
        print(
            f"today's evaluate: {wall:.2f} s wall, {cpu:.2f} s CPU; every episode and verdict the same: "
            f"{played == first}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
