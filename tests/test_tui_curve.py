"""The breadth curve view (F11): the store's newest curve drawn from its plan and runs, filling in as runs are
stored, its rows with intervals and the ceiling at 80x24, other curves a key away, the shipped curve on a fresh
home, a store's text shown as text, and plans it cannot read passed over for the newest it can."""

from __future__ import annotations

import io

from rich.color import Color
from rich.console import Console
from textual.app import App
from textual.widgets import Static
from tui_helpers import fake_app, wait_for

from breadth.core.results.breadth_curve import CEILING, CurvePlan, StoredCurve
from breadth.core.results.curve_points import CurvePoint
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.tui.screens import curve_store, curve_view
from breadth.tui.screens.curve_view import CurvePlot, CurveView

POOL = tuple(f.name for f in where(form="infix", op="add", operands="3"))  # eight layouts of three numbers


def _plan(**changes) -> CurvePlan:
    fields = {"pool": POOL, "held": 2, "splits": 2, "sizes": (1, 2, 4), "demos": 30, "seeds": (0,)}
    return CurvePlan(**(fields | changes), settings=FinetuneSettings())


def _fill(store: Store, curve: StoredCurve, rate: dict[int, float], limit: int | None = None) -> int:
    """Store the curve's plan and the runs of its jobs (at most `limit`): training environments solved 27/30, held
    out at `rate[N]` of 30 (the ceiling at rate[CEILING]). Returns how many runs it stored."""
    store.add_curve(curve.name, curve.to_dict())
    jobs = curve.plan.jobs(curve.base_hash)[:limit]
    for job, split, n in jobs:
        held, _ = curve.plan.split(split)
        trained = held if n == CEILING else [name for name, _ in job.cell.mix.counts]
        scores = {name: HeldOutScore(name, 27, 30, {"no call": 3}) for name in trained}
        for name in held:
            solved = round(30 * rate[n])
            scores[name] = HeldOutScore(name, solved, 30, {"no call": 30 - solved} if solved < 30 else {})
        settings = FinetuneSettings(steps=job.cell.settings.steps, seed=job.seed)
        run = RunMeta("finetune", settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0, 0.1)
        store.add(StoredRun(job.key, run, curve.base_hash, "curve"))
    return len(jobs)


def _text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def _rows(app) -> list[str]:
    """The rows under the chart as the screen shows them (a table, rendered as text), header first."""
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#curve-rows", Static).content)
    return [line for line in console.export_text().splitlines() if line.strip()]


