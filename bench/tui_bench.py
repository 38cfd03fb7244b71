"""Benchmark the app: first frame in a real terminal, key latency while training (and racing), loss-plot redraw
rate, Stop latency, and how long a race of four models takes at the instant pace."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench.outputs import refused, write
from bench.tui_common import TRAIN_TIMEOUT, BenchError
from bench.tui_in_app import in_app
from bench.tui_processes import Tmux, bare_import, cmdline, first_frame, ours
from bench.tui_report import report, report_race, report_stop


def main(argv: list[str] | None = None) -> int:
    """Run the three measurements, print them, optionally write them as JSON; 1 on any failure."""
    parser = argparse.ArgumentParser(prog="python -m bench.tui_bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="first-frame runs (default 5)")
    parser.add_argument("--samples", type=int, default=150, help="keys per latency measurement (default 150)")
    parser.add_argument("--json", metavar="PATH", help="also write every number to PATH")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    if args.runs < 1 or args.samples < 1:
        parser.error("--runs and --samples must be at least 1")

    from rich.console import Console

    console = Console()
    tmp = Path(tempfile.mkdtemp(prefix="breadth-bench-"))
    marker = str(tmp / "runs")
    os.environ["BREADTH_RUNS"] = marker  # trained models and the engine log go here, not under ~
    env = dict(os.environ)
    tmux = None
    data: dict = {
        "runs": args.runs,
        "samples": args.samples,
        "interval_s": 0.020,
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg(),
    }
    code = 0
    try:
        tmux = Tmux(env)
        tmux.start()
        times, killed = [], []
        for run in range(args.runs):
            elapsed, cmds = first_frame(tmux, run)
            times.append(elapsed)
            killed.append(cmds)
            time.sleep(0.3)  # let the killed processes' memory go before the next run
        tmux.stop()
        tmux = None
        data["first_frame"] = {
            "times_s": times,
            "killed_per_run": killed,
            "python_s": bare_import("pass", env),
            "import_torch_s": bare_import("import torch", env),
        }
        data["in_app"] = asyncio.run(asyncio.wait_for(in_app(args.samples, data["interval_s"]), TRAIN_TIMEOUT + 150))
    except BenchError as e:
        print(f"bench failed: {e}", file=sys.stderr)
        code = 1
    except TimeoutError:
        print("bench failed: the in-app measurement did not finish in time", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print("bench interrupted", file=sys.stderr)
        code = 130
    except Exception as e:  # noqa: BLE001 -- one line, no traceback
        print(f"bench failed: {type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    finally:
        if tmux is not None:
            tmux.stop()
        leftovers = ours(marker)
        if leftovers:
            cmds = [cmdline(pid) for pid in leftovers]
            for pid in leftovers:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            print(f"bench: killed {len(leftovers)} leftover process(es) of ours: {cmds}", file=sys.stderr)
            data["leftovers"] = cmds
            code = code or 1
        shutil.rmtree(tmp, ignore_errors=True)
    if code:
        return code
    data["load_after"] = os.getloadavg()
    report(data, console)
    report_stop(data, console)
    report_race(data, console)
    write(args.json, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
