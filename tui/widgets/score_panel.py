"""The score panel: held-out success per family for the loaded model, and the table of every run.

A model is scored on every family of the grid; the panel's title names the model. The families it was trained on
(its mix) get a bar with a 95% interval, because 30 held-out sums are noisy; the other environments, those outside its
mix, are summarised in a small table under their mean, named as the matrix names its columns (`add 3` over `0-9`), so
the story reads at a glance: trained 100%, elsewhere near 0%. Families are named in words, by their codes where a
person asked (Shift+F5). The runs table keeps to columns that fit 80x24: the plate's two families, then
`own` (mean over the run's mix) and `other` (mean over every family outside it); selecting a row
switches to that model. When the current model's mix has been run on several seeds with the same
settings (here or in a sweep, read from the results store), a line gives means and 95% intervals
over those seeds. A run scored on generated environments (a breadth curve's: up to a dozen, ids of up to 15
characters) shows them pooled instead: one bar over its own, then the others' mean and their means by each
dimension they differ on (`core.results.dimensions`); `own` and `other` are over the environments it was scored on.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from breadth.core.results.dimensions import group
from breadth.core.results.report import cells_by_seed, lockstep_note
from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS
from breadth.core.world.environments.families import FAMILIES
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.registry import family
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.stats import mean_interval, wilson
from breadth.core.world.text.shown import clip_title, shown
from breadth.tui.catalog import PLATE, ModelEntry
from breadth.tui.guard import guarded

BAR = 10  # bar width in cells

MODEL_WIDTH = 11  # characters of a model's title in the runs table at 80 columns (the header line shows all of it)
MAX_MODEL_WIDTH = 30  # and at most this many on a wide screen
GRID_COLUMNS = 4  # other environments per line in the summary (4 x 9 cells fit the panel at 80x24)
SEED_WIDTH = 4  # seeds are small numbers; the header `seed` follows `model`, never a long title
# the runs table after model and seed: (key, width); cells are right-justified, no padding between
SCORE_COLUMNS = (  # a plate column is one wider than its widest header line (`10-99`), which would touch its neighbour
    *((n, 1 + max(len(FAMILIES[n].short), *map(len, FAMILIES[n].header))) for n in PLATE),
    ("own", 4),
    ("other", 5),  # its header under `own`'s line: `other` fills the column
)


def column_label(key: str, width: int, codes: bool = False) -> str:
    """A runs-table column's two header lines, right-justified to `width`: a plate family as the matrix names its
    column (`add 2` over `10-99`: `Family.header`), or, with `codes`, its short label (`a2x2`); `own` over the
    bottom line's `other`, so that the two touch on neither line; `seed` at the bottom."""
    if key in FAMILIES:
        lines = ("", FAMILIES[key].short) if codes else FAMILIES[key].header
    else:
        lines = (key, "") if key == "own" else ("", key)
    return "\n".join(f"{line:>{width}}" for line in lines)


def own_families(run: RunMeta) -> list[str]:
    """The families in a run's mix, in registry order (none for a model whose mix is unknown)."""
    try:
        return [name for name, _ in Mix.parse(run.mix).counts] if run.mix else []
    except MixError:
        return []


def registered_only(scores: dict[str, HeldOutScore], own: list[str]) -> bool:
    """True if a run's mix and scores name the registered families alone (the panel as it has always been)."""
    return all(n in FAMILIES for n in (*own, *scores))


def others_of(scores: dict[str, HeldOutScore], own: list[str]) -> list[str]:
    """The environments `other` means: every registered family outside the mix, or, for a run scored on generated
    environments, every one it was scored on outside its mix."""
    if registered_only(scores, own):
        return [n for n in FAMILIES if n not in own]
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
    """Mean success (0..1) over the families `names`, each weighted alike; None unless every one was scored."""
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
    """The families outside `own` under their mean, `other environments  mean 1%`, as a small table in the words
    the matrix names its columns with (`Family.header`: what is done to how many numbers, over their range):

        add   2   3   4 sub   2   3   4
      0-9   7       0           0   0      (0-9: add 2 numbers 7%, add 4 0%, sub 3 0%, sub 4 0%)
    10-99       0   0       0   0

    With `codes`, by short label, four to a line: `a2x1   7 a4x1   0 ...`. A family never scored shows `-`; the mean
    is over those scored, and says so when some are missing.
    """
    names = [n for n in FAMILIES if n not in own]
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
    """A family's score in three characters, in its colour, or a dim `-` if not scored."""
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
            line.append(" " if j else "").append(f"{FAMILIES[name].short:<5}", "dim").append_text(_score(scores, name))
        lines.append(line)
    return lines


