"""`breadth transfer`: the transfer map (core.results.transfer_map): designed hold-outs x what training varied along,
each cell held-out success beside a ceiling at matched steps, over seeds; resumable from the store like a curve."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from breadth.core.cli.envs import chosen_environments, pool_words
from breadth.core.cli.parser import recipe_settings
from breadth.core.results.grid import parse_seeds, refuse_repeats
from breadth.core.results.groups import group_size
from breadth.core.results.transfer_map import (
    ALL,
    LEARNED,
    Cell,
    HeldFailures,
    Reading,
    StoredMap,
    cells,
    held_failures,
    parse_design,
    parse_vary,
    read,
)
from breadth.core.storage.files import user_path, write_json
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store
from breadth.core.world.text.shown import shown, shown_text

console = Console(highlight=False, markup=False, emoji=False)
OnDone = Callable[[list[str], str], None]  # a study's ear: the keys of a step's stored runs, and its reading
MapPlan = tuple[tuple[str, ...], list, list, tuple[int, ...], list[Cell]]  # pool, designs, varies, seeds, cells


def transfer(args, on_done: OnDone | None = None) -> int:
    """Run the map's missing runs, then print (and write) the map; `on_done` (a study's) hears the keys of its
    stored runs and the map's reading in one line."""
    from breadth.core.cli.grids import print_failed, print_outcome, run_with_progress

    (pool, designs, varies, seeds, made), base, base_hash, k = transfer_runs(args)
    work, seen = [], set()
    for c in made:
        if c.plan is None:
            continue
        for item in c.plan.groups(base_hash) if k else [j for j, _, _ in c.plan.jobs(base_hash)]:
            key = tuple(j.key for j in item.jobs) if k else item.key
            if key not in seen:
                seen.add(key)
                work.append(item)
    what = pool_words(args.pool, args.where)
    with Store(args.store) as store:
        stored = StoredMap(tuple(designs), tuple(varies), tuple(made), what, base_hash)
        store.add_map(stored.name, stored.to_dict())  # the app's map view draws it from the store as it fills
        console.print(
            f"{len(seen)} {'groups' if k else 'runs'}: {_count(len(designs), 'design')} x "
            f"{_count(len(varies), 'way')} of varying over "
            f"{len(pool)} environments, {len(seeds)} seeds, {args.demos} demonstrations per environment, each "
            f"ceiling at its cell's steps{_budget_words(made, args.budget)}"
            f"{f'; in lockstep, up to {k} a group' if k else ''}; store {shown(store.path)}"
        )
        outcome = run_with_progress(work, store, base, base_hash, "transfer", args.workers, args.cluster)
    readings = [(c, read(c, outcome.stored, base_hash)) for c in made]
    console.print(map_table(readings, designs, varies))
    for c, r in readings:  # a cell whose own training did not take says nothing about transfer
        if r is not None and not r.learned:
            where = f"{' and '.join(c.vary) or ALL} x {' '.join(c.design)}"
            console.print(
                f"warning: {shown(where)}: training environments {100 * r.train[0]:.0f}%, ceiling "
                f"{100 * r.ceiling[0]:.0f}%: below {100 * LEARNED:.0f}%, not learned at this budget, so its held out "
                "says nothing about transfer"
            )
    if args.failures:
        for c, _ in readings:
            found = held_failures(c, outcome.stored, base_hash)
            if found is not None:
                print_failures(c, found)
    if on_done is not None:
        planned = [j.key for c in made if c.plan is not None for j, _, _ in c.plan.jobs(base_hash)]
        on_done([key for key in dict.fromkeys(planned) if key in outcome.stored], reading(readings))
    print_outcome(outcome)
    print_failed(outcome.failed, lambda job: job.cell.label(()))
    if args.json:
        write_json(args.json, [_record(c, r) for c, r in readings])
        console.print(f"wrote {shown(args.json)}")
    if args.figure:
        from breadth.core.results.transfer_figure import transfer_figure

        for path in transfer_figure(readings, designs, varies, args.figure):
            console.print(f"wrote {shown(path)}")
    return 1 if outcome.failed else 0


def transfer_runs(args) -> tuple[MapPlan, Path, str, int | None]:
    """What `transfer` runs: transfer_plan's map with its lockstep size decided (None: alone), its base and the
    base's hash."""
    from dataclasses import replace

    pool, designs, varies, seeds, made = transfer_plan(args)
    base = user_path(args.base) if args.base else BASE
    read_header(base)
    base_hash = weights_hash(base)
    plans = [c.plan for c in made if c.plan is not None]
    k = (
        None
        if args.alone
        else args.lockstep or group_size([j for p in plans for j, _, _ in p.jobs(base_hash)], args.workers)
    )
    if k:
        made = [replace(c, plan=replace(c.plan, lockstep=k)) if c.plan else c for c in made]
    return (pool, designs, varies, seeds, made), base, base_hash, k


