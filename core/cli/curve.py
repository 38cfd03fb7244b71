"""`breadth curve`: the breadth curve by Cobbe's protocol on generated environments (core.results.breadth_curve).

Runs what the store lacks (locally or on Dask, like a sweep: an interrupted curve resumes), up to K seeds of a point
trained together on one worker (`--lockstep K`, or K chosen from the seeds and workers unless `--alone`,
`core.results.groups`), then prints one row per N
(training and held-out success, their gap, the share of split x seed pairs that transfer) and the ceiling, and
writes them as JSON and a figure if asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from breadth.core.cli.envs import chosen_environments, pool_words
from breadth.core.cli.parser import recipe_settings
from breadth.core.results.breadth_curve import CEILING, CurvePlan, StoredCurve
from breadth.core.results.curve_points import by_environment, by_neighbour, points, warnings
from breadth.core.results.grid import GridError, parse_seeds, refuse_repeats
from breadth.core.results.groups import group_size
from breadth.core.results.splits import designed
from breadth.core.storage.files import user_path, write_json
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store
from breadth.core.world.text.shown import shown, shown_text

console = Console(highlight=False, markup=False, emoji=False)
OnDone = Callable[[list[str], str], None]  # a study's ear: the keys of a step's stored runs, and its reading


def curve(args, on_done: OnDone | None = None) -> int:
    """Run the curve's missing runs, then print (and write) the curve; `on_done` (a study's) hears the keys of its
    stored runs and the curve's reading in one line."""
    from breadth.core.cli.grids import print_failed, print_outcome, run_with_progress

    plan, base, base_hash = curve_runs(args)
    what = pool_words(args.pool, args.where) + (f", base {base.name}" if args.base else "")
    with Store(args.store) as store:
        stored = StoredCurve(plan, what, base_hash)
        store.add_curve(stored.name, stored.to_dict())  # the app's curve view draws it from the store as it fills
        planned = plan.jobs(base_hash)
        jobs = [job for job, _, _ in planned]
        work = plan.groups(base_hash) if plan.lockstep else jobs
        console.print(
            f"{len(jobs)} runs: {len(plan.pool)} environments ({shown(what)}), {held_words(plan)}, "
            f"{plan.splits} {'folds' if plan.folds else 'splits'} x N "  # N that run: above what a split leaves, capped
            f"{','.join(map(str, sorted({n for s in range(plan.splits) for n in plan.sizes_of(s)})))}"
            f" + {'one ceiling' if plan.hold else 'a ceiling each'}, x {len(plan.seeds)} seeds; "
            f"{demonstrations(plan)}; {trained(plan, len(work))}; store {shown(store.path)}"
        )
        outcome = run_with_progress(work, store, base, base_hash, "curve", args.workers, args.cluster)
    found = points(plan, outcome.stored, base_hash)
    how = f", in lockstep (up to {plan.lockstep} a group)" if plan.lockstep else ""
    console.print(curve_table(found, f"the breadth curve: {what}{how}"))
    near = by_neighbour(plan, outcome.stored, base_hash)
    if near:
        console.print(neighbour_table(near))
    each = by_environment(plan, outcome.stored, base_hash)
    if each and args.by_environment:
        console.print(environment_table(each))
    for line in warnings(found):
        console.print(f"warning: {line}")
    if on_done is not None:
        on_done([job.key for job in jobs if job.key in outcome.stored], reading(found))
    print_outcome(outcome)
    where = {job.key: (s, n) for job, s, n in planned}
    print_failed(outcome.failed, lambda job: _run_name(*where[job.key]))
    if args.json:
        write_json(args.json, curve_json(found, near, each))
        console.print(f"wrote {shown(args.json)}")
    if args.figure:
        from breadth.core.results.curve_figure import curve_figure

        for path in curve_figure(found, args.figure, what):
            console.print(f"wrote {shown(path)}")
    return 1 if outcome.failed else 0


def curve_runs(args) -> tuple[CurvePlan, Path, str]:
    """What `curve` runs: the plan the flags ask for with its lockstep size decided, its base and the base's hash."""
    plan = curve_plan(args)
    base = user_path(args.base) if args.base else BASE
    read_header(base)
    base_hash = weights_hash(base)
    if not plan.lockstep and not args.alone:  # unless told, as many seeds of a point together as keep workers busy
        plan = replace(plan, lockstep=group_size([job for job, _, _ in plan.jobs(base_hash)], args.workers) or 0)
    return plan, base, base_hash


def curve_plan(args) -> CurvePlan:
    """The plan the flags ask for; GridError (one line) for one that cannot run."""
    pool = tuple(f.name for f in chosen_environments(args.where or [], None, 0, args.pool))
    try:
        sizes = [int(x) for x in args.n.split(",") if x.strip()]
    except ValueError:
        raise GridError(f"--n takes whole numbers such as 1,2,4,8, not {args.n[:40]!r}") from None
    refuse_repeats("--n", sizes)  # before sorting: 1,1 is a typo, not one N
    hold, vary = tuple(args.hold or ()), tuple(args.vary or ())
    refuse_repeats("--hold", hold)
    refuse_repeats("--vary", vary)
    if hold and args.held:
        raise GridError(f"--hold {' '.join(hold)} names the held-out environments: drop --held {args.held}")
    return CurvePlan(
        pool,
        len(designed(pool, hold, vary)[0]) if hold else args.held or 4,
        args.splits,
        tuple(sorted(sizes)),
        args.demos,
        parse_seeds(args.seeds),
        recipe_settings(args),
        args.held_out_sums,
        args.passes,
        args.min_steps,
        args.lockstep or 0,
        args.folds,
        args.budget,
        args.total_demos or 0,
        hold,
        vary,
    )


