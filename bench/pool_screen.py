"""Which environments does a model learn when trained on each alone? The screen behind the wide pool (`WIDE`).

Each chosen environment is trained on alone, N=1 of a curve: the shipped base fine-tuned on `--demos` of its
demonstrations for `--steps` steps (the plate's recipe otherwise), `--group` environments at a time in lockstep
(`core.learning.lockstep`: one batched model, each run its own data), then scored greedily on `--sums` sums of its
*validation* split, never the test sums a curve reports. An environment passes at `WIDE_BAR` of its validation sums,
mean over the seeds. The seeds are chosen apart from the curves' (0-9), so no run of the screen is a run of a curve.

Groups are cut the same way every time (the chosen environments in registry order, dealt to `--workers` parts
as names[p::workers], each part cut into groups of `--group`), so the same command gives the same rates on one
machine; a run resumes from its JSON (each finished group is written atomically) and runs only the groups missing.

`python -m bench.pool_screen --envs grid --seeds 100,101 --json out/pool-screen-grid.json` (the grid's 183 environments)
and `--envs three-digit` (the 55 with a three-digit number); `--wide` prints the names that pass as
`core.world.environments.pools.WIDE` lists them. A benchmark, not a unit test: ~23 min a seed for the grid on 2 cores.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import json
import sys
import time
from collections import Counter

from bench.outputs import refused, resumed, write
from breadth.core.learning import checkpoint
from breadth.core.learning.lockstep import finetune_lockstep
from breadth.core.learning.policy import greedy
from breadth.core.learning.train import use_one_thread
from breadth.core.results.grid import refuse_repeats
from breadth.core.storage.paths import BASE
from breadth.core.world.environments.pools import WIDE_BAR
from breadth.core.world.environments.registry import by_name, environments, order_of, three_digit
from breadth.core.world.episodes.scoring import play, tally
from breadth.core.world.runs.settings import FinetuneSettings


def chosen(text: str) -> list[str]:
    """`grid` (the grid's environments), `three-digit` (those with a three-digit number) or names, comma-separated."""
    if text == "grid":
        return [f.name for f in environments()]
    if text == "three-digit":
        return list(three_digit())
    return order_of(by_name(n.strip()).name for n in text.split(",") if n.strip())


def groups(names: list[str], workers: int, size: int) -> list[list[str]]:
    """The names dealt to `workers` parts (names[p::workers]), each part cut into groups of `size`, in order."""
    out = []
    for p in range(workers):
        part = names[p::workers]
        out += [part[g : g + size] for g in range(0, len(part), size)]
    return out


def screen(group: list[str], seed: int, steps: int, demos: int, sums: int) -> dict[str, dict]:
    """Train each environment of `group` alone, together in lockstep, and score each on its validation split."""
    use_one_thread()
    base, _ = checkpoint.load(BASE)
    models = [copy.deepcopy(base) for _ in group]
    problems = [by_name(n).demonstrations(seed, demos) for n in group]
    settings = [FinetuneSettings(steps=steps, seed=seed) for _ in group]
    start = time.perf_counter()
    finetune_lockstep(models, problems, settings)
    out = {}
    for name, model in zip(group, models, strict=True):
        model.eval()
        scored = play(greedy(model), by_name(name).validation(seed, sums), max_length=model.config.block_size)
        s = tally(scored, [name])[name]
        out[name] = {"solved": s.solved, "total": s.total, "failures": s.failures}
    out["_seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pool_screen", description=__doc__.splitlines()[0])
    p.add_argument("--envs", default="grid", help="grid, three-digit, or names (default grid)")
    p.add_argument("--seeds", default="100,101", help="training seeds, apart from the curves' (default 100,101)")
    p.add_argument("--steps", type=int, default=1000, help="steps of each run (default 1000)")
    p.add_argument("--demos", type=int, default=30, help="demonstrations of the environment (default 30)")
    p.add_argument("--sums", type=int, default=30, help="validation sums scored per seed (default 30)")
    p.add_argument("--group", type=int, default=16, help="environments trained together in lockstep (default 16)")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--json", required=True, help="results, read back to resume (written atomically)")
    p.add_argument("--wide", action="store_true", help="print the names that pass, as pools.WIDE lists them")
    args = p.parse_args(argv)
    try:
        names = chosen(args.envs)
        seeds = [int(s) for s in args.seeds.split(",")]
        refuse_repeats("--seeds", seeds)
        refuse_repeats("--envs", names)
    except (KeyError, ValueError) as e:  # GridError is a ValueError
        print(f"python -m bench.pool_screen: {e}", file=sys.stderr)
        return 2
    done = None if refused(p.prog, args.json) else resumed(p.prog, args.json)
    if done is None:
        return 2
    same = {"steps": args.steps, "demos": args.demos, "sums": args.sums, "group": args.group, "workers": args.workers}
    if done and done.get("settings") != same:
        print(f"python -m bench.pool_screen: {args.json} was screened with {done.get('settings')}", file=sys.stderr)
        return 2
    done["settings"] = same
    runs = done.setdefault("runs", {})  # seed -> name -> result
    todo = [
        (seed, g)
        for seed in seeds
        for g in groups(names, args.workers, args.group)
        if any(n not in runs.get(str(seed), {}) for n in g)
    ]
    start = time.perf_counter()
    with cf.ProcessPoolExecutor(args.workers) as pool:
        futures = {pool.submit(screen, g, seed, args.steps, args.demos, args.sums): (seed, g) for seed, g in todo}
        for f in cf.as_completed(futures):
            seed, g = futures[f]
            result = f.result()
            seconds = result.pop("_seconds")
            runs.setdefault(str(seed), {}).update(result)
            write(args.json, done)
            print(
                f"seed {seed}: {len(g)} environments in {seconds} s:", " ".join(f"{n} {result[n]['solved']}" for n in g)
            )
    print(f"{len(todo)} groups in {time.perf_counter() - start:.1f} s")
    report(names, seeds, runs, args.wide)
    return 0


def rates_of(names: list[str], seeds: list[int], runs: dict) -> dict[str, float]:
    """Each environment screened on every seed: its validation success, solved over scored, pooled over the seeds."""
    rates = {}
    for n in names:
        got = [runs[str(s)][n] for s in seeds if n in runs.get(str(s), {})]
        if len(got) == len(seeds):
            rates[n] = sum(r["solved"] for r in got) / sum(r["total"] for r in got)
    return rates


def passing(names: list[str], seeds: list[int], runs: dict) -> list[str]:
    """The environments of `names` (in their order) that reach WIDE_BAR over the seeds: the pool the screen chooses."""
    rates = rates_of(names, seeds, runs)
    return [n for n in names if rates.get(n, 0) >= WIDE_BAR]


def report(names: list[str], seeds: list[int], runs: dict, wide: bool) -> None:
    """Each environment's validation success, mean over the seeds, and how many pass, by operand count."""
    rates = rates_of(names, seeds, runs)
    passed = passing(names, seeds, runs)
    by_count, of_count = Counter(), Counter()
    for n in rates:
        count = by_name(n).at.operands
        of_count[count] += 1
        by_count[count] += n in passed
    counts = ", ".join(f"{by_count[c]} of {of_count[c]} with {c} numbers" for c in sorted(of_count))
    print(f"passed ({100 * WIDE_BAR:.0f}% of validation sums, mean over seeds {seeds}): {len(passed)} of {len(rates)}")
    print(f"  {counts}")
    if wide:
        print(json.dumps(passed))


if __name__ == "__main__":
    sys.exit(main())
