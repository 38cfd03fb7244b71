"""Learning from reward, the experiments of issue 19: resumable, every run a JSON record, every figure drawn from them.

`python -m bench.rl_experiments choose` picks the reward recipe's learning rate and group size on the
**validation** split (seeds 100-102, which no reported number uses); `python -m bench.rl_experiments run
--lr L --group G` runs the three experiments on seeds 0-4 with that choice and reports on the **test** split;
`python -m bench.rl_experiments report` prints the tables and draws the figures (docs/rl-*.png). Every run
is a task whose result is written atomically as `<folder>/<name>.json` (its `RunMeta` and validation
scores), so a stopped command resumes where it was, and none is run twice. Tasks run in worker processes
(one torch thread each) that die with this one.

The starting models ("warm starts") are the plate's fine-tune (400 steps of 8 demonstrations, the shipped
base) on `add_2x2=70` plus `k` three-digit demonstrations, k = 0, 1, 2, 5, 10; each seed fine-tunes
its own. The experiments:

1. From the two-digit-only model (k = 0), reward on three-digit training sums (the 200 demonstration
   problems of `add_3x1=200`, prompts only): pass@G and the other metrics step by step.
2. From each warm start k, reward on both environments' training sums (`BOTH_MIX`: on three-digit sums
   alone reward makes the model forget two-digit sums at every learning rate that changes anything,
   which the choice's first grid shows); beside it, the same episodes spent on demonstrations instead
   (fine-tuning from the warm start on the demonstrations of those same sums for as many demonstration
   episodes as the reward run sampled: steps x prompts x group / 8 steps of 8).
3. On the plate's three mixes, from the base: demonstrations (the plate, 3,200 episodes) against reward on
   the same mix's training sums at equal episodes (3,200: 25 steps of 16 x 8) and at the reward run's
   default (200 steps, 25,600 episodes).
4. Breadth under reward (`curve`): the shipped curve's protocol on the 12 environments of two-number sums
   (`breadth curve --where operands=2`: 4 held out, 3 splits, N = 1, 2, 4, 8, the ceiling), each run a
   small warm start (`CURVE_DEMOS` demonstrations per training environment, the plate's recipe) and then
   reward on up to `CURVE_PROMPTS` training sums per training environment; scored on the test splits of
   its training and held-out environments after each stage. `curve --on three` (issue 34) runs it where
   breadth of demonstrations carries: the README's curve on the 40 environments of three-number sums
   (`breadth curve --where operands=3 --held 8`: 3 splits, 30 demonstrations each) at N = 8 and 32 and its
   ceiling, each warm start that curve's run, then the same reward.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

HELD_OUT = 100  # test sums per environment (each environment's test split holds at least this many)
VALIDATION = 100  # validation sums per environment, for choosing
WARM_KS = (0, 1, 2, 5, 10)
# add_3x1 and add_2x2 under their old names: the keys of each run JSON's `validation` and its record's `before`
# (`reward:three_digit`) in the committed results/rl-experiments.tar.xz, which the report reads by these names
TARGET = "three_digit"
KNOWN = "two_digit"
SHOWN = {KNOWN: "add_2x2", TARGET: "add_3x1"}  # the names tables and figures give them
RL_MIX = "add_3x1=200"  # experiment 1: reward on three-digit sums only, as issue 19's trial
BOTH_MIX = "add_2x2=100,add_3x1=100"  # experiment 2 and the choice: reward on both environments' sums
PLATE = ("add_2x2=70", "add_3x1=70", "add_2x2=35,add_3x1=35")
CHOOSE_SEEDS = (100, 101, 102)
CHOOSE_K = 2
CHOOSE_LRS = (3e-5, 1e-4, 3e-4, 1e-3)
CHOOSE_GRID = tuple((lr, g) for lr in CHOOSE_LRS for g in (4, 8, 16))  # prompts x group = 128 episodes
EPISODES = 128  # episodes sampled per reward step, whatever the group size
DEMO_BATCH = 8  # demonstrations per fine-tuning step (the plate's)
CURVE_DEMOS = 5  # demonstrations per training environment in a curve run's warm start
CURVE_PROMPTS = 100  # reward's training sums per training environment (fewer if its demonstration pool is smaller)
CURVE_HELD_OUT = 30  # test sums per environment, as `breadth curve` scores


@dataclass(frozen=True)
class CurveSetup:
    """Which curve experiment 4 runs under reward: its pool (`where`), environments held out per split, the N values
    and the warm starts' demonstrations per training environment it was run with (the first is the default)."""

    title: str  # for tables and figures
    operands: str  # the pool: `breadth curve --where operands=...`
    held: int
    sizes: tuple[int, ...]
    demos: tuple[int, ...]
    prefix: str  # of its runs' names, before the demonstrations (the first setup's default has none)


