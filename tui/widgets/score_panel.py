"""The score panel: held-out success per family for the loaded model, and the table of every run.

Bars carry a 95% interval, because 30 held-out sums are noisy; the runs table builds up the plate's
figure as models are trained (shipped ones first), and selecting a row switches to that model. When
the current model's mix has been run on several seeds with the same settings (here or in a sweep, read
from the results store), a line gives each family's mean and 95% interval over those seeds.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from core.world.families import FAMILIES
from core.world.records import HeldOutScore
from core.world.stats import mean_interval, wilson

from ..catalog import ModelEntry
from ..guard import guarded

BAR = 10  # bar width in cells

MODEL_WIDTH = 15  # characters of a model's title in the runs table (the header line shows all of it)


def score_bar(score: HeldOutScore) -> Text:
    """`█████████░ 27/30  90% 74-97` coloured by how much is solved, then its 95% interval."""
    rate = score.rate
    full = round(rate * BAR)
    colour = "green" if rate >= 0.85 else "yellow" if rate >= 0.3 else "red"
    lo, hi = wilson(score.solved, score.total)
    return Text.assemble(
        ("█" * full, colour),
        ("░" * (BAR - full), "grey37"),
        f" {score.solved:>2}/{score.total:<2} {100 * rate:3.0f}% ",
        (f"{100 * lo:.0f}-{100 * hi:.0f}", "dim"),
    )


def across_seeds(entries: list[ModelEntry], current: ModelEntry | None = None) -> Text:
    """Mean and 95% interval over seeds (%) per family, for each mix and settings run on two or more seeds.

    `2d 35+3d 35 ×10: 2d 85 [78-93] 3d 91 [82-100]` reads: ten seeds of that mix with the same settings,
    two-digit 85% (95% t interval over seeds 78-93), three-digit 91%. With `current`, only its group.
    """
    groups: dict[tuple, dict[int, ModelEntry]] = {}
    for e in entries:
        run = e.run
        if run.scores and run.seed is not None and run.settings is not None:
            key = (run.mix, replace(run.settings, seed=0), run.held_out)  # the same settings but the seed
            groups.setdefault(key, {})[run.seed] = e  # one run per seed
    if current is not None:
        run = current.run
        key = (run.mix, replace(run.settings, seed=0), run.held_out) if run.settings is not None else None
        groups = {key: groups[key]} if key in groups else {}
    lines = []
    for runs in groups.values():
        if len(runs) < 2:
            continue
        some = next(iter(runs.values()))
        parts = []
        for family in FAMILIES.values():
            rates = [
                100 * r.scores[family.name].rate
                for r in runs.values()
                if family.name in r.scores and r.scores[family.name].total
            ]
            if rates:
                m, lo, hi = mean_interval(rates)
                parts.append(f"{family.short} {m:.0f} [{max(0, lo):.0f}-{min(100, hi):.0f}]")
        lines.append(Text.assemble((f"{some.mix_label} ×{len(runs)}: ", "bold"), " ".join(parts)))
    return Text("\n").join(lines)


class ScorePanel(Vertical):
    """Per-family held-out scores of the current model above the runs table."""

    BORDER_TITLE = "held-out scores"

    class ModelChosen(Message):
        """The user picked a model in the runs table."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def compose(self) -> ComposeResult:
        yield Static("", id="current-model")
        yield Static("", id="family-scores")
        table = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        table.add_column("model", key="model", width=MODEL_WIDTH)  # longer titles are cut: scores stay in view
        table.add_column("seed", key="seed")
        for family in FAMILIES.values():
            table.add_column(family.short, key=family.name)
        yield table
        yield Static("", id="across-seeds")

    def show_model(self, entry: ModelEntry | None, note: str = "") -> None:
        """Show the scores of `entry` (the model now loaded)."""
        if entry is None:
            self.query_one("#current-model", Static).update(Text("no model loaded", style="dim"))
            self.query_one("#family-scores", Static).update("")
            return
        seed = f", seed {entry.seed}" if entry.seed != "-" else ""
        self.query_one("#current-model", Static).update(
            Text.assemble(("▶ ", "bold"), (entry.title, "bold"), seed, (f"  {note}" if note else "", "dim"))
        )
        lines = []
        for family in FAMILIES.values():
            s = entry.scores.get(family.name)
            label = Text(f"{family.short:<4}", style="bold")
            lines.append(label + (score_bar(s) if s else Text("not evaluated", style="dim")))
            if s and s.failures:  # why the rest failed: the procedure, not the arithmetic
                kinds = ", ".join(f"{kind} {n}" for kind, n in s.failures.items())
                lines.append(Text(f"    {kinds}", style="dim", no_wrap=True, overflow="ellipsis"))
        self.query_one("#family-scores", Static).update(Text("\n").join(lines))

    def set_runs(self, entries: list[ModelEntry], current: str | None) -> None:
        """Rebuild the runs table: one row per model, the cursor on the current one (scrolled into view)."""
        table = self.query_one("#runs", DataTable)  # titles longer than MODEL_WIDTH show in full above the table
        table.clear()
        for e in entries:
            style = "dim" if e.scores_only else ""  # a stored run with no model to play
            cells = [e.title, e.seed, *(_percent(e.scores.get(name)) for name in FAMILIES)]
            table.add_row(*(Text(c, style=style) for c in cells), key=e.key)
        keys = [e.key for e in entries]
        if current in keys:
            table.move_cursor(row=keys.index(current))
        chosen = next((e for e in entries if e.key == current), None)
        summary = across_seeds(entries, chosen) if chosen is not None else Text("")
        line = self.query_one("#across-seeds", Static)
        line.update(summary)
        line.display = bool(summary.plain)  # no empty row taken from the table

    @on(DataTable.RowSelected, "#runs")
    @guarded
    def choose(self, event: DataTable.RowSelected) -> None:
        """Enter or a click on a row switches to that model."""
        self.post_message(self.ModelChosen(event.row_key.value))


def _percent(score: HeldOutScore | None) -> str:
    return score.percent() if score else "-"