def curve_json(found, near: dict, each: dict) -> dict:
    """What `--json` writes: the points, held-out success by dimension and by environment, each a list of records."""
    return {
        "points": [vars(p) for p in found],
        "by_dimension": [
            {"dimension": dim, "n": n, "held_out": rate, "pairs": count}
            for dim, row in near.items()
            for n, (rate, count) in row.items()
        ],
        "by_environment": [
            {"environment": name, "n": n, "held_out": rate, "runs": count}
            for name, row in each.items()
            for n, (rate, count) in row.items()
        ],
    }


def reading(found) -> str:
    """The curve in one line: held out at its smallest and largest N beside training there, and the ceiling."""
    ns = [p for p in found if p.n != CEILING]
    ceiling = next((p for p in found if p.n == CEILING), None)
    if not ns:
        return "nothing stored yet"
    ends = [ns[0], ns[-1]] if len(ns) > 1 else ns
    line = "; ".join(f"N={p.n}: held out {_pct(p.held)}%, training {100 * p.train[0]:.0f}%" for p in ends)
    return line + (f"; ceiling {_pct(ceiling.held)}%" if ceiling is not None else "; no ceiling stored")


def _run_name(split: int, n: int) -> str:
    """A run of the curve in words: its N (or the ceiling) and its split."""
    return f"{'the ceiling' if n == CEILING else f'N={n}'} of split {split + 1}"


def held_words(plan: CurvePlan) -> str:
    """Which environments are held out, in words: how many per split, or a designed hold-out's and what it trains on."""
    if not plan.hold:
        return f"{plan.held} held out"
    vary = f" that differ from them along {' and '.join(plan.vary)} alone" if plan.vary else ""
    return f"{plan.held} held out by design ({shown(' '.join(plan.hold))}), training on {plan.trainable()}{vary}"


def demonstrations(plan: CurvePlan) -> str:
    """What each run trains on, in words: demonstrations per environment or in all, and whose steps."""
    data = (
        f"{plan.total_demos} demonstrations in all a run"
        if plan.total_demos
        else f"{plan.demos} demonstrations per environment"
    )
    steps = {
        "own": "",
        "ceiling": f", the ceiling at N={plan.largest()}'s steps",
        "largest": f", every run at N={plan.largest()}'s steps",
    }[plan.budget]
    return f"{data}{steps}"


def trained(plan: CurvePlan, tasks: int) -> str:
    """How the runs train, in words: one at a time, or in how many lockstep groups."""
    if not plan.lockstep:
        return "each run trained alone"  # told (--alone), or one seed a point: nothing to train together
    return f"trained in lockstep: {tasks} groups of up to {plan.lockstep} seeds of one point, a worker each"


def curve_table(found, title: str) -> Table:
    """One row per N and the ceiling: success in % with 95% intervals, the gap, the share that transfer."""
    t = Table(title=shown_text(title), title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("N", "steps", "pairs", "training %", "held out %", "gap", "transfer"):
        t.add_column(column, justify="right")
    for p in found:
        t.add_row(
            "ceiling" if p.n == CEILING else str(p.n),
            p.steps,
            str(p.pairs),
            _pct(p.train),
            _pct(p.held),
            f"{100 * p.gap[0]:+.0f}",
            "-" if p.transfer is None else f"{100 * p.transfer:.0f}%",
        )
    t.caption = (
        "mean [95% interval with the split as the unit: each split's mean over its seeds]; "
        "transfer: split x seed pairs above half their split's ceiling"
    )
    t.caption_justify = "left"
    return t


def neighbour_table(near: dict[str, dict[int, tuple[float, int]]]) -> Table:
    """Held-out success by the dimension along which a training environment is one step away, per N."""
    t, sizes = _by_n_table("held out % by the nearest training environment", "one step along", rows=near)
    for dim, row in near.items():
        t.add_row(dim, *(f"{100 * row[n][0]:.0f} ({row[n][1]})" if n in row else "-" for n in sizes))
    t.caption = "mean over held-out environments x runs (how many); `none`: no training environment one step away"
    return t


def environment_table(each: dict[str, dict[int, tuple[float, int]]]) -> Table:
    """Each held-out environment's success per N and trained directly (the ceiling), over the runs that held it
    out: the most a point has, beside its name."""
    t, sizes = _by_n_table("held out % by environment", "environment", "runs", rows=each)
    for name, row in each.items():
        runs = max(count for _, count in row.values())
        t.add_row(shown(name), str(runs), *(f"{100 * row[n][0]:.0f}" if n in row else "-" for n in sizes))
    t.caption = "mean over the runs that held it out (runs: how many at each N); ceiling: trained on directly"
    return t


def _by_n_table(title: str, *first: str, rows: dict) -> tuple[Table, list[int]]:
    """A table titled `title` whose `first` columns (left-aligned, then right) come before a column per N of
    `rows`, the ceiling last; and those N."""
    sizes = sorted({n for row in rows.values() for n in row}, key=lambda n: (n == CEILING, n))
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, caption_justify="left")
    for i, column in enumerate(first):
        t.add_column(column, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for n in sizes:
        t.add_column("ceiling" if n == CEILING else f"N={n}", justify="right")
    return t, sizes


def _pct(value: tuple[float, float, float]) -> str:
    m, low, high = value
    return f"{100 * m:.0f} [{100 * low:.0f}-{100 * high:.0f}]"
