"""The transfer matrix view (F10): stored runs by mix and family, filling in as runs finish."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import DataTable, Static
from tui_helpers import fake_app, wait_for

from breadth.core.results.matrix import columns
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE, SHIPPED_RESULTS
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import header
from breadth.core.world.episodes.scores import FailedEpisode, HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.transcript import Role, Segment
from breadth.tui.screens import matrix_view
from breadth.tui.screens.matrix_view import MatrixView, rows_of


def _run(mix: str, seed: int, solved: dict[str, int], base_hash: str) -> StoredRun:
    """A stored sweep run of `mix`: every family scored on 100 sums, `solved` given, the rest 0, failures 'no call'."""
    settings = FinetuneSettings(seed=seed)
    scores = {}
    for name in REGISTERED:
        n = solved.get(name, 0)
        scores[name] = HeldOutScore(name, n, 100, {"no call": 100 - n} if n < 100 else {})
    run = RunMeta("finetune", settings, mix, seed, 100, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key(mix, settings, 100, base_hash), run, base_hash, "sweep")


def _text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def _open_cell(pilot, family: str) -> None:
    """Open the matrix view, wait for its one row, and move to `family`'s column."""
    app = pilot.app
    await pilot.press("f10")
    await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and _table(app).row_count == 1, what="a row")
    for _ in range(columns().index(family)):
        await pilot.press("right")
    await pilot.pause()


def _table(app) -> DataTable:
    return app.screen.query_one(DataTable)


async def test_the_matrix_shows_a_row_per_mix_with_trained_cells_marked_at_80x24(tmp_path, monkeypatch):
    """F10 opens the view: one row per stored mix, `*` on trained families, every family in grouped order."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base_hash = weights_hash(BASE)
    with Store() as store:
        for seed, rate in ((0, 90), (1, 94)):
            store.add(_run("add_2x2=70", seed, {"add_2x2": rate}, base_hash))
        store.add(_run("add_3x1=35,sub_2x2=35", 0, {"add_3x1": 100, "sub_2x2": 80, "add_2x2": 5}, base_hash))
        store.add(_run("sub_4x1=70", 0, {"sub_4x1": 100}, "another-base"))  # not from the shipped base: not shown
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and _table(app).row_count == 2, what="rows")
        table = _table(app)
        headers = [str(c.label).split("\n") for c in table.columns.values()]
        assert [(top.strip(), bottom.strip()) for top, bottom in headers] == [header(REGISTERED[n]) for n in columns()]
        assert headers[0][0].strip() == "add 2" and headers[1][0].strip() == "add 2"  # 3+4, then 23+45
        names = columns()
        first = [str(v) for v in table.get_row_at(0)]
        assert first[names.index("add_2x2")] == "*92" and first[names.index("add_3x1")] == "0"
        second = [str(v) for v in table.get_row_at(1)]
        assert second[names.index("add_3x1")] == "*100" and second[names.index("sub_2x2")] == "*80"
        assert second[names.index("add_2x2")] == "5"
        assert "2 mixes" in _text(app, "#matrix-status")
        assert table.virtual_size.width <= table.scrollable_content_region.width  # all ten columns fit at 80
        await pilot.press("escape")
        assert not isinstance(app.screen, MatrixView)


async def test_moving_to_a_cell_shows_its_seeds_and_failure_kinds(tmp_path, monkeypatch):
    """The cursor on a cell shows the mix, the family, per-seed rates and the failures summed over seeds."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base_hash = weights_hash(BASE)
    with Store() as store:
        for seed, rate in ((0, 90), (1, 94)):
            store.add(_run("add_2x2=70", seed, {"add_2x2": rate}, base_hash))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_cell(pilot, "add_2x2")
        detail = _text(app, "#matrix-detail")
        assert "two-digit 70" in detail and "two-digit sums 23+45, trained on" in detail
        assert "s0 90  s1 94" in detail and "no call 16" in detail
        assert "no failed transcripts" in detail


