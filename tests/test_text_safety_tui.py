"""Hostile names in the results store, a checkpoint or a typed path reach the app as text: the runs table, the
current model's lines, race lanes, matrix rows and the path prompt show them literally (no blank lane, no dropped
row), no ESC or bidi override reaches the screen, and a figure of such a model is still drawn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors.numpy import load_file, save
from textual import events
from textual.content import Content
from textual.widgets import DataTable, Input, Static
from tui_helpers import fake_app, wait_for

from breadth.core.results.matrix import columns
from breadth.core.storage.header import KEY, read_header, read_metadata, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import FailedEpisode, HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.shown import clip, shown
from breadth.core.world.text.transcript import Role, Segment
from breadth.tui.figure_files import FiguresSaved, save_figures, saved_line
from breadth.tui.screens.matrix_view import LABEL_WIDTH, MatrixView
from breadth.tui.screens.path_prompt import CHECKING, PathPrompt
from breadth.tui.widgets.race import short
from breadth.tui.widgets.score_lines import fit_title
from breadth.tui.widgets.score_panel import ScorePanel

MIX = "[/x]\x1b]0;pwned\x07\x1b[2J[b]mix $\\foo$\u202eevil"  # closes a tag never opened, sets the title, clears
KIND = "[/z]\x1b[5mkind\u2066"  # a failure kind that blinks and isolates
PROMPT = "\x1b]0;t\x07[/t]12+34="  # a failed transcript's prompt, as a store may hold it
ACTING = ("\x1b", "\x07", "\u202e", "\u2066")  # nothing of these may be drawn


def _stored(mix: str, seed: int, base_hash: str, checkpoint: str | None = None) -> StoredRun:
    """A stored run of `mix` whose two-digit score failed in a hostile way, with a hostile failed transcript."""
    settings = FinetuneSettings(seed=seed)
    example = FailedEpisode(KIND, (Segment(Role.PROMPT, PROMPT), Segment(Role.ACTION, "B12+34|")))
    scores = {
        "add_2x2": HeldOutScore("add_2x2", 10, 30, {KIND: 20}, (example,)),
        "add_3x1": HeldOutScore("add_3x1", 0, 30, {"no call": 30}),
    }
    run = RunMeta("finetune", settings, mix, seed, 30, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key(mix, settings, 30, base_hash), run, base_hash, "[/s]\x1b]0;src\x07", checkpoint)


def _store(tmp_path, monkeypatch, *runs) -> None:
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        for run in runs:
            store.add(run)


def _no_escapes(app) -> None:
    """Nothing the terminal would act on, nor a bidi control, is on the screen."""
    svg = app.export_screenshot()
    assert not [c for c in ACTING if c in svg]


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_hostile_stored_runs_show_literally_in_the_runs_table_and_the_current_model(tmp_path, monkeypatch):
    """A stored mix holding ESC, OSC, markup and a bidi override: its row, the score panel's title and the seeds
    line show it written out (`\\x1b`, `[/x]`), and no escape reaches the screen."""
    base_hash = weights_hash(BASE)
    _store(tmp_path, monkeypatch, _stored(MIX, 0, base_hash), _stored(MIX, 1, base_hash))
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 5, timeout=10, what="the stored runs")
        keys = [k for k, e in app.entries.items() if e.origin == "stored"]
        app.post_message(ScorePanel.ModelChosen(keys[0]))
        await wait_for(pilot, lambda: app.current == keys[0], timeout=5, what="the switch")
        await pilot.pause()
        table = app.score_panel.query_one("#runs", DataTable)
        assert [table.get_row(k)[0].plain for k in keys] == [fit_title(shown(MIX), app.score_panel.model_width)] * 2
        assert shown(MIX) in app.score_panel.heading
        assert f"{shown(MIX)} ×2" in _text(app.score_panel.query_one("#across-seeds", Static))
        _no_escapes(app)


async def test_a_loaded_checkpoint_with_hostile_failure_kinds_and_file_name_shows_them_literally(tmp_path):
    """Ctrl+O on a checkpoint named with ESC and markup whose failure kinds hold some: its title and its kinds are
    shown written out, and no escape reaches the screen."""
    shipped = Path(PRESETS["two_digit_70"].shipped)
    meta = read_header(shipped).meta
    meta["scores"]["two_digit"]["failures"] = {KIND: 3}  # the metadata as the shipped file stores it
    path = tmp_path / "\x1b]0;pwned\x07[b]x.safetensors"
    path.write_bytes(save(load_file(shipped), metadata={KEY: json.dumps(meta)}))
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        app.screen.query_one("#path", Input).value = str(path)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current == f"file:{path.resolve()}", timeout=5, what="the load")
        await pilot.pause()
        assert app.entries[app.current].title == shown(path.name[:18])
        assert shown(path.name[:18]) in app.score_panel.heading
        assert f"{shown(KIND)} 3" in _text(app.score_panel.query_one("#environment-scores", Static))
        _no_escapes(app)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_hostile_model_races_in_a_lane_that_shows_its_name_literally(tmp_path, monkeypatch, size):
    """A stored run with a checkpoint and a hostile mix joins the race: its lane (stacked, or a column with the
    name in its border) shows the name written out and waits for a sum; it is never blank."""
    kept = tmp_path / "kept.safetensors"
    shutil.copy(PRESETS["two_digit_70"].shipped, kept)
    _store(tmp_path, monkeypatch, _stored(MIX, 0, weights_hash(BASE), str(kept)))
    app = fake_app()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 4, timeout=10, what="the stored run")
        (key,) = [k for k, e in app.entries.items() if e.origin == "stored"]
        await pilot.press("f4")
        app.post_message(ScorePanel.ModelChosen(key))
        await wait_for(pilot, lambda: key in app.playground.race.lanes, timeout=5, what="the lane")
        await pilot.pause()
        lane = app.playground.race.lanes[key]
        drawn = _text(lane)
        assert "waiting for a sum" in drawn
        if lane.columns:
            assert lane.border_title == Content(shown(MIX)).markup  # the title kept as text, not parsed
        else:
            assert drawn.startswith(short(shown(MIX)))
        _no_escapes(app)


async def test_the_matrix_keeps_a_hostile_row_and_its_failed_transcripts_show_literally(tmp_path, monkeypatch):
    """F10 with a hostile mix stored before a plain one: both rows (the plate's first), the hostile label cut and
    written out, and its cell's failure kinds and failed transcript shown as text; no escape reaches the screen."""
    base_hash = weights_hash(BASE)
    _store(tmp_path, monkeypatch, _stored(MIX, 0, base_hash), _stored("add_2x2=70", 0, base_hash))
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView), timeout=5, what="the view")
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, timeout=10, what="both rows")
        width = app.screen.widths[0]
        assert width >= LABEL_WIDTH and len(shown(MIX)) > width  # the hostile name is cut, written out
        label = clip(shown(MIX), width)
        assert label.endswith("…") and len(label) <= width
        assert [row.label.plain.strip() for row in table.rows.values()] == ["two-digit 70", label]  # the plate's first
        table.move_cursor(row=1, column=columns().index("add_2x2"))
        await pilot.pause()
        detail = _text(app.screen.query_one("#matrix-detail", Static))
        assert shown(MIX) in detail and f"{shown(KIND)} 20" in detail
        assert f"{shown(PROMPT)}B12+34|  {shown(KIND)}" in detail
        _no_escapes(app)


