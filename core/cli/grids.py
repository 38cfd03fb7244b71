"""`breadth sweep` and `breadth matrix`: many runs into the results store, their tables and pictures (what a store
holds is read by `core.cli.stored`: `breadth runs` and `breadth report`)."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from breadth.core.cli.parser import recipe_settings
from breadth.core.cli.path_flags import figure_paths
from breadth.core.cli.tables import (
    breadth_table,
    budget_table,
    cells_table,
    matrix_table,
)
from breadth.core.results.figures import breadth_figure, figure, matrix_figure
from breadth.core.results.grid import (
    Grid,
    GridError,
    parse_budget,
    parse_seeds,
    parse_share,
    parse_values,
    refuse_repeats,
)
from breadth.core.results.groups import group_size, lockstep_groups
from breadth.core.results.matrix import MatrixError, breadth_points, parse_environments
from breadth.core.results.matrix import matrix as build_matrix
from breadth.core.results.report import CellSummary, budget, summarise
from breadth.core.storage.files import check_outputs, user_path, write_json
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store, store_files
from breadth.core.sweeps.sweep import going_on, run_jobs, unfinished
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.recipes import FINETUNE, recipe, swept_by_any
from breadth.core.world.runs.settings import held_out_from_text, swept
from breadth.core.world.text.shown import shown

console = Console(highlight=False, markup=False, emoji=False)  # what it prints is text: paths, stored names
errors = Console(stderr=True, highlight=False, markup=False, emoji=False)
PLAIN_EVERY_RUNS = 10  # not on a terminal (no bar shows): a progress line every this many finished runs,
PLAIN_EVERY_SECONDS = 30.0  # or at the first run to finish this long after the last line


def sweep(args) -> int:
    """Run a grid into the store, then summarise its cells."""
    grid = _grid(args)
    cells, outcome = _run_grid(grid, args, "sweep", f"{len(grid.cells())} cells")
    console.print(
        cells_table(cells, f"{len(cells)} cells; mean over seeds with 95% t interval, pooled Wilson interval")
    )
    print_outcome(outcome)
    write_outputs(cells, args.json, args.figure)
    print_failed(outcome.failed, lambda job: job.cell.label(grid.varied))
    return 1 if outcome.failed else 0


def print_failed(failed: list, label) -> None:
    """A line per failed run: which (`label(job)`), its seed, and why it failed, as the run said it."""
    for job, why in failed:
        console.print(f"failed: {shown(label(job))} seed {job.seed}: {shown(why)}", soft_wrap=True)


def _run_grid(grid: Grid, args, source: str, what: str, extra_outputs: list[Path] = ()):
    """Check the base and the outputs, run what the store lacks, and summarise the grid's cells; (cells, outcome)."""
    base = user_path(args.base) if args.base else BASE
    read_header(base)
    outputs = [args.json, *figure_paths(args.figure), *extra_outputs]
    check_outputs(outputs, inputs=[base, *store_files(args.store)])
    base_hash = weights_hash(base)
    alone = grid.jobs(base_hash)
    jobs, work, how = _in_lockstep(alone, _group(args, alone), base_hash)  # before the store
    with Store(args.store) as store:
        where = f"Dask at {args.cluster}" if args.cluster else f"{args.workers} local processes"
        console.print(
            f"{len(jobs)} runs: {what} x {len(grid.seeds)} seeds, held-out "
            f"{'all' if grid.held_out is None else grid.held_out} per environment, on {shown(where)}{how}; "
            f"store {shown(store.path)}"
        )
        outcome = run_with_progress(work, store, base, base_hash, source, args.workers, args.cluster)
    return summarise([outcome.stored[j.key] for j in jobs if j.key in outcome.stored]), outcome


def _group(args, jobs: list) -> int | None:
    """The lockstep group size: `--lockstep K` as told, none with `--alone` (or for a command without either, the
    matrix), else chosen from the seeds and workers (`group_size`)."""
    if not hasattr(args, "lockstep") or args.alone:
        return None
    return args.lockstep or group_size(jobs, args.workers)


