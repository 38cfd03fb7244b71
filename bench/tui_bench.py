"""Benchmark the app: first frame in a real terminal, key latency while training (and racing), loss-plot redraw
rate, Stop latency, and how long a race of four models takes at the instant pace."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL = 0.010  # seconds between tmux screen captures
FIRST_FRAME_TIMEOUT = 20.0
ENGINE_TIMEOUT = 60.0  # engine start (torch import) and the first loss points
TRAIN_TIMEOUT = 120.0  # a 400-step run, its evaluation and save
KEY_TIMEOUT = 2.0  # one key must be handled within this
STEPS = 400
STOP_RUNS = 5  # how many times Stop is timed
RACE_SUMS = ("3+4+5", "12+34+56", "9-4-3", "7+2+9")  # three-operand sums the races play, in turn
RACE_RUNS = 8  # how many four-model races are timed at the instant pace
RACE_TIMEOUT = 10.0  # one race must finish within this
RACE_LANES = 4  # the three shipped models and the one just trained
SHOWN = ("playground", "held-out scores")  # both on screen: the app has drawn its first frame


class BenchError(Exception):
    """A measurement could not be taken; the message is one line for the user."""


# processes


def _ppid(pid: int) -> int | None:
    """The parent of `pid`, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _all_pids() -> list[int]:
    """Every process id visible in /proc."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _tree(root: int) -> list[int]:
    """`root` and all its descendants that are alive."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        parent = _ppid(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if _alive(pid):
            out.append(pid)
        todo += children.get(pid, [])
    return out


def _kill_tree(root: int) -> list[int]:
    """Freeze `root` and its descendants (so none can fork away), then SIGKILL them all; returns their pids.

    The engine runs in its own session (start_new_session=True), so the terminal's hang-up never
    reaches it: it has to be found through the process tree while its parent, the app, still exists.
    """
    frozen: set[int] = set()
    for _ in range(5):  # rescan: a fork in flight when we stopped the parent shows up on the next pass
        new = [pid for pid in _tree(root) if pid not in frozen]
        if not new and frozen:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
                frozen.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    for pid in frozen:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return sorted(frozen)


