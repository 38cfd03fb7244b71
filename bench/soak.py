"""Soak: the real app and engine through many trainings and probes, with memory measured before and after.

Drives `BreadthApp` headless (Pilot) with its real engine process: `--trainings` fine-tunes of the
default mix (seeds 0, 1, ...), then `--probes` sums typed into the playground at the instant pace,
and reports the resident memory (VmRSS) of the engine and of the app's own process after the first
training and at the end. Targets: the engine grows by under 10% after its first training, the app by
under 10 MB. Everything it writes goes to a temporary BREADTH_HOME. A benchmark, not a unit test:
`python -m bench.soak [--trainings 20] [--probes 500] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from bench.outputs import refused, write

ENGINE_TARGET = 0.10  # the engine may grow by this share after its first training
APP_TARGET_MB = 10.0  # the app may grow by this many MB
TIMEOUT = 180.0  # seconds for any one thing to happen


def rss_mb(pid: int) -> float:
    """Resident memory of process `pid`, in MB (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def _wait(pilot, condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def _sums(n: int, seed: int = 0) -> list[str]:
    """`n` sums: two-digit, three single digits and some outside both environments."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(f"{rng.randrange(10, 100)}+{rng.randrange(10, 100)}")
        elif kind == 1:
            out.append("+".join(str(rng.randrange(10)) for _ in range(3)))
        else:
            out.append(f"{rng.randrange(100, 400)}+{rng.randrange(10)}")
    return out


async def soak(trainings: int, probes: int) -> dict:
    """Run the soak; the measurements."""
    from textual.widgets import Input

    from breadth.tui.app import BreadthApp

    app = BreadthApp()
    result: dict = {"trainings": trainings, "probes": probes}
    async with app.run_test(size=(100, 32)) as pilot:
        await _wait(pilot, lambda: app.supervisor.ready, "the engine")
        panel = app.train_panel
        result["engine_start_mb"] = rss_mb(app.supervisor.engine.pid)
        result["app_start_mb"] = rss_mb(os.getpid())
        t0 = time.perf_counter()
        for i in range(trainings):
            panel.query_one("#seed", Input).value = str(i)
            await pilot.press("f2")
            await _wait(pilot, lambda: app.training is not None or panel.status_is_error, "training to start")
            await _wait(pilot, lambda: app.training is None, "training to end")
            if panel.status_is_error:
                raise RuntimeError(f"training {i} failed: {panel.status}")
            if i == 0:
                gc.collect()
                result["engine_after_first_mb"] = rss_mb(app.supervisor.engine.pid)
                result["app_after_first_mb"] = rss_mb(os.getpid())
        result["train_seconds"] = time.perf_counter() - t0
        app.playground.pace = 0  # instant: the soak measures memory, not the show
        t0 = time.perf_counter()
        for n, text in enumerate(_sums(probes), start=1):
            app.playground.query_one("#sum", Input).value = text
            await pilot.press("enter")
            await _wait(pilot, lambda n=n: app.play.probe >= n and not app.playground.busy(), "a probe")
        result["probe_seconds"] = time.perf_counter() - t0
        await pilot.pause(0.5)
        gc.collect()
        result["engine_end_mb"] = rss_mb(app.supervisor.engine.pid)
        result["app_end_mb"] = rss_mb(os.getpid())
        result["models"] = len(app.entries)
    first = result.get("engine_after_first_mb", result["engine_start_mb"])
    result["engine_growth"] = (result["engine_end_mb"] - first) / first
    result["app_growth_mb"] = result["app_end_mb"] - result.get("app_after_first_mb", result["app_start_mb"])
    result["engine_ok"] = result["engine_growth"] < ENGINE_TARGET
    result["app_ok"] = result["app_growth_mb"] < APP_TARGET_MB
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--trainings", type=int, default=20)
    parser.add_argument("--probes", type=int, default=500)
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    with tempfile.TemporaryDirectory(prefix="breadth-soak-") as home:
        os.environ["BREADTH_HOME"] = home
        os.environ.pop("BREADTH_RUNS", None)
        result = asyncio.run(soak(args.trainings, args.probes))
    print(
        f"{result['trainings']} trainings in {result['train_seconds']:.0f} s, "
        f"{result['probes']} probes in {result['probe_seconds']:.0f} s; {result['models']} models in the table"
    )
    print(
        f"engine RSS: {result['engine_start_mb']:.0f} MB ready, {result['engine_after_first_mb']:.0f} MB after the "
        f"first training, {result['engine_end_mb']:.0f} MB at the end: {100 * result['engine_growth']:+.1f}% "
        f"(target under {100 * ENGINE_TARGET:.0f}%) {'ok' if result['engine_ok'] else 'MISSED'}"
    )
    print(
        f"app RSS: {result['app_start_mb']:.0f} MB ready, {result['app_after_first_mb']:.0f} MB after the first "
        f"training, {result['app_end_mb']:.0f} MB at the end: {result['app_growth_mb']:+.1f} MB "
        f"(target under {APP_TARGET_MB:.0f} MB) {'ok' if result['app_ok'] else 'MISSED'}"
    )
    write(args.json, result)
    return 0 if result["engine_ok"] and result["app_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
