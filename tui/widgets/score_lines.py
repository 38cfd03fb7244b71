"""What the score panel writes, as text: a bar with its 95% interval per environment trained on, the other environments
under their mean (in words, or by code where a person asked), pooled lines for a run scored on generated
environments, the line over seeds, the runs table's column labels and titles cut to fit. No widget here:
`tui.widgets.score_panel` lays these out.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text

from breadth.core.results.dimensions import group
from breadth.core.results.report import cells_by_seed, lockstep_note
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import header, name_for
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.registry import by_name
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.stats import mean_interval, wilson
from breadth.core.world.text.shown import clip_title, shown
from breadth.tui.catalog import PLATE, ModelEntry

BAR = 10  # bar width in cells

MODEL_WIDTH = 11  # characters of a model's title in the runs table at 80 columns (the header line shows all of it)
MAX_MODEL_WIDTH = 30  # and at most this many on a wide screen
GRID_COLUMNS = 4  # other environments per line in the summary (4 x 9 cells fit the panel at 80x24)
SEED_WIDTH = 4  # seeds are small numbers; the header `seed` follows `model`, never a long title
# the runs table after model and seed: (key, width); cells are right-justified, no padding between
SCORE_COLUMNS = (  # a plate column is one wider than its widest header line (`10-99`), which would touch its neighbour
    *((n, 1 + max(len(REGISTERED[n].short), *map(len, header(REGISTERED[n])))) for n in PLATE),
    ("own", 4),
    ("other", 5),  # its header under `own`'s line: `other` fills the column
)


def column_label(key: str, width: int, codes: bool = False) -> str:
    """A runs-table column's two header lines, right-justified to `width`: a plate environment as the matrix names its
    column (`add 2` over `10-99`: `labels.header`), or, with `codes`, its short label (`a2x2`); `own` over the
    bottom line's `other`, so that the two touch on neither line; `seed` at the bottom."""
    if key in REGISTERED:
        lines = ("", REGISTERED[key].short) if codes else header(REGISTERED[key])
    else:
        lines = (key, "") if key == "own" else ("", key)
    return "\n".join(f"{line:>{width}}" for line in lines)


def own_environments(run: RunMeta) -> list[str]:
    """The environments in a run's mix, in registry order (none for a model whose mix is unknown)."""
    try:
        return [name for name, _ in Mix.parse(run.mix).counts] if run.mix else []
    except MixError:
        return []


def registered_only(scores: dict[str, HeldOutScore], own: list[str]) -> bool:
    """True if a run's mix and scores name the registered environments alone (the panel as it has always been)."""
    return all(n in REGISTERED for n in (*own, *scores))


def others_of(scores: dict[str, HeldOutScore], own: list[str]) -> list[str]:
    """The environments `other` means: every registered environment outside the mix, or, for a run scored on generated
    environments, every one it was scored on outside its mix."""
    if registered_only(scores, own):
        return [n for n in REGISTERED if n not in own]
    return [n for n in scores if n not in own]


def pooled_score(scores: dict[str, HeldOutScore], names: list[str], label: str) -> HeldOutScore | None:
    """The scores of `names` (those scored) as one: sums and failure kinds added; None if none was scored."""
    got = [scores[n] for n in names if n in scores and scores[n].total]
    if not got:
        return None
    kinds: dict[str, int] = {}
    for s in got:
        for kind, n in s.failures.items():
            kinds[kind] = kinds.get(kind, 0) + n
    return HeldOutScore(label, sum(s.solved for s in got), sum(s.total for s in got), kinds)


def mean_rate(scores: dict[str, HeldOutScore], names: list[str]) -> float | None:
    """Mean success (0..1) over the environments `names`, each weighted alike; None unless every one was scored."""
    rates = [scores[n].rate for n in names if n in scores and scores[n].total]
    return sum(rates) / len(rates) if rates and len(rates) == len(names) else None


def _colour(rate: float) -> str:
    return "green" if rate >= 0.85 else "yellow" if rate >= 0.3 else "red"


BAR_TEXT = len(" 30/30 100% 89-100")  # what follows a bar: solved of total, the rate, its widest interval


def score_bar(score: HeldOutScore, bar: int = BAR) -> Text:
    """`█████████░ 27/30  90% 74-97` coloured by how much is solved, then its 95% interval; the bar `bar` cells."""
    rate = score.rate
    full = round(rate * bar)
    colour = _colour(rate)
    lo, hi = wilson(score.solved, score.total)
    return Text.assemble(
        ("█" * full, colour),
        ("░" * (bar - full), "grey37"),
        f" {score.solved:>2}/{score.total:<2} {100 * rate:3.0f}% ",
        (f"{100 * lo:.0f}-{100 * hi:.0f}", "dim"),
    )