async def test_f11_draws_the_stores_curve_with_its_rows_and_ceiling_at_80x24(tmp_path, monkeypatch):
    """F11 opens the view: the status names the pool in words (`3 numbers, add`; Shift+F5: `operands=3 op=add`, and
    again the words) and the runs stored, a row per N and the ceiling with the held-out % the runs hold, the plot has
    a training and a held-out line; Escape closes it."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    curve = StoredCurve(_plan(), "operands=3 op=add", weights_hash(BASE))
    with Store() as store:
        total = _fill(store, curve, {1: 0.0, 2: 0.1, 4: 0.5, CEILING: 0.9})
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: isinstance(app.screen, CurveView) and "runs" in _text(app, "#curve-status"))
        status = _text(app, "#curve-status")
        assert "3 numbers, add ·" in status and f"{total}/{total} runs" in status and "shipped" not in status
        await pilot.press("shift+f5")  # the pool as it was chosen, in codes
        await pilot.pause()
        assert _text(app, "#curve-status").startswith("operands=3 op=add ·")
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _text(app, "#curve-status") == status
        rows = _rows(app)
        assert [r.split()[0] for r in rows[1:]] == ["1", "2", "4", "ceiling"]
        assert rows[3].split()[4] == "50" and rows[4].split()[4] == "90"  # held out % at N=4 and the ceiling
        plot = app.screen.query_one(CurvePlot)
        assert [p.n for p in plot.found] == [1, 2, 4, CEILING]
        assert app.screen.query_one("#curve-rows").region.bottom <= 23  # the rows are on screen above the footer
        await pilot.press("escape")
        assert not isinstance(app.screen, CurveView)


async def test_the_chart_names_its_axis_and_ceiling_and_the_rows_name_their_terms(tmp_path, monkeypatch):
    """The chart names N under its axis and writes the ceiling's name on its dotted line, in a colour of its own (grey
    and unnamed, it read as a grid line), its value on the axis at its row; the rows' last column is the share of pairs
    over half their ceiling, named so (not "transfer", which beside "held out" read as a contradiction); a line under
    the rows says what the brackets, pairs and the gap are (N is named under the chart)."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        _fill(store, StoredCurve(_plan(), "operands=3", weights_hash(BASE)), {1: 0.0, 2: 0.1, 4: 0.5, CEILING: 0.6})
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: isinstance(app.screen, CurveView) and "runs" in _text(app, "#curve-status"))
        await pilot.pause()
        chart = app.screen.query_one(CurvePlot).render()
        assert "N: kinds of sums trained on" in chart.plain
        label = chart.plain.index("60%┤ceiling ") + len("60%┤")  # its value the axis's label of its row
        console, magenta = Console(file=io.StringIO()), Color.parse(curve_view.CEILING_COLOUR).number
        frame = {chart.get_style_at_offset(console, i).color for i, ch in enumerate(chart.plain) if ch in "│─┤"}
        assert frame and all(colour.number != magenta for colour in frame)  # not the colour of the chart's lines
        dots = [i for i, ch in enumerate(chart.plain) if ch == "·"]
        assert len(dots) > 10
        assert all(chart.get_style_at_offset(console, i).color.number == magenta for i in [label, *dots])
        assert "x: N" not in _text(app, "#curve-key")
        header = _rows(app)[0]
        assert header.rstrip().endswith("pairs over ½ ceiling") and "transfer" not in header
        terms = _text(app, "#curve-terms")
        assert app.screen.query_one("#curve-terms").display and "[ ]: 95% over splits" in terms
        assert "pairs: splits x seeds" in terms and "gap: training minus held out" in terms
        assert len(terms.strip()) <= app.screen.query_one("#curve-terms").content_region.width  # whole, not cut
        assert app.screen.query_one("#curve-terms").region.bottom <= 23  # on screen, above the footer


async def test_runs_stored_while_the_view_is_open_fill_the_curve(tmp_path, monkeypatch):
    """The view re-reads the store on a timer: as a curve's runs finish elsewhere, the count and the rows grow."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setattr(curve_view, "REFRESH_SECONDS", 0.2)
    curve = StoredCurve(_plan(), "operands=3", weights_hash(BASE))
    rates = {1: 0.0, 2: 0.2, 4: 0.4, CEILING: 0.8}
    with Store() as store:
        _fill(store, curve, rates, limit=1)  # seed 0, split 0, N=1 only
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: isinstance(app.screen, CurveView) and "1/8 runs" in _text(app, "#curve-status"))
        assert [r.split()[0] for r in _rows(app)[1:]] == ["1"]
        with Store() as store:
            _fill(store, curve, rates)
        await wait_for(pilot, lambda: "8/8 runs" in _text(app, "#curve-status"), timeout=10, what="every run")
        await wait_for(pilot, lambda: any("ceiling" in row for row in _rows(app)), timeout=10, what="the ceiling row")


def _two_curves(tmp_path, monkeypatch) -> None:
    """The user's store holds two curves: `older pool`, then `newer pool`."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base = weights_hash(BASE)
    with Store() as store:
        _fill(store, StoredCurve(_plan(), "older pool", base), {1: 0, 2: 0, 4: 0, CEILING: 0.5})
        store.db.execute("UPDATE curves SET created = 1")
        _fill(store, StoredCurve(_plan(held=3), "newer pool", base), {1: 0, 2: 0, 4: 0, CEILING: 0.5})


async def test_brackets_step_through_the_stores_curves(tmp_path, monkeypatch):
    """Two curves in the store: the newest shows first, `[` the older one, `]` back."""
    _two_curves(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "curve 1 of 2: newer pool" in _text(app, "#curve-status"), what="the newest")
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: "curve 2 of 2: older pool" in _text(app, "#curve-status"), what="the older")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: "curve 1 of 2: newer pool" in _text(app, "#curve-status"), what="back")