def _wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    """Wait until none of `pids` is alive; returns those still alive at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in pids if _alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def _ours(marker: str) -> list[int]:
    """Processes whose environment holds our unique BREADTH_RUNS (started by this benchmark, nobody else)."""
    needle = f"BREADTH_RUNS={marker}".encode()
    found = []
    for pid in _all_pids():
        if pid == os.getpid():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and _alive(pid):
            found.append(pid)
    return found


def _cmdline(pid: int) -> str:
    """The command line of `pid` (empty if gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


# 1. time to first frame


class Tmux:
    """A private tmux server (its own socket) for the benchmark, so no user session is ever touched."""

    def __init__(self, env: dict[str, str]) -> None:
        self.exe = shutil.which("tmux")
        if self.exe is None:
            raise BenchError("tmux is not installed; it is needed to time the first frame in a real terminal")
        self.socket = f"breadth-bench-{os.getpid()}"
        self.env = env

    def __call__(self, *args: str, timeout: float = 5.0) -> str:
        """Run one tmux command on our server; its stdout."""
        try:
            done = subprocess.run(
                [self.exe, "-L", self.socket, "-f", "/dev/null", *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=self.env,
            )
        except subprocess.TimeoutExpired:
            raise BenchError(f"tmux {args[0]} did not answer within {timeout:g}s") from None
        if done.returncode != 0:
            raise BenchError(f"tmux {args[0]} failed: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def start(self) -> None:
        """Start the server with an idle session, so that each timed run does not pay for the server start."""
        self("new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "sleep 3600")

    def stop(self) -> None:
        """Kill our server and everything still running in it."""
        try:
            pid, path = self("display-message", "-p", "-t", "keep", "#{pid} #{socket_path}").strip().split(" ", 1)
        except (BenchError, ValueError):
            pid, path = None, None
        try:
            self("kill-server")
        except BenchError:
            pass
        if pid is not None:
            _wait_gone([int(pid)], 2.0)
        if path and Path(path).name == self.socket:
            Path(path).unlink(missing_ok=True)


def first_frame(tmux: Tmux, run: int) -> tuple[float, list[str]]:
    """Seconds from just before `tmux new-session` running breadth-tui (80x24) until a capture shows the app.

    Returns the time and the command lines of the processes killed afterwards (the app and its engine).
    """
    app_cmd = shlex.quote(str(Path(sys.prefix) / "bin" / "breadth-tui"))
    name = f"ff{run}"
    t0 = time.perf_counter()
    tmux(
        "new-session",
        "-d",
        "-x",
        "80",
        "-y",
        "24",
        "-s",
        name,
        "-c",
        str(ROOT),
        "-e",
        f"BREADTH_RUNS={tmux.env['BREADTH_RUNS']}",
        app_cmd,
    )
    pane = int(tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
    elapsed = None
    deadline = t0 + FIRST_FRAME_TIMEOUT
    while time.perf_counter() < deadline:
        screen = tmux("capture-pane", "-p", "-t", name)
        if all(text in screen for text in SHOWN):
            elapsed = time.perf_counter() - t0
            break
        time.sleep(POLL)
    killed_cmds = [_cmdline(pid) for pid in _tree(pane)]
    killed = _kill_tree(pane)
    try:
        tmux("kill-session", "-t", name)
    except BenchError:
        pass  # the session usually ends by itself once its app is gone
    left = _wait_gone(killed)
    if left:
        raise BenchError(f"processes {left} from the first-frame run did not die")
    if elapsed is None:
        tail = " | ".join(line.strip() for line in screen.splitlines() if line.strip())[-160:]
        raise BenchError(f"breadth-tui showed no first frame within {FIRST_FRAME_TIMEOUT:g}s (screen: {tail!r})")
    return elapsed, [c for c in killed_cmds if c]


def bare_import(code: str, env: dict[str, str]) -> float:
    """Wall seconds of one `python -c CODE` in the app's interpreter."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        raise BenchError(f"python -c {code!r} took over 120s") from None
    if done.returncode != 0:
        raise BenchError(f"python -c {code!r} failed: {done.stderr.decode(errors='replace').strip()[-200:]}")
    return time.perf_counter() - t0


# 2 and 3: in the app, with the real engine


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
        await pilot.press("ctrl+t")
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
            await pilot.press("ctrl+t")
            await _wait(pilot, lambda: len(plot.live) >= 5, ENGINE_TIMEOUT, "a long run to start")
            t = time.perf_counter()
            await pilot.press("ctrl+x")
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
        await pilot.press("ctrl+r")
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

    from breadth.core.world.probe import parse_sum
    from breadth.tui.widgets.playground import Playground

    app.playground.pace = 2  # normal: 20 characters a second, so every race streams for a while
    app.train_panel.query_one("#steps", Input).value = "50000"
    await pilot.press("ctrl+t")
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
    await pilot.press("ctrl+x")
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


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile `q` (0-100) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def ms(seconds: float) -> str:
    """Seconds as milliseconds, for the tables."""
    return f"{seconds * 1000:.1f}"


def report(data: dict, console) -> None:
    """Print the three tables, each followed by what exactly was measured."""
    from rich.table import Table

    def note(text: str) -> None:
        console.print(text, style="dim", highlight=False)
        console.print()

    ff = data["first_frame"]
    t = Table(title="1. Time to first frame", title_justify="left")
    for col in ("what", "runs", "min s", "median s", "max s"):
        t.add_column(col, justify="left" if col == "what" else "right")
    times = ff["times_s"]
    t.add_row(
        "breadth-tui first frame",
        str(len(times)),
        f"{min(times):.3f}",
        f"{statistics.median(times):.3f}",
        f"{max(times):.3f}",
    )
    for label, key in (("python -c pass", "python_s"), ("python -c 'import torch'", "import_torch_s")):
        t.add_row(label, "1", "", f"{ff[key]:.3f}", "")
    console.print(t)
    note(
        f"First frame: wall time from just before `tmux new-session -d -x 80 -y 24 .../breadth-tui` (on a private "
        f"tmux server started beforehand) until `tmux capture-pane -p`, polled every {POLL * 1000:.0f} ms, shows "
        f"{' and '.join(repr(x) for x in SHOWN)}; the app and its engine are killed after each run. Imports: "
        "wall time of one `python -c ...` with the same interpreter. The app loads torch only in its engine "
        "process, after the first frame."
    )

    ia = data["in_app"]
    tr = ia["training"]
    t = Table(title="2. Key handling latency (ms)", title_justify="left")
    for col in ("state", "samples", "p50", "p95", "max", "during sampling"):
        t.add_column(col, justify="left" if col in ("state", "during sampling") else "right")
    idle = ia["idle"]["latencies_s"]
    t.add_row("idle (engine ready)", str(len(idle)), ms(pct(idle, 50)), ms(pct(idle, 95)), ms(max(idle)), "no job")
    busy = tr["latencies_s"]
    running = "still training" if tr["training_at_end"] else "training ENDED before the last sample"
    t.add_row(
        f"training {tr['steps']} steps",
        str(len(busy)),
        ms(pct(busy, 50)),
        ms(pct(busy, 95)),
        ms(max(busy)),
        f"step {tr['step_at_start']} -> {tr['step_at_end']}; {running}",
    )
    console.print(t)
    note(
        "In BreadthApp().run_test(size=(100, 32)) with the real engine process: post events.Key('1', '1') to the "
        "app (the driver's route: priority bindings, then the focused widget) and spin on asyncio.sleep(0) until "
        "the focused #sum Input's value has changed (handled, not yet painted); one key every "
        f"{data['interval_s'] * 1000:.0f} ms, the Input cleared every 30 keys. 'Training' starts once the loss "
        f"plot has 5 points of a {tr['steps']}-step run (ctrl+t)."
    )

    rd, rc = ia["redraw"], ia["render"]
    t = Table(title="3. Loss plot during training", title_justify="left")
    t.add_column("what")
    t.add_column("start", justify="right")
    t.add_column("end", justify="right")
    t.add_column("per second", justify="right")
    t.add_row("LossPlot.redraws", str(rd["redraws_start"]), str(rd["redraws_end"]), f"{rd['redraws_per_s']:.1f}")
    t.add_row("loss points (steps)", str(rd["points_start"]), str(rd["points_end"]), f"{rd['steps_per_s']:.1f}")
    costs = rc["costs_s"]
    t.add_row("one draw()+render()", "", "", f"median {ms(statistics.median(costs))} ms, max {ms(max(costs))} ms")
    console.print(t)
    note(
        f"Counts at the start and end of the key-sampling window of table 2 ({rd['window_s']:.2f} s wall clock); "
        "LossPlot.redraws counts calls to its render(). Cost: LossPlot.draw() followed by render() called "
        f"directly after the run, 10 times, with {rc['points']} live + {rc['reference_points']} reference points "
        f"at {rc['size'][0]}x{rc['size'][1]} cells. The run: {ia['train_status'].split('; saved')[0]}."
    )


def report_stop(data: dict, console) -> None:
    """Print the Stop latency table."""
    from rich.table import Table

    stops = data["in_app"]["stop_s"]
    t = Table(title="4. Stop latency while training", title_justify="left")
    for col in ("runs", "min ms", "median ms", "max ms"):
        t.add_column(col, justify="right")
    t.add_row(str(len(stops)), ms(min(stops)), ms(statistics.median(stops)), ms(max(stops)))
    console.print(t)
    console.print(
        "From Pilot's ctrl+x (a run of 50000 steps that has drawn 5 loss points) until the app has handled "
        "the engine's Stopped event and unlocked Train; includes Pilot's own waits.",
        style="dim",
        highlight=False,
    )
    console.print()


def report_race(data: dict, console) -> None:
    """Print the race tables: key latency while racing and training, and four-model races at the instant pace."""
    from rich.table import Table

    rt = data["in_app"]["race_training"]
    lat = rt["latencies_s"]
    t = Table(title="5. Key handling latency while a race streams and a model trains (ms)", title_justify="left")
    for col in ("samples", "p50", "p95", "max", "races", "racing", "steps"):
        t.add_column(col, justify="right")
    t.add_row(
        str(len(lat)),
        ms(pct(lat, 50)),
        ms(pct(lat, 95)),
        ms(max(lat)),
        str(rt["races_started"]),
        f"{rt['racing_fraction'] * 100:.0f}% of keys",
        f"{rt['step_at_start']} -> {rt['step_at_end']}" + ("" if rt["training_at_end"] else " (ENDED)"),
    )
    console.print(t)
    console.print(
        f"As table 2, during a 50000-step run (stopped afterwards), while races of {RACE_LANES} models on "
        f"three-operand sums ({', '.join(RACE_SUMS)}) follow one another at the normal pace (20 characters a "
        "second per lane): each starts once the last has shown its verdicts. 'racing': the share of keys "
        "posted while a race was on screen unfinished.",
        style="dim",
        highlight=False,
    )
    console.print()
    race = data["in_app"]["race"]
    times = race["times_s"]
    t = Table(title=f"6. A race of {RACE_LANES} models at the instant pace (ms)", title_justify="left")
    for col in ("runs", "first (cold)", "median", "max", "max after the first"):
        t.add_column(col, justify="right")
    t.add_row(str(len(times)), ms(times[0]), ms(statistics.median(times)), ms(max(times)), ms(max(times[1:] or times)))
    console.print(t)
    console.print(
        f"From posting Enter with a three-operand sum in the sum box (race mode, lanes: {', '.join(race['lanes'])}; "
        f"sums in turn: {', '.join(RACE_SUMS)}) until every lane shows its verdict (the engine's {RACE_LANES} "
        "Plays, their characters as messages, the 30 Hz reveal timer), polled every 2 ms, with the real engine "
        "right after the 400-step run; the first race also loads the shipped models the engine let go.",
        style="dim",
        highlight=False,
    )
    console.print()


def main(argv: list[str] | None = None) -> int:
    """Run the three measurements, print them, optionally write them as JSON; 1 on any failure."""
    parser = argparse.ArgumentParser(prog="python -m bench.tui_bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="first-frame runs (default 5)")
    parser.add_argument("--samples", type=int, default=150, help="keys per latency measurement (default 150)")
    parser.add_argument("--json", metavar="PATH", help="also write every number to PATH")
    args = parser.parse_args(argv)
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
        leftovers = _ours(marker)
        if leftovers:
            cmds = [_cmdline(pid) for pid in leftovers]
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
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
        except OSError as e:
            print(f"bench failed: could not write {args.json}: {e.strerror or e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