def other_environments(scores: dict[str, HeldOutScore], own: list[str], codes: bool = False) -> Text:
    """The environments outside `own` under their mean, `other environments  mean 1%`, as a small table in the words
    the matrix names its columns with (`labels.header`: what is done to how many numbers, over their range):

        add   2   3   4 sub   2   3   4
      0-9   7       0           0   0      (0-9: add 2 numbers 7%, add 4 0%, sub 3 0%, sub 4 0%)
    10-99       0   0       0   0

    With `codes`, by short label, four to a line: `a2x1   7 a4x1   0 ...`. An environment never scored shows `-`; the
    mean is over those scored, and says so when some are missing.
    """
    names = [n for n in REGISTERED if n not in own]
    scored = [n for n in names if n in scores and scores[n].total]
    heading = Text("other environments" if own else "every environment (mix unknown)", style="bold")
    if scored:
        mean = sum(scores[n].rate for n in scored) / len(scored)
        heading.append("  mean ")
        heading.append(f"{100 * mean:.0f}%", _colour(mean))
        if len(scored) < len(names):
            heading.append(f" of {len(scored)} scored", "dim")
    return Text("\n").join([heading, *(_codes_grid if codes else _words_table)(scores, names)])


def _score(scores: dict[str, HeldOutScore], name: str) -> Text:
    """An environment's score in three characters, in its colour, or a dim `-` if not scored."""
    s = scores.get(name)
    if s and s.total:
        return Text(f"{100 * s.rate:>3.0f}", _colour(s.rate))
    return Text(f"{'-':>3}", "dim")


def _codes_grid(scores: dict[str, HeldOutScore], names: list[str]) -> list[Text]:
    """`a2x1   7 a4x1   0 a3x2   0 a4x2   0`: four to a line."""
    lines = []
    for i in range(0, len(names), GRID_COLUMNS):
        line = Text()
        for j, name in enumerate(names[i : i + GRID_COLUMNS]):
            line.append(" " if j else "").append(f"{REGISTERED[name].short:<5}", "dim").append_text(
                _score(scores, name)
            )
        lines.append(line)
    return lines


def _words_table(scores: dict[str, HeldOutScore], names: list[str]) -> list[Text]:
    """The environments by their matrix columns' words: a column for each operation and count (`add` over 2, 3, 4), a
    row for each range of numbers (`0-9`); a cell is blank where no environment outside the mix sits."""
    at = {header(REGISTERED[n]): n for n in names}  # (`add 3`, `0-9`) -> environment
    done = {what: what.split(" ", 1) for what, _ in at}  # `add 3` -> [`add`, `3`]
    ops = list(dict.fromkeys(verb for verb, _ in done.values()))
    columns = [[w for w in sorted(done, key=lambda w: done[w][1]) if done[w][0] == op] for op in ops]
    rows = list(dict.fromkeys(numbers for _, numbers in at))
    front = max(map(len, rows), default=0)
    head = Text(" " * front, "dim")
    for op, whats in zip(ops, columns, strict=True):
        head.append(f" {op}", "dim")
        for what in whats:
            head.append(f"{done[what][1]:>4}", "dim")
    lines = [head]
    for numbers in rows:
        line = Text(f"{numbers:>{front}}", "dim")
        for op, whats in zip(ops, columns, strict=True):
            line.append(" " * (1 + len(op)))
            for what in whats:
                name = at.get((what, numbers))
                line.append(" ").append_text(_score(scores, name) if name else Text("   "))
        lines.append(line)
    return lines


def pooled_lines(scores: dict[str, HeldOutScore], own: list[str]) -> list[Text]:
    """A run scored on generated environments: one bar over its own environments (and their failure kinds), then
    the other environments' mean and, for each dimension on which they differ, the mean at each value."""
    lines = []
    mine = pooled_score(scores, own, "own")
    label = Text("own ", style="bold")
    lines.append(label + (score_bar(mine) if mine else Text("not evaluated", style="dim")))
    if mine:
        kinds = ", ".join(f"{shown(kind)} {n}" for kind, n in sorted(mine.failures.items(), key=lambda kv: -kv[1]))
        count = sum(1 for n in own if n in scores and scores[n].total)
        line = f"    {count} environment{'s' if count != 1 else ''}" + (f": {kinds}" if kinds else "")
        lines.append(Text(line, style="dim", no_wrap=True, overflow="ellipsis"))
    others = {}
    for n in others_of(scores, own):
        try:
            by_name(n)  # a stored run's environment of a version no longer generated is left out
        except KeyError:
            continue
        if scores[n].total:
            others[n] = scores[n]
    heading = Text("other environments", style="bold")
    if not others:
        return [*lines, heading.append("  none scored", style="dim")]
    mean = sum(s.rate for s in others.values()) / len(others)
    lines.append(heading.append("  mean ").append(f"{100 * mean:.0f}%", _colour(mean)).append(f" of {len(others)}"))
    for dimension in ENV_DIMENSIONS:
        rates = group(others, (dimension,))
        if len(rates) < 2:
            continue  # every other environment has the same value: nothing to tell apart
        line = Text(f"{'numbers' if dimension == 'operands' else dimension} ", style="dim")
        for i, ((value,), r) in enumerate(sorted(rates.items())):
            line.append(" · " if i else "").append(f"{value} ").append(f"{r.percent()}", _colour(r.mean))
        line.no_wrap, line.overflow = True, "ellipsis"
        lines.append(line)
    return lines


