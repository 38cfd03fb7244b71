"""What the command line prints: score tables, the plate's table, episodes coloured by who wrote them.

Every name that comes from a store, a checkpoint or the person (a mix, an environment, a failure kind, a source,
a transcript, a title) goes into a table as `shown_text`: a `Text` Rich never parses, with nothing the
terminal would act on (core.world.text.shown).
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from breadth.core.results.matrix import TRAINED, BreadthPoint, MatrixRow, columns, group_of, row_names
from breadth.core.results.matrix_dimensions import OWN, dimension_columns, pooled
from breadth.core.results.report import BudgetPoint, CellSummary, PairedDifference, varied
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import StoredRun
from breadth.core.world.environments.environment import REGISTERED, short_label
from breadth.core.world.environments.mix import Mix, MixError, short_spec
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.episodes.scoring import Scored
from breadth.core.world.runs.recipes import recipe_of, swept_by_any
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.stats import mean_sd, wilson
from breadth.core.world.text.shown import shown, shown_text
from breadth.core.world.text.transcript import Transcript, visible


def scores_table(scores: dict[str, HeldOutScore], title: str) -> Table:
    """Per environment: solved/total, the rate, its 95% Wilson interval, and the failure kinds."""
    t = Table(title=shown_text(title), title_justify="left")
    t.add_column("environment", min_width=len("environment"))  # never environm…
    t.add_column("solved", justify="right")
    t.add_column("rate", justify="right")
    t.add_column("95% interval", justify="right")
    t.add_column("failures")
    for name, s in scores.items():
        lo, hi = wilson(s.solved, s.total)
        fails = ", ".join(f"{shown(k)} {v}" for k, v in s.failures.items()) or "-"
        t.add_row(
            shown_text(name), f"{s.solved}/{s.total}", s.percent(), f"{100 * lo:.0f}-{100 * hi:.0f}%", Text(fails)
        )
    return t


def plate_table(records: dict[tuple[str, int], RunMeta], seeds: list[int], held_out: int | None) -> Table:
    """The plate's figure: per preset and environment, mean ± sd over seeds, each seed, and the plate's number."""
    n = "all" if held_out is None else held_out
    t = Table(
        title=f"held-out success, {n} sums per environment; mean ± sd over seeds {','.join(map(str, seeds))}",
        title_justify="left",
        box=box.SIMPLE_HEAD,  # no rules between columns: the table fits 80 columns with ten seeds
    )
    plate = list(dict.fromkeys(fam for preset in PRESETS.values() for fam in preset.plate))
    others = [fam for fam in REGISTERED if fam not in plate]
    # the labels keep their words whole (`three-digit 70`); per-seed numbers fold onto more lines when narrow
    t.add_column("trained on", min_width=max(len(w) for p in PRESETS.values() for w in p.label.split()))
    for fam in plate:
        t.add_column(REGISTERED[fam].short, justify="right", no_wrap=True)
        t.add_column("seeds", justify="right", style="dim", max_width=11)  # three a line; ten seeds on four
    if others:
        t.add_column("others", justify="right")  # the mean over every environment no plate mix trains on
    t.add_column("plate %", justify="right", style="dim")
    for preset in PRESETS.values():
        row = [preset.label]
        for fam in plate:
            rates = [100 * records[(preset.name, s)].scores[fam].rate for s in seeds]
            m, sd = mean_sd(rates)
            row += [f"{m:.0f}% ± {sd:.0f}", " ".join(f"{r:.0f}" for r in rates)]
        if others:  # environments none of the plate's mixes trains on: the mean over them and over seeds
            rates = [
                100 * records[(preset.name, s)].scores[fam].rate
                for s in seeds
                for fam in others
                if fam in records[(preset.name, s)].scores
            ]
            row.append(f"{mean_sd(rates)[0]:.0f}%" if rates else "-")
        row.append("/".join(str(preset.plate.get(fam, 0)) for fam in plate))
        t.add_row(*row)
    return t


def episode_lines(transcript: Transcript) -> list[Text]:
    """One line per segment under its writer's name (readable without colour too)."""
    return [
        Text.assemble(f"  {seg.role.writer:<11}", (shown(visible(seg.text)), seg.role.style))
        for seg in transcript.segments
    ]


def episode_json(scored: Scored) -> dict:
    """One evaluated episode as JSON: the problem, the segments by role, the verdict."""
    return {
        "family": scored.problem.environment,  # the --json key, as written before (public)
        "prompt": scored.problem.prompt,
        "answer": scored.problem.answer,
        "segments": [[s.role.value, s.text] for s in scored.episode.transcript.segments],
        "solved": scored.verdict.solved,
        "failure": scored.verdict.failure.value if scored.verdict.failure else None,
    }