def _words_table(scores: dict[str, HeldOutScore], names: list[str]) -> list[Text]:
    """The families by their matrix columns' words: a column for each operation and count (`add` over 2, 3, 4), a
    row for each range of numbers (`0-9`); a cell is blank where no family outside the mix sits."""
    at = {FAMILIES[n].header: n for n in names}  # (`add 3`, `0-9`) -> family
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
            family(n)  # a stored run's environment of a version no longer generated is left out
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
    families outside the mix 1%. The run's own families come first, then the plate's, then `other` when
    every run scored every family outside its mix (else each further family scored). Runs trained in lockstep
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
        own = own_families(some.run)
        others = others_of(some.run.scores, own)
        if registered_only(some.run.scores, own):
            first = [*own, *(n for n in PLATE if n not in own)]
            parts = [
                _over_seeds(family(n).name_for(codes), [_rate(r.scores, [n]) for r in runs.values()]) for n in first
            ]
        else:  # generated environments: their own pooled, as the panel shows them
            first = own
            parts = [_over_seeds("own", [_rate(r.scores, [n for n in own if n in r.scores]) for r in runs.values()])]
        other = [_rate(r.scores, others) for r in runs.values()]
        if others and None not in other:
            parts.append(_over_seeds("other", other))
        else:  # some run lacks a family outside its mix: each further family scored, as it stands
            rest = (n for n in FAMILIES if n not in first)
            parts += [
                _over_seeds(family(n).name_for(codes), [_rate(r.scores, [n]) for r in runs.values()]) for n in rest
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


class ScorePanel(Vertical):
    """Per-family held-out scores of the current model above the runs table."""

    BORDER_TITLE = "held-out scores"
    TRAINING_NOTE = "training; scores: playing model"  # in the bottom border while a model trains

    training = var(False, init=False)  # a model is being trained: the scores shown are still the playing one's

    class ModelChosen(Message):
        """The user picked a model in the runs table."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.codes = False  # families named by codes, not words (the app's Shift+F5 sets it, then redraws)
        self.model_width = MODEL_WIDTH  # the runs table's title column: wider when the panel is
        self._runs: tuple[list[ModelEntry], str | None] = ([], None)
        self._shown: tuple[ModelEntry | None, str] | None = None  # the model whose scores show, and its note
        self.heading = self.BORDER_TITLE  # the title as shown, in the border: the model whose scores these are

    def on_resize(self) -> None:
        """Give the scores the panel's width, and the runs table's titles the width the score columns leave (never
        under MODEL_WIDTH)."""
        if self._shown is not None:
            self.show_model(*self._shown)
        scores = SEED_WIDTH + sum(width for _, width in SCORE_COLUMNS)
        width = max(MODEL_WIDTH, min(MAX_MODEL_WIDTH, self.content_region.width - scores - 1))  # 1: the scrollbar
        if width != self.model_width:
            self.model_width = width
            self.set_runs(*self._runs)

    def watch_training(self, training: bool) -> None:
        """Say, while a model trains, that the scores shown are the playing model's (the new one's come when done)."""
        self.set_class(training, "training")
        self.border_subtitle = self.TRAINING_NOTE if training else ""

    def compose(self) -> ComposeResult:
        yield Static("", id="family-scores")
        table = DataTable(id="runs", cursor_type="row", zebra_stripes=True, cell_padding=0, header_height=2)
        table.add_column("\nmodel", key="model", width=MODEL_WIDTH)  # longer titles are cut: scores stay in view
        for key, width in (("seed", SEED_WIDTH), *SCORE_COLUMNS):
            table.add_column(column_label(key, width), key=key, width=width)
        yield table
        yield Static("", id="across-seeds")

    def show_model(self, entry: ModelEntry | None, note: str = "") -> None:
        """Show the scores of `entry` (the model now loaded)."""
        self._shown = (entry, note)
        if entry is None:
            self.heading = f"{self.BORDER_TITLE}: no model loaded"
            self.border_title = Content(self.heading)
            self.query_one("#family-scores", Static).update("")
            return
        seed = f", seed {entry.seed}" if entry.seed != "-" else ""
        note = f"  {note}" if note else ""
        self.heading = shown(f"{self.BORDER_TITLE}: {entry.title}{seed}{note}")
        self.border_title = Content(self.heading)  # text, never markup: a title may hold `[b]`
        own = own_families(entry.run)
        if not registered_only(entry.scores, own):  # generated environments: pooled, by dimension
            self.query_one("#family-scores", Static).update(Text("\n").join(pooled_lines(entry.scores, own)))
            return
        lines = []
        codes, room = self.codes, self.room()
        width = max((len(FAMILIES[n].name_for(codes)) for n in own), default=0) + 1
        bar = max(1, min(BAR, room - 1 - width - BAR_TEXT))  # a column left before the border
        for name in own:  # the families it was trained on, each with its bar
            s = entry.scores.get(name)
            label = Text(f"{FAMILIES[name].name_for(codes):<{width}}", style="bold")
            lines.append(label + (score_bar(s, bar) if s else Text("not evaluated", style="dim")))
            if s and s.failures:  # why the rest failed: the procedure, not the arithmetic
                kinds = ", ".join(f"{shown(kind)} {n}" for kind, n in s.failures.items())  # a checkpoint's words
                lines.append(Text(f"    {kinds}", style="dim", no_wrap=True, overflow="ellipsis"))
        lines.append(other_environments(entry.scores, own, codes))
        self.query_one("#family-scores", Static).update(Text("\n").join(lines))

    def room(self) -> int:
        """The columns the scores have: the panel's inside once laid out (80x24's before)."""
        return self.content_region.width or 2 * BAR + BAR_TEXT

    def set_runs(self, entries: list[ModelEntry], current: str | None) -> None:
        """Rebuild the runs table: one row per model, the cursor on the current one (scrolled into view)."""
        self._runs = (entries, current)
        table = self.query_one("#runs", DataTable)  # titles longer than the column show in full above the table
        table.clear()
        table.columns[ColumnKey("model")].width = self.model_width
        for key, width in (("seed", SEED_WIDTH), *SCORE_COLUMNS):  # words, or codes where a person asked for them
            table.columns[ColumnKey(key)].label = Text(column_label(key, width, self.codes))
        for e in entries:
            style = "dim" if e.scores_only else ""  # a stored run with no model to play
            title = Text(fit_title(shown(e.title), self.model_width), style=style)
            table.add_row(title, *run_cells(e, style), key=e.key)
        keys = [e.key for e in entries]
        if current in keys:
            table.move_cursor(row=keys.index(current))
        chosen = next((e for e in entries if e.key == current), None)
        summary = across_seeds(entries, chosen, self.codes) if chosen is not None else Text("")
        line = self.query_one("#across-seeds", Static)
        line.update(summary)
        line.display = bool(summary.plain)  # no empty row taken from the table

    @on(DataTable.RowSelected, "#runs")
    @guarded
    def choose(self, event: DataTable.RowSelected) -> None:
        """Enter or a click on a row switches to that model."""
        self.post_message(self.ModelChosen(event.row_key.value))


def run_cells(entry: ModelEntry, style: str = "") -> list[Text]:
    """A run's seed and SCORE_COLUMNS as cells right-justified to their width (%); `-` where one is not scored."""
    own = own_families(entry.run)
    if not registered_only(entry.scores, own):  # own and other over the environments it was scored on
        own = [n for n in own if n in entry.scores]
    groups = {"own": own, "other": others_of(entry.scores, own)}
    cells = [Text(f"{entry.seed:>{SEED_WIDTH}}", style=style)]
    for key, width in SCORE_COLUMNS:
        rate = mean_rate(entry.scores, groups.get(key, [key]))
        cells.append(Text(f"{'-' if rate is None else f'{100 * rate:.0f}':>{width}}", style=style))
    return cells
