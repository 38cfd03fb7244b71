"""Runs per minute of today's fine-tune loop against runs in lockstep (K = 8, 16) and the cheaper single run.

Side by side in one process on one core (one torch thread), the plate's recipe (default settings, dropout
0.2) on the plate's three mixes with seeds 0, 1, 2, ...: today's loop (`train.finetune`, one run after
another), lockstep groups (`lockstep.finetune_lockstep`), and one run alone by the cheaper step
(`lockstep.finetune_cheap`). Fine-tuning only (scoring is the same for every way). The ways take turns
`--rounds` times so that a shared machine's load falls on all of them alike; each round's numbers are printed,
then the median. Wall time is what a user waits, CPU time (`time.process_time`) what the run costs on a shared
machine; both are shown, the targets are judged on wall time. Beside them, what a step achieves in GFLOP/s of
CPU time against the core's matrix-product rate in CPU time, measured in the same command (a 1024x1024
product, and the model's own largest product). Targets (issue 18): lockstep at
least 2x today's runs per minute, the cheaper single run at least 1.2x.
`python -m bench.lockstep_bench [--rounds 2] [--steps 400] [--json PATH]`. A benchmark, not a unit test.

`--paired N` instead compares scores: on seeds 0..N-1, default settings, the plate's three mixes, each scored on
200 held-out sums of the plate's two environments, and a mix of two generated postfix environments (`2a2_postfix`,
`2s2_postfix`: the plate's mixes are all infix), scored on those two in their own call form and on the plate's
two-digit sums in infix. Each is trained by today's loop and scored alone (`--side today`) and trained in
lockstep and scored together, as `breadth sweep --lockstep` runs them (`--side lockstep`: `train_lockstep`, the
plate's 3N runs as one group as ever, the postfix mix's N seeds as another); `--side both` prints the paired
differences (lockstep minus today, points of held-out success) with 95% t-intervals over seeds, per mix and
environment. `--save PATH` keeps one side's scores so the two sides can run apart (`--load PATH` reads the other;
a side loaded without some mix's scores, such as one saved before the postfix mix, trains only what it lacks).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass

import torch

from bench.outputs import refused, write
from breadth.core.learning import checkpoint
from breadth.core.learning.lockstep import LockstepJob, finetune_cheap, finetune_lockstep, train_lockstep
from breadth.core.learning.stacked import flops_per_step
from breadth.core.learning.train import demonstration_tensors, finetune, use_one_thread
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.world.arithmetic.problem import first_name
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.records import Diverged
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.runs.stats import t_quantile

LOCKSTEP_TARGET = 2.0  # lockstep runs per minute over today's
SINGLE_TARGET = 1.2  # the cheaper single run's over today's
SEQUENTIAL_RUNS = 3  # today's loop and the cheaper single run: runs timed per round


def plate_jobs(n: int, steps: int) -> list[tuple[list, FinetuneSettings]]:
    """n runs: the plate's three mixes in turn, seeds 0, 1, 2, ... (default settings but `steps`)."""
    mixes = [p.mix for p in PRESETS.values()]
    out = []
    for i in range(n):
        settings = FinetuneSettings(steps=steps, seed=i)
        out.append((mixes[i % len(mixes)].demonstrations(settings.seed), settings))
    return out


def mean_width(jobs) -> float:
    """Mean longest-demonstration width of a batch, for the FLOP count (padding trimmed per batch)."""
    widths = []
    for problems, _ in jobs:
        _, y = demonstration_tensors(problems)
        widths.append(int((y != -1).nonzero()[:, 1].max()) + 1)
    return statistics.mean(widths)


def matmul_rate(m: int, k: int, n: int, seconds: float = 0.5) -> float:
    """GFLOP/s of an (m, k) @ (k, n) product on this core, in CPU time, timed for about `seconds` of it."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b
    count, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        a @ b
        count += 1
    return 2 * m * k * n * count / (time.process_time() - start) / 1e9


def today_runs(base, jobs) -> tuple[float, float]:
    """Wall and CPU seconds for today's loop to fine-tune every job, one after another."""
    start, cpu = time.perf_counter(), time.process_time()
    for problems, settings in jobs:
        finetune(copy.deepcopy(base), problems, settings)
    return time.perf_counter() - start, time.process_time() - cpu


