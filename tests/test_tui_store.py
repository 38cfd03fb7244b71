"""The app reads the results store: runs of earlier sessions and sweeps are in the table after a restart."""

from __future__ import annotations

import shutil

from tui_helpers import fake_app, type_text, wait_for

from breadth.core.storage.header import read_metadata, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _sweep_run(seed: int, solved: int, base_hash: str, **settings_given) -> StoredRun:
    """A stored sweep run (no checkpoint) of the two-digit-only mix."""
    settings = FinetuneSettings(seed=seed, **settings_given)
    scores = {"add_2x2": HeldOutScore("add_2x2", solved, 200), "add_3x1": HeldOutScore("add_3x1", 0, 200)}
    run = RunMeta("finetune", settings, "add_2x2=70", seed, 200, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key("add_2x2=70", settings, 200, base_hash), run, base_hash, "sweep")


async def test_stored_runs_join_the_table_and_their_seeds_summarise(tmp_path, monkeypatch):
    """Stored runs show after the shipped ones; one with a file plays, a sweep's shows scores and a seeds line."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    kept = tmp_path / "kept.safetensors"
    shutil.copy(PRESETS["three_digit_70"].shipped, kept)
    base_hash = weights_hash(BASE)
    with Store() as store:
        for seed, solved in ((0, 180), (1, 190), (2, 170)):
            store.add(_sweep_run(seed, solved, base_hash))
        run = read_metadata(kept)
        store.add(StoredRun(run_key(run.mix, run.settings, 30, base_hash), run, base_hash, "app", str(kept)))
        other = _sweep_run(5, 1, "another-base")
        store.add(other)  # from another base: not shown
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 7, what="the stored runs")
        stored = [e for e in app.entries.values() if e.origin == "stored"]
        assert [e.scores_only for e in stored] == [True, True, True, False]
        assert list(app.entries)[:3] == ["shipped:two_digit_70", "shipped:three_digit_70", "shipped:mix_35_35"]
        app.catalogue.switch_to(stored[0].key)
        await pilot.pause()
        line = str(app.score_panel.query_one("#across-seeds").render())
        assert "two-digit 70 ×3: two-digit 90 [78-100] 3 singles 0 [0-0]" in line
        app.playground.pace = 0
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await pilot.pause()
        shown = str(app.playground.query_one("#sum-message").render())
        assert "kept no model" in shown and not app.playground.probes
        app.catalogue.switch_to(stored[3].key)  # a stored run whose checkpoint is on disk plays
        await type_text(pilot, "3+4+5")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the probe")
        (view,) = app.playground.probes.values()
        assert view.state.problem.operands == (3, 4, 5) and view.state.verdict is not None


async def test_a_store_that_cannot_be_read_is_one_warning_and_the_app_runs_on(tmp_path, monkeypatch):
    """A results store that is not SQLite gives one warning; the shipped models are there and play."""
    bad = tmp_path / "not-a-store.sqlite"
    bad.write_text("hello\n")
    monkeypatch.setenv("BREADTH_STORE", str(bad))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any("results store" in n.message for n in app._notifications), what="a warning")
        assert len(app.entries) == 3 and bad.read_text() == "hello\n"


async def test_stored_runs_of_other_settings_are_told_apart_and_scores_stay_in_view_at_80x24(tmp_path, monkeypatch):
    """A stored run with non-default settings names them in its title (`two-digit 70 lr 0.001 drop 0.1`); the runs table
    cuts long titles so that every score column (seed, a2x2, a3x1, own, other) stays on screen at 80x24."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        store.add(_sweep_run(0, 200, weights_hash(BASE), lr=1e-3, dropout=0.1))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 4, what="the stored run")
        (entry,) = [e for e in app.entries.values() if e.origin == "stored"]
        assert entry.title == "two-digit 70 lr 0.001 drop 0.1"
        table = app.score_panel.query_one("#runs")
        keys = [c.key.value for c in table.ordered_columns]
        assert keys == ["model", "seed", "add_2x2", "add_3x1", "own", "other"]
        widths = [c.get_render_width(table) for c in table.ordered_columns]
        assert sum(widths) <= table.scrollable_content_region.width  # no column scrolled out of view
