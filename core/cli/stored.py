"""`breadth runs` and `breadth report`: the runs a results store holds, filtered by the flags, listed and exported
(CSV, JSON), or summarised per cell with intervals and paired differences."""

from __future__ import annotations

import csv
import io
import time

from breadth.core.cli.grids import console, errors, parse_mixes, write_outputs
from breadth.core.cli.tables import cells_table, differences_table, runs_table
from breadth.core.results.grid import GridError, parse_seeds, refuse_repeats
from breadth.core.results.report import CellSummary, compare, summarise
from breadth.core.storage.files import user_path, write_atomic, write_json
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun
from breadth.core.world.runs.recipes import recipe_of, swept_by_any
from breadth.core.world.runs.settings import SettingsError, held_out_from_text
from breadth.core.world.text.shown import shown


def runs(args) -> int:
    """List stored runs; optionally export them."""
    found = _filtered(args)
    console.print(runs_table(found, f"{len(found)} stored runs", console.width))
    if args.csv:
        write_atomic(args.csv, _csv(found).encode())
        console.print(f"wrote {shown(args.csv)}")
    if args.json:
        write_json(args.json, [_run_json(r) for r in found])
        console.print(f"wrote {shown(args.json)}")
    return 0


def report(args) -> int:
    """Summarise stored runs per cell; optionally compare two cells and draw the curve."""
    refuse_repeats("--compare", args.compare or ())
    found = _filtered(args)
    cells = sorted(summarise(found), key=_cell_order)
    if not cells:
        console.print("no stored runs match")
        return 0
    console.print(
        cells_table(
            cells,
            f"{len(cells)} cells of {len(found)} stored runs; mean over seeds with 95% t "
            "interval, pooled Wilson interval",
        )
    )
    if args.compare:
        a, b = args.compare
        if max(a, b) > len(cells):
            raise GridError(f"there are {len(cells)} cells; compare two of 1..{len(cells)}")
        console.print(
            differences_table(compare(cells[a - 1], cells[b - 1]), f"cell {b} minus cell {a}, paired by seed")
        )
    write_outputs(cells, args.json, args.figure)
    return 0


def _cell_order(cell: CellSummary) -> tuple:
    """Cells in a stable order: mix, then settings, held-out size, base, and alone before lockstep."""
    k = cell.key
    return (
        k.mix,
        recipe_of(k.settings).name,
        tuple(k.settings.to_dict().values()),
        -1 if k.held_out is None else k.held_out,
        k.base_hash,
        k.lockstep,  # runs trained alone first
        k.part,
    )


def _filtered(args) -> list[StoredRun]:
    filters = {}
    for setting in swept_by_any():
        text = getattr(args, setting.name)
        if text is not None:
            try:
                filters[setting.name] = value = setting.read(text)
                setting.check(value)
            except SettingsError as e:
                raise GridError(str(e)) from None
    base_hash = None
    if args.base is not None:
        base_hash = weights_hash(BASE if str(args.base) == "shipped" else user_path(args.base))
    mixes = [m.spec() for m in parse_mixes(args.mix)]
    seeds = parse_seeds(args.seeds) if args.seeds else ()
    held_out = "any" if args.held_out is None else held_out_from_text(args.held_out)
    with Store(args.store, read_only=True) as store:
        found = store.runs(base_hash, mixes, seeds, held_out, **filters)
    if store.unreadable:
        first = store.unreadable[0]
        errors.print(
            f"note: skipped {len(store.unreadable)} stored rows it cannot read, e.g. {shown(first)}", markup=False
        )
    return found


def csv_columns() -> tuple[str, ...]:
    """The columns of `breadth runs --csv`: one per setting a sweep may vary, among the run's and score's."""
    return ("key", "mix", "seed", *(s.name for s in swept_by_any()), *_CSV_AFTER)


_CSV_AFTER = (
    "held_out",
    "family",  # the environment: the --csv column as written before (public)
    "solved",
    "total",
    "rate",
    "failures",
    "train_seconds",
    "base",
    "source",
    "breadth",
    "torch",
    "created",
)


def _csv(found: list[StoredRun]) -> str:
    """One row per run and environment."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(csv_columns())
    for r in found:
        s = r.run.settings
        for name, score in r.run.scores.items():
            failures = "; ".join(f"{k} {v}" for k, v in score.failures.items())
            writer.writerow(
                [
                    r.key,
                    r.run.mix,
                    r.run.seed,
                    *(getattr(s, setting.name, "") for setting in swept_by_any()),
                    "all" if r.run.held_out is None else r.run.held_out,
                    name,
                    score.solved,
                    score.total,
                    round(score.rate, 4),
                    failures,
                    round(r.run.train_seconds, 3),
                    r.base_hash,
                    r.source,
                    r.versions.get("breadth", ""),
                    r.versions.get("torch", ""),
                    time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.created)) if r.created else "",
                ]
            )
    return out.getvalue()


def _run_json(r: StoredRun) -> dict:
    return {
        "key": r.key,
        **{k: v for k, v in r.run.to_dict().items() if k != "base"},
        "base": r.base_hash,
        "source": r.source,
        "checkpoint": r.checkpoint,
        "versions": r.versions,
        "created": r.created,
    }
