"""What learning from reward costs on one core: one step of 16 prompts x 8 episodes, and a 200-step run.

Runs the real trainer (`core.learning.reward.from_reward`, one torch thread) from shipped models on
three-digit training sums, timing each step's sampling (every episode of the step decoded together with
the calculator, judged, turned into tensors) apart from the rest (the teacher-forced pass over the
episodes that carry an advantage, the backward pass and the AdamW step). Two cases, because the second
part's cost depends on how many groups carry a gradient: `two_digit_70` on three-digit sums (issue 19's
first experiment: almost every group all wrong) and `mix_35_35` on three-digit sums (most groups mixed).
Wall seconds and this process's CPU seconds are both shown, with the load average: the machines are
shared, and wall time on a busy machine measures the neighbours. Targets (issue 19): at most 150 ms a
step, at most 40 s for 200 steps. `python -m bench.rl_bench [--steps 20] [--run 200] [--json PATH]`.
A benchmark, not a unit test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from rich.console import Console
from rich.table import Table

from bench.outputs import refused, write
from breadth.core.learning import checkpoint, reward
from breadth.core.learning.train import use_one_thread
from breadth.core.storage.presets import checkpoint_path
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.settings import RewardSettings

STEP_TARGET = 0.150  # seconds a step of 16 prompts x 8 episodes
RUN_TARGET = 40.0  # seconds for 200 steps
CASES = (("two_digit_70", "add_3x1=200"), ("mix_35_35", "add_3x1=200"))  # shipped model, the mix reward trains on


class Clock:
    """Wall and CPU seconds spent in the wrapped sampling, per step."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def around(self, fn):
        def timed(*args, **kwargs):
            w, c = time.perf_counter(), time.process_time()
            out = fn(*args, **kwargs)
            self.wall += time.perf_counter() - w
            self.cpu += time.process_time() - c
            return out

        return timed


def measure(start: str, mix: str, steps: int) -> dict:
    """Train `steps` steps from `start` on `mix` and time each: sampling, the rest, the step, in wall and CPU s."""
    model, _ = checkpoint.load(checkpoint_path(start))
    settings = RewardSettings(steps=steps, prompts=16, group=8, seed=0)
    clock = Clock()
    sample, batch_of = reward.sample, reward.batch_of
    reward.sample, reward.batch_of = clock.around(sample), clock.around(batch_of)
    rows: list[dict] = []
    mark = {"wall": time.perf_counter(), "cpu": time.process_time()}

    def on_step(stats) -> bool:
        wall, cpu = time.perf_counter(), time.process_time()
        rows.append(
            {
                "step_wall": wall - mark["wall"],
                "step_cpu": cpu - mark["cpu"],
                "sample_wall": clock.wall,
                "sample_cpu": clock.cpu,
                "reward": stats.metrics["reward"],
                "pass": stats.metrics["pass"],
            }
        )
        clock.wall = clock.cpu = 0.0
        mark["wall"], mark["cpu"] = time.perf_counter(), time.process_time()
        return True

    try:
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        reward.from_reward(model, Mix.parse(mix), settings, on_step)
        total_wall, total_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    finally:
        reward.sample, reward.batch_of = sample, batch_of
    return {"steps": rows, "total_wall": total_wall, "total_cpu": total_cpu}


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows[2:] or rows)  # the first two steps warm the allocator up


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="steps timed per case (default 20)")
    parser.add_argument("--run", type=int, default=200, help="steps of the whole run timed (default 200)")
    parser.add_argument("--json", help="also write the measurements here")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    use_one_thread()
    console = Console()
    console.print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    out: dict = {"step_target": STEP_TARGET, "run_target": RUN_TARGET, "steps": {}, "runs": {}}
    table = Table(
        title=f"one step of 16 prompts x 8 episodes, one torch thread (target <= {STEP_TARGET * 1e3:g} ms); "
        "median wall ms (CPU ms)"
    )
    for column in ("from", "on", "sampling ms", "backward ms", "step ms", "mean reward"):
        table.add_column(column, justify="left" if column in ("from", "on") else "right")
    met = True
    for start, mix in CASES:
        rows = measure(start, mix, args.steps)["steps"]
        out["steps"][f"{start} on {mix}"] = rows
        step, sampling = _median(rows, "step_wall"), _median(rows, "sample_wall")
        step_cpu, sampling_cpu = _median(rows, "step_cpu"), _median(rows, "sample_cpu")
        met &= step <= STEP_TARGET
        table.add_row(
            start,
            mix,
            f"{sampling * 1e3:.0f} ({sampling_cpu * 1e3:.0f})",
            f"{(step - sampling) * 1e3:.0f} ({(step_cpu - sampling_cpu) * 1e3:.0f})",
            f"{step * 1e3:.0f} ({step_cpu * 1e3:.0f})",
            f"{statistics.mean(r['reward'] for r in rows):.3f}",
        )
    console.print(table)
    runs = Table(title=f"a {args.run}-step run (target <= {RUN_TARGET:g} s)")
    for column in ("from", "on", "wall s", "CPU s", "reward, last 20 steps"):
        runs.add_column(column, justify="left" if column in ("from", "on") else "right")
    for start, mix in CASES:
        found = measure(start, mix, args.run)
        out["runs"][f"{start} on {mix}"] = {k: v for k, v in found.items() if k != "steps"}
        met &= found["total_wall"] <= RUN_TARGET
        last = found["steps"][-20:]
        runs.add_row(
            start,
            mix,
            f"{found['total_wall']:.1f}",
            f"{found['total_cpu']:.1f}",
            f"{statistics.mean(r['reward'] for r in last):.3f}",
        )
    console.print(runs)
    console.print(f"load average after: {os.getloadavg()[0]:.2f}; targets {'met' if met else 'MISSED'}")
    write(args.json, out)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
