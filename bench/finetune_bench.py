"""One run's cost on one core: a fine-tune with the default recipe plus scoring its held-out episodes.

For each of the plate's three mixes (seed 0, default settings, 30 held-out sums of every registered
environment: 300 episodes for the ten environments of the grid, as the app and `breadth plate` run them), the
fine-tune's seconds, the scoring's seconds and their sum, in this one process with one torch thread,
each mix `--repeat` times (the best and the median are shown: the machines are shared). Target: at
most 5 s a run (issue 9 set it for 60 episodes; scoring every environment is stricter).
`python -m bench.finetune_bench [--repeat 3] [--json PATH]`. A benchmark, not a unit test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from rich.console import Console
from rich.table import Table

from bench.outputs import refused, write
from breadth.core.learning.experiment import train_run
from breadth.core.storage.presets import PRESETS
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.runs.settings import FinetuneSettings

TARGET = 5.0  # seconds: one fine-tune plus scoring on one core


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per mix (default 3)")
    parser.add_argument("--json", help="also write the measurements here")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    settings = FinetuneSettings()
    console = Console()
    console.print(f"default recipe: {settings.to_dict()}; load average {os.getloadavg()[0]:.2f}")
    rows = {}
    for name, preset in PRESETS.items():
        totals, trains, evals = [], [], []
        for _ in range(args.repeat):
            _, record = train_run(preset.mix, settings, held_out=30)
            trains.append(record.train_seconds)
            evals.append(record.eval_seconds)
            totals.append(record.train_seconds + record.eval_seconds)
        rows[name] = {"train": trains, "eval": evals, "total": totals}
    episodes = 30 * len(REGISTERED)
    table = Table(title=f"one fine-tune + {episodes} held-out episodes, one torch thread (target <= {TARGET:g} s)")
    for column in ("mix", "fine-tune s (median)", "scoring s (median)", "total s best", "total s median", "target"):
        table.add_column(column, justify="right" if column != "mix" else "left")
    worst = 0.0
    for name, r in rows.items():
        median = statistics.median(r["total"])
        worst = max(worst, median)
        table.add_row(
            PRESETS[name].label,
            f"{statistics.median(r['train']):.2f}",
            f"{statistics.median(r['eval']):.2f}",
            f"{min(r['total']):.2f}",
            f"{median:.2f}",
            "met" if median <= TARGET else "MISSED",
        )
    console.print(table)
    write(args.json, {"settings": settings.to_dict(), "runs": rows, "target": TARGET})
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