async def test_a_curve_asked_for_by_its_pools_words_shows_then_steps_as_before(tmp_path, monkeypatch):
    """A talk's act asks for the curve over a pool by its words: the view shows the newest curve with those words
    (not the store's newest), unnumbered (the act has its own count), a reading begun before the ask does not
    replace it, and `]` then steps from there, numbered; words no curve has leave the view where it was."""
    _two_curves(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        view = app.screen
        view.show_curve("older pool")  # at once, while the view's first reading (the newest) is under way
        await wait_for(pilot, lambda: _text(app, "#curve-status").startswith("older pool ·"), what="the asked")
        for _ in range(3):  # the view re-reads every few seconds: it stays on the curve asked for
            view.read_store()
            await pilot.pause(0.2)
        assert _text(app, "#curve-status").startswith("older pool ·")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: "curve 1 of 2: newer pool" in _text(app, "#curve-status"), what="a step on")
        view.show_curve("no such pool")
        await wait_for(pilot, lambda: not view.words, what="the reading for unknown words")
        assert _text(app, "#curve-status").startswith("newer pool ·")


async def test_asking_for_another_curve_clears_the_view_at_once_to_a_plain_loading_line(tmp_path, monkeypatch):
    """A talk's act asks for another pool's curve: before any reading comes back, the view shows only "loading" and
    those words (no status, chart, rows or warnings of the curve it showed), then the asked curve."""
    _two_curves(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "newer pool" in _text(app, "#curve-status"), what="the newest")
        view = app.screen
        view.show_curve("older pool")  # no await: what the very next frame draws
        assert _text(app, "#curve-status") == "loading the breadth curve over older pool…"
        assert view.query_one(CurvePlot).found == [] and _text(app, "#curve-rows") == ""
        assert _text(app, "#curve-warnings") == "" and not view.query_one("#curve-terms").display
        await wait_for(pilot, lambda: _text(app, "#curve-status").startswith("older pool ·"), what="the asked")
        assert [r.split()[0] for r in _rows(app)[1:]] == ["1", "2", "4", "ceiling"]


async def test_the_shipped_stores_curves_are_read_once_per_process(tmp_path, monkeypatch):
    """From a fresh home, a talk asks for the shipped store's curves again and again (act to act, back, a second
    view): each curve's runs are read once; the user's own store is still read as it changes (test below)."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "empty.sqlite"))
    shipped = tmp_path / "shipped.sqlite"
    base = weights_hash(BASE)
    with Store(shipped) as store:
        _fill(store, StoredCurve(_plan(), "pool a", base), {1: 0, 2: 0, 4: 0, CEILING: 0.5})
        store.db.execute("UPDATE curves SET created = 1")
        _fill(store, StoredCurve(_plan(held=3), "pool b", base), {1: 0, 2: 0, 4: 0, CEILING: 0.5})
    monkeypatch.setattr(curve_store, "SHIPPED_CURVE", shipped)
    reads = []
    real = curve_store.read_at
    monkeypatch.setattr(curve_store, "read_at", lambda *a, **k: reads.append(1) or real(*a, **k))
    for _ in range(2):  # two views, one after the other, as two acts' or two talks' in one process
        app = fake_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f11")
            view = app.screen
            for words in ("pool a", "pool b", "pool a"):
                view.show_curve(words)
                shows = f"{words} ·"
                await wait_for(pilot, lambda a=app, s=shows: s in _text(a, "#curve-status"), what=words)
    assert len(reads) == 2


async def test_a_store_as_it_was_is_not_read_again_until_it_changes(tmp_path, monkeypatch):
    """Polling costs a query while the store is as it was (a talk's shipped store, every few seconds): the curve's
    runs are read again only when a run or a curve is stored, or another curve is asked for."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base = weights_hash(BASE)
    curve = StoredCurve(_plan(), "a pool", base)
    rates = {1: 0, 2: 0, 4: 0, CEILING: 0.5}
    with Store() as store:
        _fill(store, curve, rates, limit=3)
    reads = []
    real = curve_store.read_at
    monkeypatch.setattr(curve_store, "read_at", lambda *a, **k: reads.append(1) or real(*a, **k))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "3/8 runs" in _text(app, "#curve-status"), what="the first reading")
        view, first = app.screen, len(reads)
        for _ in range(4):
            view.read_store()
            await pilot.pause(0.2)
        assert len(reads) == first  # unchanged: not read again
        with Store() as store:
            _fill(store, curve, rates)
        view.read_store()
        await wait_for(pilot, lambda: "8/8 runs" in _text(app, "#curve-status"), what="the new runs")
        assert len(reads) == first + 1


