"""Does a recipe keep a pool's training environments learned as N grows? The measurement a pool's recipe is chosen by.

For each N and seed, N environments are drawn from the pool (`registry.draw`, seeded by the seed) and the shipped base
is fine-tuned on `--demos` demonstrations of each (fewer where an environment's demonstration pool is smaller), for a
curve's budget (each demonstration seen `--passes` times, at least `--min-steps`), by the recipe the flags give (the
plate's otherwise); then every training environment is scored on `--sums` sums of its *validation* split, never the
test sums a curve reports. Printed per N: the training environments' validation success over the seeds (mean over
environments, then over seeds), the least environment's, and the share of environments at 85% or more, the bar
issue 34 sets for a pool's recipe at every N. The JSON keeps, per environment, how its failed episodes failed and
the first few as written.

Each run trains alone (`core.learning.train.finetune`), one a process, `--workers` at a time; a run resumes from the
JSON (each finished run is written atomically, keyed by its N, seed and recipe), so the same command runs only what
is missing and prints the table. The seeds are chosen apart from the curves' (0-9) and the screen's (100, 101).
`python -m bench.pool_recipe --pool wide --n 16,64,128 --seeds 200,201 --json out/pool-recipe.json` (~20 min on 2
cores at the plate's recipe). A benchmark, not a unit test.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import statistics
import sys
import time

from bench.outputs import refused, resumed, write
from breadth.core.learning import checkpoint
from breadth.core.learning.evaluate import evaluate_environments
from breadth.core.learning.train import finetune, use_one_thread
from breadth.core.results.grid import refuse_repeats
from breadth.core.storage.header import CheckpointError, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.pools import POOLS, pool
from breadth.core.world.environments.registry import by_name, draw
from breadth.core.world.runs.settings import FinetuneSettings

BAR = 0.85  # issue 34: a pool's recipe keeps every training environment at this (validation) success at every N
PLATE_PASSES = 400 * 8 / 70  # times the plate's recipe shows each demonstration


def run(
    pool_name: str,
    n: int,
    seed: int,
    recipe: dict,
    demos: int,
    passes: float,
    min_steps: int,
    sums: int,
    warmup: int | None = None,
    base: str = str(BASE),
) -> dict:
    """One run: N environments of the pool drawn by `seed`, trained on together, each scored on its validation sums;
    with `warmup` (steps), the learning rate warms up and then decays to 0 by a cosine (`FinetuneSettings.warmup`)
    instead of staying constant."""
    use_one_thread()
    names = [f.name for f in draw(n, seed, pool(pool_name))]
    mix = Mix.of(**{name: min(demos, by_name(name).demo_pool) for name in names})  # a small space has fewer
    steps = max(min_steps, math.ceil(passes * mix.total / recipe.get("batch_size", 8)))
    settings = FinetuneSettings(steps=steps, seed=seed, warmup=warmup or 0, **recipe)
    model, _ = checkpoint.load(base)
    start = time.perf_counter()
    losses = finetune(model, mix.demonstrations(seed), settings)
    trained = time.perf_counter() - start
    model.eval()
    scores, _ = evaluate_environments(model, seed, sums, names, split="validation")
    return {
        "steps": steps,
        "final_loss": losses[-1],
        "train_seconds": round(trained, 1),
        "environments": {name: [s.solved, s.total] for name, s in scores.items()},
        "failures": {name: dict(s.failures) for name, s in scores.items() if s.failures},  # kind -> episodes
        "failed": {name: [f"{e.failure}: {e.text}" for e in s.examples] for name, s in scores.items() if s.examples},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pool_recipe", description=__doc__.splitlines()[0])
    p.add_argument("--pool", default="wide", choices=POOLS, help="the pool drawn from (default wide)")
    p.add_argument("--n", default="16,64,128", help="training environments per run (default 16,64,128)")
    p.add_argument(
        "--seeds", default="200,201", help="seeds, apart from the curves' and the screen's (default 200,201)"
    )
    p.add_argument("--demos", type=int, default=30, help="demonstrations of each environment (default 30)")
    p.add_argument("--passes", type=float, default=PLATE_PASSES, help="times each demonstration is seen (the plate's)")
    p.add_argument("--min-steps", type=int, default=1000, help="never fewer steps (default 1000: the screen's N=1)")
    p.add_argument("--lr", type=float, help="learning rate (default: the plate's)")
    p.add_argument("--dropout", type=float, help="dropout (default: the plate's)")
    p.add_argument("--batch-size", type=int, help="demonstrations per step (default: the plate's)")
    p.add_argument(
        "--decay",
        type=int,
        metavar="WARMUP",
        help="warm the learning rate up over WARMUP steps, then decay it to 0 by a cosine (default: constant)",
    )
    p.add_argument("--base", help="the model fine-tuned (default: the shipped base)")
    p.add_argument("--sums", type=int, default=30, help="validation sums per environment (default 30)")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--json", required=True, help="results, read back to resume (written atomically)")
    args = p.parse_args(argv)
    if refused(p.prog, args.json):  # before any run, not after hours of them
        return 2
    given = (("lr", args.lr), ("dropout", args.dropout), ("batch_size", args.batch_size))
    recipe = {k: v for k, v in given if v is not None}  # a 0 given (--dropout 0) is a value, not the plate's
    try:
        sizes = [int(x) for x in args.n.split(",")]
        seeds = [int(x) for x in args.seeds.split(",")]
        refuse_repeats("--n", sizes)
        refuse_repeats("--seeds", seeds)
        for n in sizes:  # every N draws from the pool: refused here, before any run, not in a worker
            draw(n, 0, pool(args.pool))
        FinetuneSettings(**recipe)  # a recipe outside the settings' ranges: one line, before any run
    except (ValueError, TypeError) as e:  # GridError and EnvError are ValueErrors
        print(f"python -m bench.pool_recipe: {e}", file=sys.stderr)
        return 2
    budget = {"pool": args.pool, "demos": args.demos, "passes": args.passes, "min_steps": args.min_steps}
    if args.decay is not None:  # in the key only when asked, so runs at a constant rate keep theirs
        if args.decay < 1:
            print(f"python -m bench.pool_recipe: --decay takes warm-up steps from 1, not {args.decay}", file=sys.stderr)
            return 2
        budget["decay_warmup"] = args.decay
    if args.base is not None:  # in the key only when given, as --decay; by its weights, so a remade file is not reused
        try:
            budget["base"] = weights_hash(args.base)
        except CheckpointError as e:  # its message names the path
            print(f"python -m bench.pool_recipe: --base: {e}", file=sys.stderr)
            return 2

    def key(n: int, seed: int) -> str:
        return json.dumps({**budget, "recipe": recipe, "n": n, "seed": seed, "sums": args.sums}, sort_keys=True)

    done = resumed(p.prog, args.json)
    if done is None:
        return 2
    todo = [(n, s) for n in sorted(sizes, reverse=True) for s in seeds if key(n, s) not in done]  # longest first
    start = time.perf_counter()
    with cf.ProcessPoolExecutor(args.workers) as workers:
        futures = {
            workers.submit(
                run,
                args.pool,
                n,
                s,
                recipe,
                args.demos,
                args.passes,
                args.min_steps,
                args.sums,
                args.decay,
                args.base or str(BASE),
            ): (n, s)
            for n, s in todo
        }
        for f in cf.as_completed(futures):
            n, s = futures[f]
            done[key(n, s)] = f.result()
            write(args.json, done)
            print(
                f"N={n} seed {s}: {done[key(n, s)]['steps']} steps in {done[key(n, s)]['train_seconds']} s", flush=True
            )
    print(f"{len(todo)} runs in {time.perf_counter() - start:.1f} s; recipe {recipe or 'the plate'}, {budget}")
    print("N | steps | training environments' validation success, mean [per seed] | least | at 85% or more")
    for n in sizes:
        got = [done[key(n, s)] for s in seeds if key(n, s) in done]
        if not got:
            continue
        means = [statistics.mean(a / b for a, b in r["environments"].values()) for r in got]
        every = [a / b for r in got for a, b in r["environments"].values()]
        print(
            f"{n} | {got[0]['steps']} | {100 * statistics.mean(means):.0f}% "
            f"[{' '.join(f'{100 * m:.0f}' for m in means)}] | {100 * min(every):.0f}% | "
            f"{100 * sum(x >= BAR for x in every) / len(every):.0f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