def cells_table(cells: list[CellSummary], title: str) -> Table:
    """A row per cell (numbered, for `report --compare`) and environment: mean, intervals, and every seed's rate."""
    varies = varied(cells)
    t = Table(title=shown_text(title), title_justify="left", pad_edge=False)  # room for one-decimal intervals
    t.add_column("#", justify="right", style="dim")
    t.add_column("cell")
    t.add_column("env")  # short, as in `breadth envs`: a wider header cut the seeds' rates at 80 columns
    t.add_column("seeds", justify="right")
    t.add_column("mean %", justify="right")
    t.add_column("95% seeds", justify="right", no_wrap=True)  # intervals stay whole; the labels fold instead
    t.add_column("pooled", justify="right", style="dim", no_wrap=True)
    t.add_column("per seed %", style="dim")
    for i, cell in enumerate(cells, start=1):
        for j, (name, f) in enumerate(cell.environments.items()):
            short = short_label(name)
            t.add_row(
                str(i) if j == 0 else "",
                shown_text(cell_label(cell, varies)) if j == 0 else "",
                shown_text(short),
                str(len(f.rates)),
                f"{100 * f.mean:.1f}",
                f"{100 * f.low:.1f}-{100 * f.high:.1f}",
                f"{100 * f.pooled_low:.1f}-{100 * f.pooled_high:.1f}",
                " ".join(f"{100 * f.rates[s]:.0f}" for s in cell.seeds if s in f.rates),
                end_section=j == len(cell.environments) - 1,
            )
    return t


def cell_label(cell: CellSummary, shown: tuple[str, ...]) -> str:
    """The cell's mix and what else differs between the cells shown; `lockstep K` for runs trained in lockstep."""
    key = cell.key
    parts = [short_spec(key.mix)]
    settings = {s.name: s for s in swept_by_any()}
    for name in shown:
        if name == "recipe":
            parts.append(recipe_of(key.settings).label)
        elif name in settings and hasattr(key.settings, name):
            parts.append(f"{settings[name].words} {settings[name].show(getattr(key.settings, name))}")
        elif name == "held_out":
            parts.append(f"held-out {'all' if key.held_out is None else key.held_out}")
        elif name == "base":
            parts.append(f"base {key.base_hash[:8]}")
    return " ".join([*parts, key.note] if key.note else parts)  # trained in lockstep: said whatever else differs


def differences_table(differences: list[PairedDifference], title: str) -> Table:
    """Per environment: seeds paired, mean difference in points, its 95% interval."""
    t = Table(title=shown_text(title), title_justify="left")
    t.add_column("environment", min_width=len("environment"))
    t.add_column("seeds", justify="right")
    t.add_column("mean difference", justify="right")
    t.add_column("95% interval", justify="right")
    for d in differences:
        if d.seeds == 0:
            t.add_row(shown_text(d.environment), "0", "no seed in common", "")
            continue
        t.add_row(
            shown_text(d.environment),
            str(d.seeds),
            f"{100 * d.mean:+.1f} points",
            f"{100 * d.low:+.1f} to {100 * d.high:+.1f}",
        )
    return t


def runs_table(runs: list[StoredRun], title: str, width: int | None = None) -> Table:
    """One row per stored run: mix, seed, settings, held-out size, per-environment score, seconds, source.

    Every environment a column when that fits `width` (None: any width); narrower, the environments fold into two
    columns, `own` (mean over the run's mix's environments) and `other` (over the rest), and the settings into one
    column naming those that differ from the defaults, so no cell is cut (`--csv` and `--json` keep everything).
    """
    full = _runs_wide(runs, title)
    if width is None or _width(full) <= width:
        return full
    return _runs_folded(runs, title)


def _width(table: Table) -> int:
    """The columns a table needs to show every cell whole."""
    from rich.console import Console

    return Console(width=10_000).measure(table).maximum