SETUPS = {
    "two": CurveSetup("two-number sums, 4 of 12 held out", "2", 4, (1, 2, 4, 8), (CURVE_DEMOS, 15), "c"),
    "three": CurveSetup("three-number sums, 8 of 40 held out", "3", 8, (8, 32), (30,), "t"),
}
CURVES = tuple((on, d) for on, setup in SETUPS.items() for d in setup.demos)  # every curve experiment 4 was run with


def warm_mix(k: int) -> str:
    return "add_2x2=70" + (f",add_3x1={k}" if k else "")


def task(name: str, kind: str, mix: str, seed: int, start: str | None = None, **settings) -> dict:
    """A run to do: its name (its file), demonstrations or reward, on which mix, from which run's model."""
    return {"name": name, "kind": kind, "mix": mix, "seed": seed, "start": start, "settings": settings}


def rl_settings(lr: float, group: int, steps: int = 200) -> dict:
    return {"lr": lr, "group": group, "prompts": EPISODES // group, "steps": steps}


def warm_tasks(seeds) -> list[dict]:
    return [task(f"warm-k{k}-s{s}", "finetune", warm_mix(k), s) for k in WARM_KS for s in seeds]


def choose_tasks(seeds=CHOOSE_SEEDS) -> list[dict]:
    """The choice's grid: first on three-digit sums only (lr x group), then on both environments' sums (lr, group 8)."""
    out = [task(f"warm-k{CHOOSE_K}-s{s}", "finetune", warm_mix(CHOOSE_K), s) for s in seeds]
    for lr, g in CHOOSE_GRID:
        for s in seeds:
            start = f"warm-k{CHOOSE_K}-s{s}"
            out.append(task(f"choose-lr{lr:g}-g{g}-s{s}", "reward", RL_MIX, s, start, **rl_settings(lr, g)))
    for lr in CHOOSE_LRS:
        for s in seeds:
            start = f"warm-k{CHOOSE_K}-s{s}"
            out.append(task(f"choose2-lr{lr:g}-g8-s{s}", "reward", BOTH_MIX, s, start, **rl_settings(lr, 8)))
    return out


def run_tasks(lr: float, group: int, seeds) -> list[dict]:
    """Experiments 1-3 on `seeds` with the chosen learning rate and group size."""
    rl = rl_settings(lr, group)
    episodes = rl["steps"] * EPISODES
    out = warm_tasks(seeds)
    out += [task(f"rl1-s{s}", "reward", RL_MIX, s, f"warm-k0-s{s}", **rl) for s in seeds]
    for k in WARM_KS:
        for s in seeds:
            start = f"warm-k{k}-s{s}"
            out.append(task(f"rl-k{k}-s{s}", "reward", BOTH_MIX, s, start, **rl))
            out.append(task(f"demo-k{k}-s{s}", "finetune", BOTH_MIX, s, start, steps=episodes // DEMO_BATCH))
    for i, mix in enumerate(PLATE):
        for s in seeds:
            if i:  # the two-digit plate model is warm start k = 0
                out.append(task(f"plate{i}-s{s}", "finetune", mix, s))
            out.append(task(f"base-rl{i}-25-s{s}", "reward", mix, s, None, **rl_settings(lr, group, 25)))
            out.append(task(f"base-rl{i}-200-s{s}", "reward", mix, s, None, **rl))
    return out


def curve_plan(seeds, demos: int = CURVE_DEMOS, on: str = "two"):
    """The shipped curve's splits and N on the setup's pool, with its warm start's demonstrations per environment."""
    from breadth.core.results.breadth_curve import CurvePlan
    from breadth.core.world.environments.registry import where
    from breadth.core.world.runs.settings import FinetuneSettings

    setup = SETUPS[on]
    pool = tuple(f.name for f in where(operands=setup.operands))
    return CurvePlan(pool, setup.held, 3, setup.sizes, demos, tuple(seeds), FinetuneSettings(), CURVE_HELD_OUT)


def curve_prefix(demos: int, on: str = "two") -> str:
    """The names' prefix of a curve's runs: `c` for the two-number default warm start, `c15` for 15 demonstrations
    each, `t30` for the three-number curve's."""
    setup = SETUPS[on]
    return setup.prefix if (on, demos) == ("two", CURVE_DEMOS) else f"{setup.prefix}{demos}"


def curve_tasks(lr: float, group: int, seeds, demos: int = CURVE_DEMOS, on: str = "two") -> list[dict]:
    """Per seed, split and N (0: the ceiling): the warm start, then reward on the same environments' sums."""
    from breadth.core.results.breadth_curve import CEILING
    from breadth.core.world.environments.mix import Mix
    from breadth.core.world.environments.registry import by_name

    plan = curve_plan(seeds, demos, on)
    prefix = curve_prefix(demos, on)
    out = []
    for job, split, n in plan.jobs("rl"):
        trained = [name for name, _ in job.cell.mix.counts]
        held = plan.split(split)[0]
        tag = f"c{split}-n{n if n != CEILING else 'ceil'}-s{job.seed}"
        scored = {"families": list(job.environments), "held_out": CURVE_HELD_OUT}  # a task key: run JSONs hold it
        steps = {"steps": job.settings.steps}
        out.append(task(f"{prefix}warm-{tag}", "finetune", job.cell.mix.spec(), job.seed, None, **steps) | scored)
        rl_mix = Mix.of(**{name: min(CURVE_PROMPTS, by_name(name).demo_pool) for name in trained}).spec()
        rl = rl_settings(lr, group)
        out.append(task(f"{prefix}rl-{tag}", "reward", rl_mix, job.seed, f"{prefix}warm-{tag}", **rl) | scored)
        out[-1]["held"] = out[-2]["held"] = held
    return out


def model_path(folder: Path, name: str) -> Path:
    return folder / f"{name}.safetensors"


def do(spec: dict) -> dict:
    """In a worker: run one task (its start's model already made), write its record and, for a warm start, its model."""
    from breadth.core.learning import checkpoint
    from breadth.core.learning.experiment import train_run
    from breadth.core.learning.policy import greedy
    from breadth.core.storage.files import write_atomic
    from breadth.core.storage.paths import BASE
    from breadth.core.world.environments.mix import Mix
    from breadth.core.world.environments.registry import by_name
    from breadth.core.world.episodes.scoring import play, tally
    from breadth.core.world.runs.settings import FinetuneSettings, RewardSettings

    folder = Path(spec["folder"])
    made = FinetuneSettings if spec["kind"] == "finetune" else RewardSettings
    settings = made(**spec["settings"], seed=spec["seed"])
    start = model_path(folder, spec["start"]) if spec["start"] else BASE
    began = time.perf_counter()
    model, record = train_run(
        Mix.parse(spec["mix"]),
        settings,
        start,
        spec.get("held_out", HELD_OUT),
        environments=spec.get("families"),  # a task key: run JSONs hold it
    )
    names = [KNOWN, TARGET]
    problems = [p for n in names for p in by_name(n).validation(spec["seed"], VALIDATION)]
    validation = {
        n: s.rate for n, s in tally(play(greedy(model), problems, max_length=model.config.block_size), names).items()
    }
    if spec["name"].startswith("warm-") or spec["name"].startswith("plate") or "warm-c" in spec["name"]:
        # the runs others start from: warm starts (`warm-k..`, a curve's `cwarm-c..`, `t30warm-c..`), the plate's
        checkpoint.save(model, record, model_path(folder, spec["name"]))
    out = {
        "task": {k: v for k, v in spec.items() if k != "folder"},
        "record": record.to_dict(),
        "validation": validation,
        "seconds": time.perf_counter() - began,
    }
    write_atomic(folder / f"{spec['name']}.json", json.dumps(out, indent=1).encode())
    return out


def _worker_start(parent: int) -> None:
    from breadth.core.sweeps.sweep import die_with

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent)


def execute(tasks: list[dict], folder: Path, workers: int) -> None:
    """Run every task not done yet, a task only once its start's model exists; workers die with this process."""
    folder.mkdir(parents=True, exist_ok=True)
    todo = {t["name"]: t for t in tasks if not (folder / f"{t['name']}.json").exists()}
    print(f"{len(tasks)} runs, {len(tasks) - len(todo)} done already, {len(todo)} to run", flush=True)
    began = time.perf_counter()
    with ProcessPoolExecutor(workers, initializer=_worker_start, initargs=(os.getpid(),)) as pool:
        running: dict = {}
        done = 0
        while todo or running:
            ready = [t for t in todo.values() if t["start"] is None or (folder / f"{t['start']}.json").exists()]
            for t in ready[: max(0, workers * 2 - len(running))]:
                running[pool.submit(do, {**t, "folder": str(folder)})] = todo.pop(t["name"])["name"]
            if not running:
                raise SystemExit(f"cannot start: {sorted(todo)[0]} waits for a run that is not in the list")
            finished = next(as_completed(running))
            name = running.pop(finished)
            out = finished.result()
            done += 1
            print(f"{done:4d} {name:28s} {out['seconds']:6.1f} s  ({time.perf_counter() - began:7.1f} s)", flush=True)


def record_all(tasks: list[dict], folder: Path, store_path: Path) -> int:
    """Keep every finished run of `tasks` in a results store (one writer: this process), so that `breadth runs`,
    `breadth report` and the app list them like any other run; runs already there are left as they are."""
    from breadth.core.learning.experiment import versions
    from breadth.core.storage.header import weights_hash
    from breadth.core.storage.paths import BASE
    from breadth.core.storage.store import Store, StoredRun, run_key
    from breadth.core.world.runs.records import RunMeta

    added = 0
    with Store(store_path) as store:
        for t in tasks:
            path = folder / f"{t['name']}.json"
            if not path.exists():
                continue
            record = RunMeta.from_dict(json.loads(path.read_text())["record"])
            start = model_path(folder, t["start"]) if t["start"] else BASE
            base_hash = weights_hash(start)
            key = run_key(record.mix, record.settings, record.held_out, base_hash, t.get("families"))  # a task key
            kept = model_path(folder, t["name"])
            stored = StoredRun(key, record, base_hash, "rl-exp", str(kept) if kept.exists() else None, versions())
            added += store.add(stored)
    return added


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / f"{name}.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rl_experiments", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("choose", "run", "curve", "report", "store"))
    parser.add_argument("--store", type=Path, help="with `store`: the results store to keep the finished runs in")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--folder", type=Path, default=Path("out/rl-experiments"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--figures", type=Path, default=Path("docs"))
    parser.add_argument(
        "--demos", type=int, help="with `curve`: the warm start's demonstrations (default: its setup's)"
    )
    parser.add_argument("--on", choices=SETUPS, default="two", help="with `curve`: two- or three-number sums")
    args = parser.parse_args(argv)
    from breadth.core.results.grid import parse_seeds

    seeds = parse_seeds(args.seeds)
    if args.what == "choose":
        execute(choose_tasks(), args.folder, args.workers)
    elif args.what == "curve":
        demos = args.demos or SETUPS[args.on].demos[0]
        execute(curve_tasks(args.lr, args.group, seeds, demos, args.on), args.folder, args.workers)
    elif args.what == "run":
        execute(run_tasks(args.lr, args.group, seeds), args.folder, args.workers)
    elif args.what == "store":
        if args.store is None:
            parser.error("`store` needs --store PATH")
        tasks = choose_tasks() + run_tasks(args.lr, args.group, seeds)
        tasks += [t for on, d in CURVES for t in curve_tasks(args.lr, args.group, seeds, d, on)]
        unique = list({t["name"]: t for t in tasks}.values())
        print(f"{record_all(unique, args.folder, args.store)} runs added to {args.store}")
    else:
        from bench.rl_report import report

        report(args.folder, args.lr, args.group, seeds, args.figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
