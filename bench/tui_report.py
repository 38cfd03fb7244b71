"""The app benchmark's tables: what was measured, against its targets."""

from __future__ import annotations

import statistics

from bench.tui_common import POLL, RACE_LANES, RACE_SUMS, SHOWN, ms, pct


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
        f"plot has 5 points of a {tr['steps']}-step run (F2)."
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
        "From Pilot's F3 (a run of 50000 steps that has drawn 5 loss points) until the app has handled "
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
        "Probes, their characters as messages, the 30 Hz reveal timer), polled every 2 ms, with the real engine "
        "right after the 400-step run; the first race also loads the shipped models the engine let go.",
        style="dim",
        highlight=False,
    )
    console.print()