def _in_lockstep(jobs: list, k: int | None, base_hash: str) -> tuple[list, list, str]:
    """(the jobs, keyed by their lockstep groups if `k`; what to run: those jobs or their groups; how, in words)."""
    if not k:
        return jobs, jobs, ""
    groups = lockstep_groups(jobs, k, base_hash)
    together = {key: job for g in groups for key, job in zip(g.alone, g.jobs, strict=True)}
    how = f", in lockstep: {len(groups)} groups of up to {k} seeds of one cell, a worker each"
    return [together[job.key] for job in jobs], groups, how


def print_outcome(outcome) -> None:
    """What this sweep stored: the runs it ran, those another writer stored first, those found stored, failures."""
    ran, first = outcome.ran + outcome.stored_first, outcome.stored_first
    race = (
        f" (stored {outcome.ran}; {first} stored first by another writer on this store, theirs kept)" if first else ""
    )
    console.print(
        f"ran {ran}{race}, already stored {len(outcome.stored) - ran}, failed "
        f"{len(outcome.failed)}, in {outcome.seconds:.1f} s"
    )


def matrix(args) -> int:
    """Run what the store lacks for the matrix's rows (mixes x seeds), then print and draw the matrix."""
    mixes: list[Mix] = parse_mixes(args.mix)
    if args.single:
        mixes += [Mix.of(**{f.name: min(args.single, f.demo_pool)}) for f in REGISTERED.values()]
    if args.plate:
        mixes += [p.mix for p in PRESETS.values()]
    if not mixes:
        raise GridError("no rows: give --mix (repeatable), --single N or --plate")
    mixes = list(dict.fromkeys(mixes))
    curve = parse_environments(args.curve) if args.curve else []
    if trained := sorted({name for m in mixes for name, _ in m.counts} & set(curve)):
        raise MatrixError(f"--curve names an environment some row trains on, so not held out: {', '.join(trained)}")
    curve_figure = figure_paths(_curve_path(args.figure)) if curve and args.figure else []
    settings = recipe_settings(args)
    grid = Grid(tuple(mixes), settings, (), parse_seeds(args.seeds), held_out_from_text(args.held_out))
    cells, outcome = _run_grid(grid, args, "matrix", f"transfer matrix: {len(mixes)} mixes", curve_figure)
    rows = build_matrix(cells, [m.spec() for m in mixes])
    title = f"held-out success over seeds {args.seeds} (mean, 95% interval); * trained on"
    console.print(matrix_table(rows, title, console.width))
    print_outcome(outcome)
    if args.json:
        write_json(args.json, [_row_json(r) for r in rows])
        console.print(f"wrote {shown(args.json)}")
    if args.figure:
        for path in matrix_figure(rows, args.figure):
            console.print(f"wrote {shown(path)}")
    if curve:
        points = breadth_points(rows, curve)
        console.print(breadth_table(points, f"the breadth curve over seeds {args.seeds} (mean % and 95% interval)"))
        if args.figure:
            for path in breadth_figure(points, _curve_path(args.figure), len(grid.seeds)):
                console.print(f"wrote {shown(path)}")
    print_failed(outcome.failed, lambda job: job.cell.label())
    return 1 if outcome.failed else 0


def _curve_path(figure: Path) -> Path:
    """Where the breadth curve goes beside the matrix's picture: `m` -> `m-curve` (.png and .svg added)."""
    return figure.with_name(figure.name + "-curve")


def _row_json(row) -> dict:
    return {
        "mix": row.mix,
        "trained": sorted(row.trained),
        "seeds": list(row.seeds),
        "families": {  # the --json key, as results/*.json were written
            name: {
                "mean": f.mean,
                "interval": [f.low, f.high],
                "per_seed": {str(s): r for s, r in f.rates.items()},
                "failures": f.failures,
                "failed": [{"seed": s, "failure": e.failure, "transcript": e.text} for s, e in f.examples],
            }
            for name, f in row.cells.items()
        },
    }


def run_with_progress(jobs, store, base, base_hash, source, workers, cluster):
    """run_jobs with its progress shown: a bar on a terminal, plain lines otherwise (a pipe, a log file)."""
    if cluster is None and (partial := going_on(jobs, store.path)):
        where = unfinished(store.path)
        console.print(
            f"{partial} of these runs go on from where they stopped (their states in {where})", soft_wrap=True
        )
    if not console.is_terminal:
        return run_jobs(jobs, store, base, base_hash, source, workers, cluster, plain_progress())
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[left]}"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("runs", total=len(jobs), left="")

        def on_run(job, run, done, total):
            if job is None and done:  # the runs found in the store count as done, but not in the time left
                bar.reset(task, total=total - done)
                bar.update(task, description=f"runs ({done} stored)")
                return
            bar.update(task, advance=1 if job is not None else 0, left=f"{total - done} to go")

        return run_jobs(jobs, store, base, base_hash, source, workers, cluster, on_run)