def across_seeds(entries: list[ModelEntry], current: ModelEntry | None = None, codes: bool = False) -> Text:
    """Mean and 95% interval over seeds (%) for each mix and settings run on two or more seeds.

    `mix 35+35 ×10: two-digit 85 [78-93] 3 singles 91 [82-100] other 1 [0-2]` reads: ten seeds of that mix, the
    same settings, two-digit 85% (95% t interval over seeds 78-93), three singles 91%, and the mean over the
    environments outside the mix 1%. The run's own environments come first, then the plate's, then `other` when
    every run scored every environment outside its mix (else each further environment scored). Runs trained in lockstep
    pool apart from runs trained alone (`core.results.report.cells_by_seed`), their line saying `lockstep K`. With
    `current`, only its group.
    """
    scored = [e for e in entries if e.run.scores and e.run.seed is not None and e.run.settings is not None]
    cells = cells_by_seed(scored, _recipe)  # one run per seed; runs trained in lockstep apart from runs trained alone
    if current is not None:
        alone = current.run.lockstep is None and current.run.settings is not None
        cells = [c for c in cells if current in c[3].values()] or [
            c
            for c in cells
            if alone and not c[1] and c[0] == _recipe(current)  # a later run of its seed kept
        ]
    lines = []
    for _, size, part, runs in cells:
        if len(runs) < 2:
            continue
        some = next(iter(runs.values()))
        own = own_environments(some.run)
        others = others_of(some.run.scores, own)
        if registered_only(some.run.scores, own):
            first = [*own, *(n for n in PLATE if n not in own)]
            parts = [
                _over_seeds(name_for(by_name(n), codes), [_rate(r.scores, [n]) for r in runs.values()]) for n in first
            ]
        else:  # generated environments: their own pooled, as the panel shows them
            first = own
            parts = [_over_seeds("own", [_rate(r.scores, [n for n in own if n in r.scores]) for r in runs.values()])]
        other = [_rate(r.scores, others) for r in runs.values()]
        if others and None not in other:
            parts.append(_over_seeds("other", other))
        else:  # some run lacks an environment outside its mix: each further environment scored, as it stands
            rest = (n for n in REGISTERED if n not in first)
            parts += [
                _over_seeds(name_for(by_name(n), codes), [_rate(r.scores, [n]) for r in runs.values()]) for n in rest
            ]
        title = " ".join(filter(None, (shown(some.run.mix_name(codes)), lockstep_note(size, part))))
        lines.append(Text.assemble((f"{title} ×{len(runs)}: ", "bold"), " ".join(filter(None, parts))))
    return Text("\n").join(lines)


def _recipe(e: ModelEntry) -> tuple:
    """What runs pooled over seeds share: the mix, the same settings but the seed, the held-out size."""
    return (e.run.mix, replace(e.run.settings, seed=0), e.run.held_out)


def _rate(scores: dict[str, HeldOutScore], names: list[str]) -> float | None:
    rate = mean_rate(scores, names)
    return None if rate is None else 100 * rate


def _over_seeds(label: str, rates: list[float | None]) -> str:
    """`2d 85 [78-93]` over the seeds that scored it ('' if none did)."""
    got = [r for r in rates if r is not None]
    if not got:
        return ""
    m, lo, hi = mean_interval(got)
    return f"{label} {m:.0f} [{max(0, lo):.0f}-{min(100, hi):.0f}]"


def fit_title(title: str, width: int = MODEL_WIDTH) -> str:
    """A title cut to `width` where a word ends, keeping a trailing run number (`mix 35+35 lr 0.01 #1` ->
    `mix 35+… #1`)."""
    return clip_title(title, width)


def run_cells(entry: ModelEntry, style: str = "") -> list[Text]:
    """A run's seed and SCORE_COLUMNS as cells right-justified to their width (%); `-` where one is not scored."""
    own = own_environments(entry.run)
    if not registered_only(entry.scores, own):  # own and other over the environments it was scored on
        own = [n for n in own if n in entry.scores]
    groups = {"own": own, "other": others_of(entry.scores, own)}
    cells = [Text(f"{entry.seed:>{SEED_WIDTH}}", style=style)]
    for key, width in SCORE_COLUMNS:
        rate = mean_rate(entry.scores, groups.get(key, [key]))
        cells.append(Text(f"{'-' if rate is None else f'{100 * rate:.0f}':>{width}}", style=style))
    return cells
