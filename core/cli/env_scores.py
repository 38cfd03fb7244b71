"""`breadth eval --envs`: a model scored on many environments, printed by dimension in 80 columns.

The environments are chosen as `breadth envs` chooses them (`--envs all` or ids, `--where DIM=VALUE`,
`--draw N`); each is scored on its test split; `core.results.dimensions.summarise` pools the scores and this
module draws them: one table per operand count (rows: the digits of each number; columns: the operation at
each gap, in each call form; a mean beside each row and under each column), then the means per form, per
operation and per operand count, and the overall mean.
"""

from __future__ import annotations

import time

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from breadth.core.results.dimensions import (
    OperandTable,
    Rate,
    Summary,
    environments_json,
    mark,
    summarise,
    summary_json,
)
from breadth.core.results.grid import refuse_repeats
from breadth.core.results.matrix import band
from breadth.core.storage.files import write_json
from breadth.core.world.arithmetic.calculator import FORMS
from breadth.core.world.arithmetic.problem import PLATE_FORM
from breadth.core.world.environments.pools import DEFAULT_POOL
from breadth.core.world.environments.registry import EnvError, draw, environment
from breadth.core.world.environments.task import Task
from breadth.core.world.runs.settings import FinetuneSettings, held_out_from_text
from breadth.core.world.text.shown import shown

console = Console(highlight=False, markup=False, emoji=False)

STYLE = {"high": "bold green", "middle": "yellow", "low": "red", "none": "dim red"}  # a cell's colour by its band
MISSING = "·"  # a cell no chosen environment sits at


def chosen(
    envs: str | None, conditions: list[str], n: int | None, seed: int, pool_name: str = DEFAULT_POOL
) -> list[Task]:
    """The environments `--envs all|ID,ID`, `--where` (all must hold) and `--draw N` (by `seed`) choose from the pool
    `pool_name` (ids name any environment; with --where or a pool besides the default, they must be in it too)."""
    from breadth.core.cli.envs import chosen_environments

    if envs is None or envs.strip().lower() == "all":
        return chosen_environments(conditions, n, seed, pool_name)
    named = [environment(text) for text in envs.split(",") if text.strip()]
    refuse_repeats("--envs", [f.name for f in named])
    if not named:
        raise EnvError("--envs takes all or environment ids, e.g. breadth/add-2x2-v1,breadth/2a1s2-v1")
    narrowed = conditions or pool_name != DEFAULT_POOL
    picked = {f.name for f in chosen_environments(conditions, None, seed, pool_name)} if narrowed else None
    pool = [f for f in named if picked is None or f.name in picked]
    if not pool:
        raise EnvError(f"no environment of --envs is in the {pool_name} pool at the --where coordinates")
    return pool if n is None else draw(n, seed, pool)


def cell(r: Rate | None, bold: bool = False) -> Text:
    """A rate as a coloured whole percent, `·` where nothing was scored."""
    if r is None or not r.total:
        return Text(MISSING, style="dim")
    return Text(r.percent(), style=STYLE[band(r.mean)] + (" bold" if bold else ""))


def operand_table(t: OperandTable) -> Group:
    """One operand count: its title, then digit layouts down, operation layouts across, means at the right and
    the bottom."""
    envs = t.mean.environments
    title = Text(f"{t.operands} numbers: {envs} environment{'s' if envs != 1 else ''}, mean ", style="bold")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("digits", no_wrap=True)
    for column in t.columns:
        table.add_column(column.header, justify="right", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    for row in t.rows:
        table.add_row(row, *(cell(t.cells.get((row, c))) for c in t.columns), cell(t.row_means[row], bold=True))
    table.add_row(
        Text("mean", style="bold"), *(cell(t.column_means[c], bold=True) for c in t.columns), cell(t.mean, bold=True)
    )
    return Group(Text(), title.append_text(cell(t.mean, bold=True)), table)  # a blank line between tables


def means_line(title: str, rates: dict[str, Rate]) -> Text:
    """`per form: infix 41% (139) · postfix 12% (44)`: a mean per value, its environment count in brackets."""
    line = Text(f"{title}: ", style="bold")
    for i, (value, r) in enumerate(rates.items()):
        if i:
            line.append(" · ")
        line.append(f"{value} ")
        line.append_text(cell(r))
        line.append(f" ({r.environments})", style="dim")
    return line


def summary_view(summary: Summary, title: str) -> Group:
    """Everything `breadth eval --envs` prints of a summary, to fit 80 columns."""
    o = summary.overall
    legend = ", ".join(f"{mark(f)}: {f}, {FORMS[f].about}" for f in FORMS if f != PLATE_FORM)
    parts: list = [
        Text(title, style="bold"),
        Text(
            "rows: digits of each number (2.1 is 23+4); columns: the operation at each gap (+- is 12+3-4)"
            + (f"; {legend}" if legend else ""),
            style="dim",
        ),
    ]
    parts += [operand_table(t) for t in summary.tables]
    parts += [
        Text(),
        means_line("per form", summary.by["form"]),
        means_line("per operation", summary.by["op"]),
        means_line("per operand count", summary.by["operands"]),
        Text.assemble(
            ("overall: ", "bold"),
            cell(o, bold=True),
            f" mean over {o.environments} environments ({o.solved:,} of {o.total:,} sums solved)",
        ),
    ]
    return Group(*parts)


def evaluate_environments(args) -> int:
    """`breadth eval CHECKPOINT --envs ...`: score the chosen environments' test splits, print them by dimension."""
    from breadth.core.cli.parser import UsageError
    from breadth.core.learning import checkpoint
    from breadth.core.learning.evaluate import evaluate_environments as run_eval
    from breadth.core.learning.train import use_one_thread

    if args.figure:
        raise UsageError(
            "--figure draws the ten named environments' scores; with --envs, --where, --draw or --pool use --json"
        )
    held_out = held_out_from_text(args.held_out)
    seed = None if args.seed is None else FinetuneSettings.from_text(seed=args.seed).seed
    envs = chosen(args.envs, args.where or [], args.draw, args.draw_seed, args.pool)  # refused before the model loads
    use_one_thread()
    model, header = checkpoint.load(args.checkpoint)
    seed = seed if seed is not None else header.run.seed or 0
    names = [f.name for f in envs]
    start = time.perf_counter()
    scores, _ = run_eval(model, seed, held_out, names)
    summary = summarise(scores)
    seconds = time.perf_counter() - start
    sums = "every" if held_out is None else held_out
    console.print(summary_view(summary, f"{args.checkpoint.name}: test splits of seed {seed}, {sums} sums each"))
    console.print(f"{summary.overall.total:,} episodes in {len(names)} environments in {seconds:.2f} s")
    if args.json:
        write_json(
            args.json,
            {
                "checkpoint": str(args.checkpoint),
                "seed": seed,
                "held_out": held_out,
                "summary": summary_json(summary),
                "environments": environments_json(scores),
            },
        )
        console.print(f"wrote {shown(args.json)}")
    return 0