async def test_a_pasted_path_holding_escapes_shows_them_written_out_and_is_refused_in_one_line(tmp_path):
    """Ctrl+O, then a paste of a path holding ESC, BEL and a bidi override: the box shows it written out
    (`\\x1b`), and the refusal quotes it so; nothing of it acts on the screen."""
    pasted = f"{tmp_path}/\x1b]0;pwned\x07\u202eno.safetensors"
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        prompt = app.screen
        box = prompt.query_one("#path", Input)
        box.post_message(events.Paste(pasted))
        await wait_for(pilot, lambda: box.value, timeout=5, what="the paste")
        assert box.value == shown(pasted)
        _no_escapes(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: prompt.message != CHECKING, timeout=5, what="the check")
        assert "\\x1b]0;pwned\\x07\\u202eno" in prompt.message and "\n" not in prompt.message
        _no_escapes(app)


async def test_a_refusal_quoting_escapes_shows_them_written_out(tmp_path):
    """A refusal whose message holds the ESC and BEL of a path set in the box: the line under it writes them out."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        prompt = app.screen
        prompt.query_one("#path", Input).value = f"{tmp_path}/\x1b]0;pwned\x07.safetensors"
        await pilot.press("enter")
        await wait_for(pilot, lambda: prompt.message != CHECKING, timeout=5, what="the check")
        assert "\x1b" not in prompt.message and "\\x1b]0;pwned\\x07.safetensors" in prompt.message


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
def test_figures_of_a_hostile_model_are_drawn_and_said_written_out(tmp_path):
    """F12's worker on a model with a hostile mix and name, into a folder named with ESC: the slide is drawn
    (mathtext never parsed) and the line that says where names the folder written out."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"></svg>'
    run = read_metadata(PRESETS["two_digit_70"].shipped)
    folder = tmp_path / "\x1b]0;pwned\x07"
    saved = save_figures(svg, RunMeta("finetune", run.settings, MIX, 0, 30, run.scores), MIX, folder, "stamp")
    assert isinstance(saved, FiguresSaved)
    assert sorted(p.name for p in saved.written if p.name.startswith("scores")) == [
        "scores-stamp.png",
        "scores-stamp.svg",
    ]
    line = saved_line(saved)
    assert "\x1b" not in line and shown(folder) in line


async def test_notifications_status_lines_and_sum_messages_show_hostile_words_as_text():
    """A notification, the train panel's status and error lines and the line under the sum box write out escapes
    and never read markup (a Textual `[$accent]` variable included) in what they are given."""
    from breadth.tui.widgets.playground import Playground
    from breadth.tui.widgets.train_panel import TrainPanel

    hostile = "[$accent]x[/] \x1b]0;t\x07 [b]y"
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.notify(hostile)
        panel = app.query_one(TrainPanel)
        panel.show_error(hostile)
        assert panel._border_subtitle.plain == shown(hostile)  # what is drawn (the getter gives markup)
        panel.show(hostile)
        assert panel._border_subtitle.plain == shown(hostile)  # what is drawn (the getter gives markup)
        app.query_one(Playground).say(hostile, error=True)
        await pilot.pause()
        assert shown(hostile) in [n.message for n in app._notifications]
        _no_escapes(app)
