"""The score panel: held-out success per environment for the loaded model, and the table of every run.

A model is scored on every environment of the grid; the panel's title names the model. The environments it was trained
on (its mix) get a bar with a 95% interval, because 30 held-out sums are noisy; the other environments, those outside
its mix, are summarised in a small table under their mean, named as the matrix names its columns (`add 3` over `0-9`),
so the story reads at a glance: trained 100%, elsewhere near 0%. Environments are named in words, by their codes where
a person asked (Shift+F5). The runs table keeps to columns that fit 80x24: the plate's two environments, then `own`
(mean over the run's mix) and `other` (mean over every environment outside it); selecting a row switches to that
model. When the current model's mix has been run on several seeds with the same settings (here or in a sweep, read
from the results store), a line gives means and 95% intervals over those seeds. A run scored on generated environments
(a breadth curve's: up to a dozen, ids of up to 15 characters) shows them pooled instead: one bar over its own, then
the others' mean and their means by each dimension they differ on (`core.results.dimensions`); `own` and `other` are
over the environments it was scored on.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import name_for
from breadth.core.world.text.shown import shown
from breadth.tui.catalog import ModelEntry
from breadth.tui.guard import guarded
from breadth.tui.widgets.score_lines import (
    BAR,
    BAR_TEXT,
    MAX_MODEL_WIDTH,
    MODEL_WIDTH,
    SCORE_COLUMNS,
    SEED_WIDTH,
    across_seeds,
    column_label,
    fit_title,
    other_environments,
    own_environments,
    pooled_lines,
    registered_only,
    run_cells,
    score_bar,
)


class ScorePanel(Vertical):
    """Per-environment held-out scores of the current model above the runs table."""

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
        self.codes = False  # environments named by codes, not words (the app's Shift+F5 sets it, then redraws)
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
        yield Static("", id="environment-scores")
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
            self.query_one("#environment-scores", Static).update("")
            return
        seed = f", seed {entry.seed}" if entry.seed != "-" else ""
        note = f"  {note}" if note else ""
        self.heading = shown(f"{self.BORDER_TITLE}: {entry.title}{seed}{note}")
        self.border_title = Content(self.heading)  # text, never markup: a title may hold `[b]`
        own = own_environments(entry.run)
        if not registered_only(entry.scores, own):  # generated environments: pooled, by dimension
            self.query_one("#environment-scores", Static).update(Text("\n").join(pooled_lines(entry.scores, own)))
            return
        lines = []
        codes, room = self.codes, self.room()
        width = max((len(name_for(REGISTERED[n], codes)) for n in own), default=0) + 1
        bar = max(1, min(BAR, room - 1 - width - BAR_TEXT))  # a column left before the border
        for name in own:  # the environments it was trained on, each with its bar
            s = entry.scores.get(name)
            label = Text(f"{name_for(REGISTERED[name], codes):<{width}}", style="bold")
            lines.append(label + (score_bar(s, bar) if s else Text("not evaluated", style="dim")))
            if s and s.failures:  # why the rest failed: the procedure, not the arithmetic
                kinds = ", ".join(f"{shown(kind)} {n}" for kind, n in s.failures.items())  # a checkpoint's words
                lines.append(Text(f"    {kinds}", style="dim", no_wrap=True, overflow="ellipsis"))
        lines.append(other_environments(entry.scores, own, codes))
        self.query_one("#environment-scores", Static).update(Text("\n").join(lines))

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