def _runs_wide(runs: list[StoredRun], title: str) -> Table:
    t = Table(title=shown_text(title), title_justify="left")
    settings = swept_by_any()
    for column, justify in (
        ("key", "left"),
        ("mix", "left"),
        ("seed", "right"),
        *((s.short, "right") for s in settings),
        ("held-out", "right"),
    ):
        t.add_column(column, justify=justify)
    names = list(dict.fromkeys(name for r in runs for name in r.run.scores))
    for name in names:
        t.add_column(shown_text(short_label(name)), justify="right")
    t.add_column("s", justify="right")
    t.add_column("source")
    for r in runs:
        s = r.run.settings
        row = [
            shown_text(r.key[:8]),
            shown_text(short_spec(r.run.mix or "?")),
            str(r.run.seed),
            *(setting.show(getattr(s, setting.name)) if hasattr(s, setting.name) else "-" for setting in settings),
            "all" if r.run.held_out is None else str(r.run.held_out),
        ]
        row += [r.run.scores[name].percent() if name in r.run.scores else "-" for name in names]
        row += [f"{r.run.train_seconds + r.run.eval_seconds:.1f}", shown_text(r.source)]
        t.add_row(*row)
    return t


def _runs_folded(runs: list[StoredRun], title: str) -> Table:
    t = Table(title=shown_text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column, justify in (
        ("key", "left"),
        ("mix", "left"),
        ("seed", "right"),
        ("settings", "left"),
        ("held", "right"),
        ("own", "right"),
        ("other", "right"),
        ("s", "right"),
        ("source", "left"),
    ):
        t.add_column(column, justify=justify, overflow="fold")
    for r in runs:
        own, other = _own_other(r.run)
        t.add_row(
            shown_text(r.key[:6]),
            shown_text(short_spec(r.run.mix or "?")),
            str(r.run.seed),
            shown_text(r.run.settings_note or "default"),
            "all" if r.run.held_out is None else str(r.run.held_out),
            own,
            other,
            f"{r.run.train_seconds + r.run.eval_seconds:.0f}",
            shown_text(r.source),
        )
    t.caption = "own: mean over the mix's environments; other: over the rest; --csv for every environment"
    t.caption_justify = "left"
    return t


def _own_other(run: RunMeta) -> tuple[str, str]:
    """Mean success over the run's own (mix) environments and over the others, as `97%` (`-` for none)."""
    try:
        trained = {name for name, _ in Mix.parse(run.mix).counts} if run.mix else set()
    except MixError:  # a stored mix of environments this version does not register
        trained = set()
    own = [s.rate for f, s in run.scores.items() if f in trained]
    other = [s.rate for f, s in run.scores.items() if f not in trained]
    return tuple(f"{100 * sum(x) / len(x):.0f}%" if x else "-" for x in (own, other))  # type: ignore[return-value]


def budget_table(points: list[BudgetPoint], title: str, width: int | None = None) -> Table:
    """Per environment and total: success trained alone and in an even mix, and the paired cost of mixing.

    Narrower than the full table needs (`width`), the alone, mix and demos columns narrow to their longest word or
    value (their headers fold), so the paired column keeps room for its interval and no cell is cut."""
    t = Table(title=shown_text(title), title_justify="left")
    t.add_column("env")  # short, as in `breadth envs`: a wider header cut the paired interval at 80 columns
    t.add_column("total", justify="right")
    t.add_column("alone %", justify="right")
    t.add_column("95%", justify="right", style="dim", no_wrap=True)  # intervals stay whole; the headers fold
    t.add_column("in the mix %", justify="right")
    t.add_column("95%", justify="right", style="dim", no_wrap=True)
    t.add_column("own demos", justify="right", style="dim")
    t.add_column("mix - alone (paired)", justify="right")
    for i, p in enumerate(points):
        short = short_label(p.environment)
        n, mean, low, high = p.paired()
        last = i == len(points) - 1 or points[i + 1].environment != p.environment
        t.add_row(
            shown_text(short),
            str(p.total),
            f"{100 * p.alone.mean:.1f}",
            f"{100 * p.alone.low:.1f}-{100 * p.alone.high:.1f}",
            f"{100 * p.mixed.mean:.1f}",
            f"{100 * p.mixed.low:.1f}-{100 * p.mixed.high:.1f}",
            str(p.mixed_count),
            f"{100 * mean:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]" if n > 1 else f"{100 * mean:+.1f}",
            end_section=last,
        )
    if width is not None and _width(t) > width:
        for column in (t.columns[2], t.columns[4], t.columns[6]):  # alone %, in the mix %, own demos
            column.max_width = max(len(word) for word in [*str(column.header).split(), *map(str, column.cells)])
    return t


def matrix_table(rows: list[MatrixRow], title: str, width: int | None = None) -> Table:
    """Rows: training mixes; columns: every environment, grouped; cells: mean % over seeds and its 95% interval.

    Narrower than the full table needs (`width`), the cells keep their means and lose their intervals (said in
    the caption; `--json` and the figure keep them), so no cell is cut. Rows scored on generated environments (a
    breadth curve's) that do not fit a column each even so have their environments pooled by dimension
    (`core.results.matrix_dimensions`), said in the caption; the registered environments alone keep their columns."""
    full = _matrix(rows, title, intervals=True)
    if width is None or _width(full) <= width:
        return full
    narrow = _matrix(rows, title, intervals=False)
    if len(columns(rows)) == len(columns()) or _least(narrow) <= width:
        return narrow
    return _matrix_by_dimension(rows, title)


def _least(table: Table) -> int:
    """The fewest columns a table needs with no cell cut (labels folded at their words)."""
    from rich.console import Console

    return Console(width=10_000).measure(table).minimum


def _matrix(rows: list[MatrixRow], title: str, intervals: bool) -> Table:
    names = columns(rows)
    if intervals:
        t = Table(title=shown_text(title), title_justify="left", show_lines=True)
    else:  # one character between columns, the trained-on label folded at its words
        t = Table(
            title=shown_text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, 1)
        )
        t.caption = "n: seeds; mean % over seeds (95% intervals with --json, in the figure, or on a wider terminal)"
        t.caption_justify = "left"
    t.add_column("trained on", ratio=1)
    t.add_column("seeds" if intervals else "n", justify="right", style="dim", no_wrap=True)
    for i, name in enumerate(names):
        first = i == 0 or group_of(names[i - 1]) != group_of(name)
        header = f"{group_of(name)}\n{short_label(name)}" if first else f"\n{short_label(name)}"
        t.add_column(header, justify="right", no_wrap=not intervals)
    for row, row_name in zip(rows, row_names(rows), strict=True):  # two rows never share a name
        cells = []
        for name in names:
            f = row.cells.get(name)
            if f is None:
                cells.append(Text("-", style="dim"))
                continue
            mark = "*" if name in row.trained else ""
            interval = (f"\n{100 * f.low:.0f}-{100 * f.high:.0f}", "dim") if intervals else ("", "")
            cells.append(Text.assemble((f"{mark}{100 * f.mean:.0f}", "bold" if mark else ""), interval))
        t.add_row(shown_text(row_name), str(len(row.seeds)), *cells)
    return t