async def test_a_fresh_home_shows_the_shipped_curve_and_says_so(tmp_path, monkeypatch):
    """No curve in the user's store (a talk from a fresh home): the view shows the shipped store's curve, marked."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "empty.sqlite"))
    shipped = tmp_path / "shipped.sqlite"
    with Store(shipped) as store:
        _fill(store, StoredCurve(_plan(), "shipped pool", weights_hash(BASE)), {1: 0, 2: 0, 4: 0, CEILING: 0.5})
    monkeypatch.setattr(curve_store, "SHIPPED_CURVE", shipped)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "shipped with breadth" in _text(app, "#curve-status"), what="the shipped curve")
        assert "shipped pool" in _text(app, "#curve-status")
    assert not (tmp_path / "empty.sqlite").exists()  # reading created no store


async def test_a_stores_text_is_shown_as_text_and_a_bad_plan_is_counted_not_raised(tmp_path, monkeypatch):
    """A curve's words holding markup and an escape are shown literally; a plan breadth did not write is named as
    unreadable and the view says there is no curve, the app running on."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        store.add_curve("bad", {"plan": {"held": "x"}, "what": "w", "base": "b"})
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "1 stored curves this breadth cannot read" in _text(app, "#curve-status"))
        await pilot.press("escape")
    with Store() as store:
        _fill(store, StoredCurve(_plan(), "[b]bold[/b] \x1b[31mred", weights_hash(BASE)), {1: 0, 2: 0, 4: 0, 0: 0.5})
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "runs" in _text(app, "#curve-status"), what="the curve")
        status = _text(app, "#curve-status")
        assert "[b]bold[/b]" in status and "\x1b" not in status


async def test_the_view_skips_newer_plans_it_cannot_read_and_opens_on_the_newest_readable(tmp_path, monkeypatch):
    """The store's two newest plans cannot be read (one as an older `breadth curve --min-steps 1000000` stored it,
    its runs over the steps any run may take; one not JSON): the view opens on the older readable curve, the app on."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base = weights_hash(BASE)
    with Store() as store:
        _fill(store, StoredCurve(_plan(), "older pool", base), {1: 0, 2: 0, 4: 0, CEILING: 0.5})
        store.db.execute("UPDATE curves SET created = 1")
        past_limits = {"plan": _plan().to_dict() | {"min_steps": 1_000_000}, "what": "too long", "base": base}
        store.add_curve("curve-too-long", past_limits)
        store.db.execute("INSERT INTO curves VALUES ('curve-not-json', '{\"plan\": ', 3)")
        store.db.execute("UPDATE curves SET created = 2 WHERE name = 'curve-too-long'")
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f11")
        await wait_for(pilot, lambda: "older pool" in _text(app, "#curve-status"), what="the readable curve")
        assert "not read" not in _text(app, "#curve-status")
        assert [r.split()[0] for r in _rows(app)[1:]] == ["1", "2", "4", "ceiling"]


def _point(n: int, held: float, train: float = 0.9) -> CurvePoint:
    return CurvePoint(n, "400", 30, (train,) * 3, (held,) * 3, (train - held,) * 3, None)


class _Chart(App):
    """The curve's chart alone, filling the screen."""

    def compose(self):
        yield CurvePlot()


async def test_the_ceilings_value_labels_its_row_alone_at_every_height_of_80x24_and_120x40():
    """The ceiling's dotted line is named on the chart and its value is the axis's label of its row, never beside
    another label of that row: at the chart's heights in 80x24 and 120x40 (a talk's 5 rows, the view's 7, 27 at
    120x40), a ceiling near a grid label (61% beside 50% at 80x24) takes the row, and each label keeps its own."""
    for width, height in ((80, 9), (80, 11), (80, 12), (120, 27), (120, 31)):
        for ceiling in (0.03, 0.46, 0.55, 0.61, 0.82, 0.97):
            app = _Chart()
            async with app.run_test(size=(width, height)) as pilot:
                plot = app.query_one(CurvePlot)
                plot.show([_point(1, 0.0), _point(2, 0.2), _point(4, 0.5), _point(CEILING, ceiling)])
                await pilot.pause()
                rows = plot.render().plain.splitlines()
                labels = {i: row.split("┤")[0].strip() for i, row in enumerate(rows) if "┤" in row}
                (line,) = [i for i, row in enumerate(rows) if "ceiling" in row]
                assert "·" in rows[line] and labels.get(line) == f"{100 * ceiling:.0f}%", (width, height, rows)
                assert len(set(labels.values())) == len(labels), labels  # no label drawn over another
