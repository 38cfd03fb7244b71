"""The benchmark's in-app side (Textual's Pilot, the real engine): key latency while training and racing, Stop,
and how long four-model races take."""

from __future__ import annotations

import asyncio
import time

from bench.tui_common import (
    ENGINE_TIMEOUT,
    KEY_TIMEOUT,
    RACE_LANES,
    RACE_RUNS,
    RACE_SUMS,
    RACE_TIMEOUT,
    STEPS,
    STOP_RUNS,
    TRAIN_TIMEOUT,
    BenchError,
)


async def _wait(pilot, condition, timeout: float, what: str) -> None:
    """Let the app run until `condition()` holds; BenchError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise BenchError(f"timed out after {timeout:g}s waiting for {what}")
        await pilot.pause(0.05)


async def key_latencies(app, box, samples: int, interval: float) -> list[float]:
    """Seconds from posting a Key("1") to the app until the focused Input's value changed, `samples` times.

    The event takes the driver's route (app queue, priority bindings, forwarded to the focused
    widget); a tight `asyncio.sleep(0)` loop notices the change. The Input is cleared every 30 keys.
    """
    from textual import events

    out = []
    for _ in range(samples):
        if app.focused is not box:
            box.focus()
            await asyncio.sleep(interval)
        if len(box.value) >= 30:
            box.value = ""
            await asyncio.sleep(interval)
        before = box.value
        t0 = time.perf_counter()
        app.post_message(events.Key("1", "1"))
        deadline = t0 + KEY_TIMEOUT
        while box.value == before:
            if time.perf_counter() > deadline:
                raise BenchError(f"a key was not handled within {KEY_TIMEOUT:g}s")
            await asyncio.sleep(0)
        out.append(time.perf_counter() - t0)
        await asyncio.sleep(interval)
    box.value = ""
    return out


async def in_app(samples: int, interval: float) -> dict:
    """Key latency idle and while training 400 steps, the loss plot's redraw rate, and one redraw's cost."""
    from textual.widgets import Input

    from breadth.tui.app import BreadthApp
    from breadth.tui.widgets.loss_plot import LossPlot

    app = BreadthApp()
    result: dict = {}
    async with app.run_test(size=(100, 32)) as pilot:
        t0 = time.perf_counter()
        await _wait(pilot, lambda: app.supervisor.ready, ENGINE_TIMEOUT, "the engine to be ready")
        result["engine_ready_s"] = time.perf_counter() - t0
        box = app.playground.query_one("#sum", Input)
        plot = app.train_panel.query_one(LossPlot)
        box.focus()
        await pilot.pause(0.2)

        result["idle"] = {
            "latencies_s": await key_latencies(app, box, samples, interval),
            "training": app.training is not None,
        }

        app.train_panel.query_one("#steps", Input).value = str(STEPS)
        await pilot.press("f2")
        await _wait(
            pilot, lambda: len(plot.live) >= 5 or app.train_panel.status_is_error, ENGINE_TIMEOUT, "five loss points"
        )
        if app.train_panel.status_is_error:
            raise BenchError(f"training did not start: {app.train_panel.status}")
        start = {
            "t": time.perf_counter(),
            "redraws": plot.redraws,
            "points": len(plot.live),
            "training": app.training is not None,
        }
        busy = await key_latencies(app, box, samples, interval)
        end = {
            "t": time.perf_counter(),
            "redraws": plot.redraws,
            "points": len(plot.live),
            "training": app.training is not None,
        }
        window = end["t"] - start["t"]
        result["training"] = {
            "latencies_s": busy,
            "steps": STEPS,
            "step_at_start": start["points"],
            "step_at_end": end["points"],
            "training_at_start": start["training"],
            "training_at_end": end["training"],
        }
        result["redraw"] = {
            "window_s": window,
            "redraws_start": start["redraws"],
            "redraws_end": end["redraws"],
            "points_start": start["points"],
            "points_end": end["points"],
            "redraws_per_s": (end["redraws"] - start["redraws"]) / window,
            "steps_per_s": (end["points"] - start["points"]) / window,
        }

        await _wait(pilot, lambda: app.training is None, TRAIN_TIMEOUT, "the training run to end")
        if app.train_panel.status_is_error:
            raise BenchError(f"training failed: {app.train_panel.status}")
        result["train_status"] = app.train_panel.status
        result["points_final"] = len(plot.live)

        costs = []
        for _ in range(10):
            t = time.perf_counter()
            plot.draw()
            plot.render()
            costs.append(time.perf_counter() - t)
        result["render"] = {
            "points": len(plot.live),
            "reference_points": len(plot.reference),
            "size": [plot.size.width, plot.size.height],
            "costs_s": costs,
        }
        result["race"] = await race_times(app, pilot, box)
        result["race_training"] = await keys_while_racing_and_training(app, pilot, box, plot, samples, interval)
        stops = []
        for _ in range(STOP_RUNS):  # Stop: from the key to the app having handled the engine's Stopped event
            app.train_panel.query_one("#steps", Input).value = "50000"
            await pilot.press("f2")
            await _wait(pilot, lambda: len(plot.live) >= 5, ENGINE_TIMEOUT, "a long run to start")
            t = time.perf_counter()
            await pilot.press("f3")
            await _wait(pilot, lambda: app.training is None, ENGINE_TIMEOUT, "the stop")
            stops.append(time.perf_counter() - t)
            if "stopped at step" not in app.train_panel.status:
                raise BenchError(f"stop did not report a stopped run: {app.train_panel.status}")
        result["stop_s"] = stops
        engine = app.supervisor.engine
    await asyncio.sleep(0)
    if engine is not None and engine.alive():
        engine.kill()
        result["engine_left_running"] = True
    return result


async def race_times(app, pilot, box) -> dict:
    """Seconds from Enter on a three-operand sum in race mode (four models, instant pace) until every lane has its
    verdict on screen, RACE_RUNS times; the first is cold (lanes whose model the engine let go are loaded first)."""
    from textual import events

    if not app.playground.racing:
        await pilot.press("f4")
    app.playground.pace = 0  # instant
    lanes = [lane.state.title for lane in app.playground.race.views()]
    if len(lanes) != RACE_LANES:
        raise BenchError(f"the race has {len(lanes)} lanes, not {RACE_LANES}: {lanes}")
    times, verdicts = [], []
    for run in range(RACE_RUNS):
        box.focus()
        box.value = RACE_SUMS[run % len(RACE_SUMS)]
        await pilot.pause(0.05)
        before = app.play.probe
        t0 = time.perf_counter()
        app.post_message(events.Key("enter", "\r"))
        deadline = t0 + RACE_TIMEOUT
        race = app.playground.race
        while app.play.probe < before + RACE_LANES or race.busy():
            if time.perf_counter() > deadline:
                raise BenchError(f"a race of {RACE_LANES} models did not finish within {RACE_TIMEOUT:g}s")
            await asyncio.sleep(0.002)
        times.append(time.perf_counter() - t0)
        verdicts.append({v.state.title: v.state.verdict.plain for v in race.views()})
        if any("engine error" in text for text in verdicts[-1].values()):
            raise BenchError(f"a lane failed: {verdicts[-1]}")
    return {
        "lanes": lanes,
        "sums": [RACE_SUMS[i % len(RACE_SUMS)] for i in range(RACE_RUNS)],
        "times_s": times,
        "verdicts": verdicts,
    }


async def keys_while_racing_and_training(app, pilot, box, plot, samples: int, interval: float) -> dict:
    """Key latency while a long run trains and four-model races stream one after another at the normal pace."""
    from textual.widgets import Input

    from breadth.core.world.environments.probe import parse_sum
    from breadth.tui.widgets.playground import Playground

    app.playground.pace = 2  # normal: 20 characters a second, so every race streams for a while
    app.train_panel.query_one("#steps", Input).value = "50000"
    await pilot.press("f2")
    await _wait(pilot, lambda: len(plot.live) >= 5, ENGINE_TIMEOUT, "a long run to start")
    races = {"started": 0, "streaming_checks": 0, "streaming_seen": 0}

    async def race_on() -> None:  # the next race as soon as the last has shown its verdicts
        while True:
            if not app.playground.busy():
                text = RACE_SUMS[races["started"] % len(RACE_SUMS)]
                app.playground.post_message(Playground.PlayRequested(parse_sum(text), text))
                races["started"] += 1
            await asyncio.sleep(0.02)

    racer = asyncio.create_task(race_on())
    try:
        await _wait(pilot, lambda: app.playground.busy(), 5.0, "the first race")
        steps_before = len(plot.live)
        latencies = []
        for _ in range(samples):  # one key at a time, noting each time whether a race was streaming
            races["streaming_checks"] += 1
            races["streaming_seen"] += app.playground.race.busy()
            latencies += await key_latencies(app, box, 1, interval)
        training = app.training is not None
        steps_after = len(plot.live)
    finally:
        racer.cancel()
    await pilot.press("f3")
    await _wait(pilot, lambda: app.training is None, ENGINE_TIMEOUT, "the stop")
    await _wait(pilot, lambda: not app.playground.busy(), RACE_TIMEOUT, "the last race")
    return {
        "latencies_s": latencies,
        "races_started": races["started"],
        "racing_fraction": races["streaming_seen"] / max(1, races["streaming_checks"]),
        "training_at_end": training,
        "step_at_start": steps_before,
        "step_at_end": steps_after,
    }


# report