async def test_a_run_stored_while_the_view_is_open_appears(tmp_path, monkeypatch):
    """The view re-reads the store on a timer: a run finished elsewhere becomes a row."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setattr(matrix_view, "REFRESH_SECONDS", 0.2)
    base_hash = weights_hash(BASE)
    with Store() as store:
        store.add(_run("add_2x2=70", 0, {"add_2x2": 90}, base_hash))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and _table(app).row_count == 1, what="a row")
        with Store() as store:
            store.add(_run("add_3x1=70", 0, {"add_3x1": 97}, base_hash))
        await wait_for(pilot, lambda: _table(app).row_count == 2, timeout=10, what="the new run's row")
        assert str(_table(app).get_row_at(1)[columns().index("add_3x1")]) == "*97"


async def test_a_store_that_cannot_be_read_is_one_line_and_the_app_runs_on(tmp_path, monkeypatch):
    """A results store that is not SQLite: the view says so in one line, Escape closes it, the app goes on."""
    bad = tmp_path / "not-a-store.sqlite"
    bad.write_text("hello\n")
    monkeypatch.setenv("BREADTH_STORE", str(bad))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, MatrixView) and "not read" in _text(app, "#matrix-status"),
            what="the error line",
        )
        assert "\n" not in _text(app, "#matrix-status") and _table(app).row_count == 0
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, MatrixView)
        assert bad.read_text() == "hello\n"


async def test_a_cell_shows_a_few_failed_transcripts_taking_seeds_in_turn(tmp_path, monkeypatch):
    """Runs that kept failed episodes: the cell's detail shows them, seeds in turn, each with its failure kind."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base_hash = weights_hash(BASE)
    p, a, e = Role.PROMPT, Role.ACTION, Role.ENVIRONMENT
    kept = {
        0: FailedEpisode("answer differs from tool", ((p, "45+91="), (a, "B45+91|"), (e, "136|"), (a, "106|"))),
        1: FailedEpisode("wrong number of calls", ((p, "12+34="), (a, "B1+3|"), (e, "4|"), (a, "B2+4|"), (e, "6|"))),
    }
    with Store() as store:
        for seed, example in kept.items():
            example = replace(example, segments=tuple(Segment(role, text) for role, text in example.segments))
            stored = _run("add_2x2=70", seed, {"add_2x2": 99}, base_hash)
            score = replace(stored.run.scores["add_2x2"], examples=(example,))
            store.add(replace(stored, run=replace(stored.run, scores={**stored.run.scores, "add_2x2": score})))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_cell(pilot, "add_2x2")
        lines = _text(app, "#matrix-detail").splitlines()
        assert lines[-2:] == [
            "s0 45+91=B45+91|136|106|  answer differs from tool",
            "s1 12+34=B1+3|4|B2+4|6|  wrong number of calls",
        ]


async def test_a_fresh_home_shows_the_runs_shipped_with_breadth_and_writes_nothing_beside_them(tmp_path, monkeypatch):
    """With no run of the user's own (`--fresh`, a talk), the matrix shows the shipped results (the README's runs),
    says so, and opens them immutably: no -wal or -shm appears beside the shipped file; the user's own run, once
    stored, replaces them, and a read begun before it (cancelled, but its thread still posts) does not bring the
    shipped rows back."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setattr(matrix_view, "REFRESH_SECONDS", 0.2)
    beside = {p.name for p in SHIPPED_RESULTS.parent.iterdir()}
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and _table(app).row_count > 20, what="rows")
        assert "shipped with breadth" in _text(app, "#matrix-status")
        assert str(_table(app).get_row_at(0)[columns().index("add_2x2")]).startswith("*")  # the plate's row first
        with Store() as store:
            store.add(_run("add_2x2=70", 0, {"add_2x2": 90}, weights_hash(BASE)))
        await wait_for(pilot, lambda: _table(app).row_count == 1, timeout=10, what="the user's own run")
        assert "shipped" not in _text(app, "#matrix-status")
        view = app.screen
        with Store(SHIPPED_RESULTS, immutable=True) as shipped:
            stale = rows_of(shipped.runs(base_hash=weights_hash(BASE)))
        view.post_message(MatrixView.Read(stale, shipped=True, read=view.shown - 1))  # as a late, older read posts
        await pilot.pause(0.1)
        assert _table(app).row_count == 1 and "shipped" not in _text(app, "#matrix-status")
    assert {p.name for p in SHIPPED_RESULTS.parent.iterdir()} == beside