def _matrix_by_dimension(rows: list[MatrixRow], title: str) -> Table:
    """The matrix with its environments pooled by dimension: `own` (trained on, `*`), then held out: all, by
    operand count, operation and call form; each environment once, its mean over seeds."""
    dims = dimension_columns(rows)  # one character between columns: the group names are words, wider than cells
    t = Table(title=shown_text(title), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=0)
    environments = len({name for row in rows for name in row.cells})
    t.caption = (
        f"{environments} environments, more than fit a column each: own pools those a row trained on (*), the rest "
        "those it did not (held out): all, then by how many numbers, operation, call form. Mean % over seeds, each "
        "environment once (each alone with --json); n: seeds; - none there"
    )
    t.caption_justify = "left"
    t.add_column("trained on", ratio=1)
    t.add_column("n", justify="right", style="dim", no_wrap=True)
    for i, column in enumerate(dims):
        first = i == 0 or dims[i - 1].dimension != column.dimension
        t.add_column(f"{column.group if first else ''}\n{column.header}", justify="right", no_wrap=True)
    for row, row_name in zip(rows, row_names(rows), strict=True):
        cells = []
        for column in dims:
            r = pooled(row, column)
            own = column.dimension == OWN
            cells.append(Text("-", style="dim") if r is None else Text(("*" if own else "") + f"{100 * r.mean:.0f}"))
            if own and r is not None:
                cells[-1].stylize("bold")
        t.add_row(shown_text(row_name), str(len(row.seeds)), *cells)
    return t


def breadth_table(points: list[BreadthPoint], title: str) -> Table:
    """Per row (environments trained on): success on each held-out environment and on its own, with 95% intervals."""
    t = Table(title=shown_text(title), title_justify="left")
    t.add_column("trained on")
    t.add_column("envs", justify="right")
    t.add_column("demos", justify="right", style="dim")
    names = list(dict.fromkeys(p.environment for p in points))
    for name in names:
        t.add_column("own (mean)" if name == TRAINED else f"{REGISTERED[name].short} held out", justify="right")
    for mix in dict.fromkeys(p.mix for p in points):
        mine = {p.environment: p for p in points if p.mix == mix}
        first = next(iter(mine.values()))
        cells = [
            f"{100 * mine[n].mean:.1f} [{100 * mine[n].low:.1f}-{100 * mine[n].high:.1f}]" if n in mine else "-"
            for n in names
        ]
        t.add_row(shown_text(short_spec(mix)), str(first.environments), str(first.demonstrations), *cells)
    return t