def plain_progress(clock=time.monotonic):
    """An on_run that prints a line every PLAIN_EVERY_RUNS runs or PLAIN_EVERY_SECONDS, and at the last run."""
    start = last = clock()
    since = stored = 0

    def on_run(job, run, done, total):
        nonlocal last, since, stored
        if job is None:  # before any run: those the store holds already
            stored = done
            console.print(f"runs: {total - done} to run" + (f", {done} already stored" if done else ""))
            return
        since += 1
        now = clock()
        if done < total and since < PLAIN_EVERY_RUNS and now - last < PLAIN_EVERY_SECONDS:
            return
        elapsed = now - start
        left = elapsed / (done - stored) * (total - done)
        console.print(
            f"runs: {done} of {total} done, {total - done} to go, {_minutes(elapsed)} so far, "
            f"about {_minutes(left)} left"
        )
        last, since = now, 0

    return on_run


def _minutes(seconds: float) -> str:
    """A duration as m:ss (h:mm:ss from an hour)."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def parse_mixes(texts: list[str]) -> list[Mix]:
    """The mixes `--mix` (repeatable) names; GridError (one line) for one named twice, however it is spelled."""
    mixes = [Mix.parse(text) for text in texts]
    refuse_repeats("--mix", [m.spec() for m in mixes])
    return mixes


def _grid(args) -> Grid:
    mixes: list[Mix] = []
    if args.plate:
        mixes += [p.mix for p in PRESETS.values()]
    mixes += parse_mixes(args.mix)
    if args.share:
        mixes += parse_share(args.share)
    if args.budget:
        mixes += parse_budget(args.budget)
    if not mixes:
        raise GridError("no mixes: give --mix (repeatable), --share, --budget or --plate")
    mixes = list(dict.fromkeys(mixes))
    made_by = recipe(getattr(args, "recipe", FINETUNE))
    values = []
    for setting in swept_by_any():
        text = getattr(args, setting.name)
        if text is not None:
            if setting.name not in {s.name for s in swept(made_by.settings)}:
                raise GridError(f"--{setting.flag} is not a setting of the {made_by.name} recipe")
            values.append((setting.name, parse_values(setting.name, text, made_by.settings)))
    return Grid(
        tuple(mixes), made_by.settings(), tuple(values), parse_seeds(args.seeds), held_out_from_text(args.held_out)
    )


def write_outputs(cells: list[CellSummary], json_path: Path | None, figure_path: Path | None) -> None:
    """Print the cost-of-mixing table where the cells hold one, and write the cells' JSON and figure if asked."""
    points = budget(cells)
    if points:
        title = "the cost of mixing: each environment alone and in an even mix of the same total"
        console.print(budget_table(points, title, console.width))
    if json_path:
        write_json(json_path, [_cell_json(c) for c in cells])
        console.print(f"wrote {shown(json_path)}")
    if figure_path:
        for path in figure(cells, figure_path):
            console.print(f"wrote {shown(path)}")


def _cell_json(cell: CellSummary) -> dict:
    return {
        "mix": cell.key.mix,
        "settings": cell.key.settings.to_dict() | {"seed": None},
        "held_out": cell.key.held_out,
        "base": cell.key.base_hash,
        **(
            {"lockstep": cell.key.lockstep, "part": cell.key.part} if cell.key.lockstep else {}
        ),  # runs alone: as before
        "seeds": list(cell.seeds),
        "families": {  # the --json key, as results/*.json were written
            name: {
                "mean": f.mean,
                "interval": [f.low, f.high],
                "pooled": [f.pooled_low, f.pooled_high],
                "solved": f.solved,
                "total": f.total,
                "per_seed": {str(s): r for s, r in f.rates.items()},
            }
            for name, f in cell.environments.items()
        },
    }
