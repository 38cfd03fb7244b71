"""Runs scored on many generated environments (a breadth curve's) in the app at 80x24: the matrix view pools them by
dimension, and the score panel shows them pooled instead of failing on names it does not register."""

from __future__ import annotations

from textual.widgets import DataTable, Static
from tui_helpers import fake_app, wait_for

from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.tui.screens.matrix_view import MatrixView

POOL = (
    "2a1", "1a2", "2s1", "2a1_postfix", "1a2_postfix", "2s1_postfix", "2s2_postfix", "1a1_postfix",
    "1a1a1_postfix", "1a1a1a1_postfix", "2s1a1", "2a2_postfix",
)  # fmt: skip


def _curve_run(trained: str, seed: int, base_hash: str) -> StoredRun:
    """A curve's run trained on `trained`: it solves all of it, 40 of 100 sums of 2a1 and none of the rest of POOL."""
    settings = FinetuneSettings(seed=seed)
    solved = {n: 100 if n == trained else 40 if n == "2a1" else 0 for n in POOL}
    scores = {n: HeldOutScore(n, k, 100, {"no call": 100 - k} if k < 100 else {}) for n, k in solved.items()}
    run = RunMeta("finetune", settings, f"{trained}=30", seed, 100, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key(run.mix, settings, 100, base_hash, POOL), run, base_hash, "curve")


def _store(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base_hash = weights_hash(BASE)
    with Store() as store:
        for trained in ("2s1", "1a1a1a1_postfix"):
            for seed in (0, 1):
                store.add(_curve_run(trained, seed, base_hash))


def _text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_the_matrix_view_pools_many_environments_by_dimension_at_80x24(tmp_path, monkeypatch):
    """Two curve mixes scored on twelve generated environments: at 80x24 the columns are own, held out and the
    held-out means by numbers, op and form (not 22 cut columns), the table fits the screen, the key line says what
    the columns pool, and the held-out cell's detail names its environments with their rates."""
    _store(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        table = None
        await wait_for(
            pilot, lambda: isinstance(app.screen, MatrixView) and app.screen.query_one(DataTable).row_count == 2
        )
        table = app.screen.query_one(DataTable)
        await pilot.pause()
        headers = [" ".join(str(c.label).split()) for c in table.ordered_columns]
        assert headers[:3] == ["own", "held out all", "numbers 2"] and "postfix" in headers and len(headers) < 12
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert "own trained, rest held out" in _text(app, "#matrix-key")
        first = [cell.plain for cell in table.get_row_at(0)]
        assert first[0] == "*100" and first[1] == "4"  # own; held out: 2a1's 40 and ten zeros, 11 environments
        await pilot.press("right")
        await pilot.pause()
        detail = _text(app, "#matrix-detail")
        assert "held out: 4% over 11 environments, 2 seeds (80/2,200)" in detail and "2a1 40" in detail
        assert "failures (all seeds): no call 2120" in " ".join(detail.split())


async def test_the_score_panel_pools_a_run_scored_on_generated_environments(tmp_path, monkeypatch):
    """A stored curve run trained on 2s1 shows one bar over its own environment and the others' mean and means by
    dimension (it failed with KeyError '2s1' and kept showing the previous model's scores); the runs table's own and
    other are over the environments it was scored on."""
    _store(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 7, what="the stored runs")
        key = next(k for k, e in app.entries.items() if e.origin == "stored" and e.run.mix == "2s1=30")
        app.catalogue.switch_to(key)
        await pilot.pause()
        shown = str(app.score_panel.query_one("#environment-scores", Static).render())
        lines = shown.splitlines()
        assert lines[0].startswith("own ") and "100/100 100%" in lines[0]
        assert lines[1].strip() == "1 environment" and lines[2] == "other environments  mean 4% of 11"
        assert "op + 5% · - 0% · -+ 0%" in shown and "form infix 13% · postfix 0%" in shown
        row = [cell.plain.strip() for cell in app.score_panel.query_one("#runs", DataTable).get_row(key)]
        assert row[-2:] == ["100", "4"]