def transfer_plan(args) -> MapPlan:
    """The pool, designs, ways of varying, seeds and cells the flags ask for; one line (GridError and the like)
    for a map that cannot run, before any run."""
    pool = tuple(f.name for f in chosen_environments(args.where or [], None, 0, args.pool))
    designs = [parse_design(text) for text in args.hold]
    varies = [parse_vary(text) for text in args.vary or [ALL]]
    refuse_repeats("--hold", designs)
    refuse_repeats("--vary", varies)
    seeds = parse_seeds(args.seeds)
    made = cells(
        pool, designs, varies, args.demos, seeds, recipe_settings(args), args.held_out_sums, args.budget, args.passes,
        args.min_steps,
    )  # fmt: skip
    return pool, designs, varies, seeds, made


def map_table(readings: list[tuple[Cell, Reading | None]], designs: list, varies: list) -> Table:
    """Rows: what training varied along; columns: the designs; a cell: held out [95%] against the ceiling."""
    t = Table(title="the transfer map: held out % [95% over seeds] / its ceiling %", title_justify="left",
              box=box.SIMPLE_HEAD)  # fmt: skip
    t.add_column("training varied along")
    for design in designs:
        t.add_column(shown_text(" ".join(design)), justify="right")
    by = {(c.design, c.vary): (c, r) for c, r in readings}
    for vary in varies:
        row = []
        for design in designs:
            c, r = by[design, vary]
            if c.plan is None:
                row.append(c.why)
            elif r is None:
                row.append("not yet run")
            else:
                row.append(f"{_pct(r.held)} / {100 * r.ceiling[0]:.0f}")
        t.add_row(" and ".join(vary) if vary else f"{ALL} the rest", *row)
    t.caption = (
        "each cell trains on every environment its row allows, the ceiling on the held-out ones at the same steps; "
        "a row of dimensions trains only on environments one step from a held-out one along them"
    )
    t.caption_justify = "left"
    return t


def reading(readings: list[tuple[Cell, Reading | None]]) -> str:
    """The map in one line: each cell's held out beside its ceiling, and whether it can be read."""
    out = []
    for c, r in readings:
        where = f"{' and '.join(c.vary) or ALL} x {' '.join(c.design)}"
        if c.plan is None:
            out.append(f"{shown(where)}: {c.why}")
        elif r is None:
            out.append(f"{shown(where)}: not yet run")
        else:
            learned = "" if r.learned else " (not learned: says nothing of transfer)"
            out.append(f"{shown(where)}: held out {_pct(r.held)}% / ceiling {100 * r.ceiling[0]:.0f}%{learned}")
    return "; ".join(out)


def print_failures(c: Cell, found: HeldFailures, examples: int = 3) -> None:
    """A cell's held-out failures: solved of played, each failure kind's count, a few kept episodes as written."""
    where = f"{' and '.join(c.vary) or ALL} x {' '.join(c.design)}"
    kinds = ", ".join(f"{kind} {count}" for kind, count in found.kinds.items()) or "none"
    console.print(f"{shown(where)}: held out solved {found.solved} of {found.played}; failures: {shown(kinds)}")
    for name, text, kind in found.kept[:examples]:
        console.print(f"    {shown(name)}: {shown(text)}  ({shown(kind)})")


def _budget_words(made: list[Cell], budget: str) -> str:
    """`, every cell at 6,000 steps (matched)` when the map's budget is matched; nothing for each cell's own."""
    if budget != "matched":
        return ""
    steps = {c.plan.steps_of(c.plan.largest()) for c in made if c.plan is not None}
    return f", every cell at {max(steps, default=0):,} steps (matched)"


def _count(n: int, word: str) -> str:
    """`1 design`, `2 designs`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pct(value: tuple[float, float, float]) -> str:
    m, low, high = value
    return f"{100 * m:.0f} [{100 * low:.0f}-{100 * high:.0f}]"


def _record(c: Cell, r: Reading | None) -> dict:
    """A cell as JSON: its design, row, the environments it trained on and held out, and its reading."""
    out = {"design": list(c.design), "vary": list(c.vary) or [ALL], "why": c.why}
    if c.plan is not None:
        held, rest = c.plan.split(0)
        out |= {"held_out": held, "trained": rest, "steps": c.plan.steps_of(len(rest))}
    if r is not None:
        out |= {"train": r.train, "held": r.held, "ceiling": r.ceiling, "seeds": r.seeds}
    return out