def cheap_runs(base, jobs) -> tuple[float, float]:
    """Wall and CPU seconds for the cheaper single run to fine-tune every job, one after another."""
    start, cpu = time.perf_counter(), time.process_time()
    for problems, settings in jobs:
        finetune_cheap(copy.deepcopy(base), problems, settings)
    return time.perf_counter() - start, time.process_time() - cpu


def lockstep_runs(base, jobs) -> tuple[float, float]:
    """Wall and CPU seconds to fine-tune every job as one lockstep group."""
    models = [copy.deepcopy(base) for _ in jobs]
    start, cpu = time.perf_counter(), time.process_time()
    finetune_lockstep(models, [p for p, _ in jobs], [s for _, s in jobs])
    return time.perf_counter() - start, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="turns each way takes (default 2)")
    parser.add_argument("--steps", type=int, default=400, help="steps per run (default 400, the plate's)")
    parser.add_argument("--groups", default="8,16", help="lockstep group sizes K (default 8,16)")
    parser.add_argument("--json", help="also write the measurements here")
    parser.add_argument("--paired", type=int, default=0, help="compare scores over this many seeds instead")
    parser.add_argument("--side", choices=("today", "lockstep", "both"), default="both")
    parser.add_argument("--save", help="--paired: write this side's scores here")
    parser.add_argument("--load", action="append", default=[], help="--paired: read scores saved by --save")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json) or refused(parser.prog, args.save, "--save"):  # before the work, not after it
        return 2
    use_one_thread()
    if args.paired:
        return paired(args)
    base, _ = checkpoint.load(BASE)
    groups = [int(k) for k in args.groups.split(",")]
    ways = {"today": SEQUENTIAL_RUNS, "cheap single": SEQUENTIAL_RUNS} | {f"lockstep K={k}": k for k in groups}
    timers = {"today": today_runs, "cheap single": cheap_runs} | {f"lockstep K={k}": lockstep_runs for k in groups}
    print(f"load average {os.getloadavg()[0]:.2f} at start; {args.steps} steps a run, one torch thread", flush=True)
    width = mean_width(plate_jobs(max(ways.values()), args.steps))
    flops = flops_per_step(base.config, FinetuneSettings().batch_size, round(width))
    per_minute: dict[str, list[float]] = {w: [] for w in ways}
    per_cpu_minute: dict[str, list[float]] = {w: [] for w in ways}
    gflops: dict[str, list[float]] = {w: [] for w in ways}
    rates: list[tuple[float, float]] = []
    for r in range(1, args.rounds + 1):
        C = base.config.n_embd
        rates.append((matmul_rate(1024, 1024, 1024), matmul_rate(208, C, 4 * C)))
        print(f"round {r}: matmul 1024^3 {rates[-1][0]:.1f} GFLOP/s, model's (208x96)@(96x384) {rates[-1][1]:.1f}")
        for way, n in ways.items():
            seconds, cpu = timers[way](base, plate_jobs(n, args.steps))
            per_minute[way].append(60 * n / seconds)
            per_cpu_minute[way].append(60 * n / cpu)
            gflops[way].append(flops * args.steps * n / cpu / 1e9)
            print(
                f"  {way:14s} {n:2d} runs in {seconds:6.1f} s wall, {cpu:6.1f} s CPU: "
                f"{per_minute[way][-1]:5.2f} runs/min, {per_cpu_minute[way][-1]:5.2f} per CPU-min, "
                f"{1000 * cpu / (n * args.steps):5.1f} CPU-ms a run-step, "
                f"{gflops[way][-1]:5.1f} GFLOP/s of CPU; load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    print(f"\nmedian over {args.rounds} rounds; ratio to today's loop of the same round, each round's in brackets:")
    missed = False
    for way in ways:
        wall = [a / b for a, b in zip(per_minute[way], per_minute["today"], strict=True)]
        cpu = [a / b for a, b in zip(per_cpu_minute[way], per_cpu_minute["today"], strict=True)]
        target = LOCKSTEP_TARGET if way.startswith("lockstep") else SINGLE_TARGET if way != "today" else None
        verdict = "" if target is None else (" met" if statistics.median(wall) >= target else " MISSED")
        missed |= verdict == " MISSED"
        print(
            f"  {way:14s} {statistics.median(per_minute[way]):5.2f} runs/min x{statistics.median(wall):.2f} "
            f"[{', '.join(f'{x:.2f}' for x in wall)}]; {statistics.median(per_cpu_minute[way]):5.2f} per CPU-min "
            f"x{statistics.median(cpu):.2f} [{', '.join(f'{x:.2f}' for x in cpu)}]; "
            f"{statistics.median(gflops[way]):5.1f} GFLOP/s"
            + ("" if target is None else f"; target x{target:g} (wall){verdict}")
        )
    big, own = statistics.median(r[0] for r in rates), statistics.median(r[1] for r in rates)
    print(f"  core's matmul rate: {big:.1f} GFLOP/s at 1024^3, {own:.1f} at the model's MLP product")
    write(
        args.json,
        {
            "per_minute": per_minute,
            "per_cpu_minute": per_cpu_minute,
            "gflops": gflops,
            "matmul": rates,
            "steps": args.steps,
        },
    )
    return 1 if missed else 0


PAIRED_ENVIRONMENTS = ("add_2x2", "add_3x1")  # the plate's two environments
PAIRED_HELD_OUT = 200  # held-out sums per environment, as `breadth plate --held-out 200` scores them


@dataclass(frozen=True)
class PairedMix:
    """A mix the paired comparison trains on: its name in saved scores, its label, the environments it is scored
    on, and the lockstep group its runs train in (one group per name)."""

    name: str
    label: str
    mix: Mix
    environments: tuple[str, ...]
    group: str


PAIRED = [PairedMix(name, p.label, p.mix, PAIRED_ENVIRONMENTS, "the plate") for name, p in PRESETS.items()] + [
    PairedMix(  # postfix calls: scored together, they were once read as infix (fixed in da7335f)
        "postfix_35_35",
        "postfix 35+35",
        Mix.of(**{"2a2_postfix": 35, "2s2_postfix": 35}),
        ("2a2_postfix", "2s2_postfix", "add_2x2"),
        "the postfix mix",
    )
]


def _scores(model, seed: int, environments: tuple[str, ...]) -> dict[str, float]:
    """Held-out success (%) on 200 sums of each of `environments`, the model playing alone."""
    from breadth.core.learning.evaluate import evaluate

    scores, _ = evaluate(model, seed, PAIRED_HELD_OUT, list(environments))
    return {f: 100 * scores[f].rate for f in environments}


def _alone(base, mix: PairedMix, seed: int) -> dict[str, float]:
    """One run by today's loop, scored alone."""
    model = copy.deepcopy(base)
    finetune(model, mix.mix.demonstrations(seed), FinetuneSettings(seed=seed))
    return _scores(model, seed, mix.environments)


def _together(runs: list[tuple[PairedMix, int]]) -> list[dict[str, float]]:
    """Runs trained as one lockstep group and scored together (`train_lockstep`, as a lockstep sweep runs them)."""
    jobs = [LockstepJob(mix.mix, FinetuneSettings(seed=seed), mix.environments) for mix, seed in runs]
    out = []
    for (mix, _), result in zip(runs, train_lockstep(jobs, held_out=PAIRED_HELD_OUT), strict=True):
        if isinstance(result, Diverged):
            raise SystemExit(f"lockstep {mix.name}: {result}")
        out.append({f: 100 * result[1].scores[f].rate for f in mix.environments})
    return out


def paired(args) -> int:
    """Score the paired mixes on seeds 0..N-1 by today's loop and/or in lockstep; print the paired differences."""
    seeds = range(args.paired)
    found: dict[str, dict[str, dict[str, float]]] = {}
    for path in args.load:
        with open(path) as f:
            found.update(json.load(f))
    base, _ = checkpoint.load(BASE)
    sides = ["today", "lockstep"] if args.side == "both" else [args.side]
    for side in sides:
        have = found.setdefault(side, {})
        start, trained = time.perf_counter(), 0
        if side == "today":
            for mix in PAIRED:
                for seed in seeds:
                    if f"{mix.name}/{seed}" not in have:
                        have[f"{mix.name}/{seed}"] = _alone(base, mix, seed)
                        trained += 1
                        print(f"today {mix.name} seed {seed}: {have[f'{mix.name}/{seed}']}", flush=True)
        else:
            for group in dict.fromkeys(mix.group for mix in PAIRED):
                runs = [(mix, seed) for mix in PAIRED if mix.group == group for seed in seeds]
                if all(f"{mix.name}/{seed}" in have for mix, seed in runs):
                    continue
                for (mix, seed), scores in zip(runs, _together(runs), strict=True):  # the whole group again
                    have[f"{mix.name}/{seed}"] = scores
                    print(f"lockstep {mix.name} seed {seed}: {scores}", flush=True)
                trained += len(runs)
        print(f"{side}: {trained} runs trained and scored in {time.perf_counter() - start:.0f} s", flush=True)
    write(args.save, {side: found[side] for side in sides})
    if "today" in found and "lockstep" in found:
        _print_paired(found, seeds)
    return 0


def _interval(diffs: list[float]) -> str:
    """Mean ± the 95% t-interval's half-width of paired differences."""
    n = len(diffs)
    half = t_quantile(n - 1) * statistics.stdev(diffs) / n**0.5 if n > 1 else float("nan")
    return f"{statistics.mean(diffs):+6.1f} ± {half:4.1f}"


def _score(scores: dict[str, float], env: str) -> float:
    """A side's score on `env`, saved under its name or, by a --save from before the rename, its first name
    (`two_digit` for `add_2x2`)."""
    return scores[env] if env in scores else scores[first_name(env)]


def _print_paired(found, seeds) -> None:
    """Per mix and environment: mean held-out success of each side and the paired difference with its 95%
    interval; then over each lockstep group's pairs."""
    print(
        f"\nheld-out success (%), {PAIRED_HELD_OUT} sums per environment, seeds 0-{len(seeds) - 1}; lockstep - today:"
    )
    every: dict[str, list[float]] = {}
    width = max(len(mix.label) for mix in PAIRED)
    for mix in PAIRED:
        keys = [f"{mix.name}/{s}" for s in seeds]
        if not all(k in found["today"] and k in found["lockstep"] for k in keys):
            print(f"  {mix.label:{width}s} not scored on both sides (scores loaded from before it was added?)")
            continue
        for env in mix.environments:
            a = [_score(found["today"][f"{mix.name}/{s}"], env) for s in seeds]
            b = [_score(found["lockstep"][f"{mix.name}/{s}"], env) for s in seeds]
            diffs = [y - x for x, y in zip(a, b, strict=True)]
            every.setdefault(mix.group, []).extend(diffs)
            print(
                f"  {mix.label:{width}s} {env:12s} today {statistics.mean(a):5.1f}  "
                f"lockstep {statistics.mean(b):5.1f}"
                f"  difference {_interval(diffs)}  (per seed {' '.join(f'{d:+.0f}' for d in diffs)})"
            )
    for group, diffs in every.items():
        mixes = [mix.label for mix in PAIRED if mix.group == group]
        print(f"  {group}, one lockstep group ({', '.join(mixes)}): all {len(diffs)} pairs: {_interval(diffs)}")


if __name__ == "__main__":
    sys.exit(main())
