"""The transfer map view (Shift+F10): the store's newest map, a row per way of varying and a column per design, each
cell held out [95%] / ceiling; a cell not learned is marked; it fills as runs are stored; `[`/`]` step maps; what
the store holds is shown as text; a fresh home shows the map shipped with breadth."""

from __future__ import annotations

import pytest
from tui_helpers import fake_app, screen_lines, wait_for

from breadth.core.results.grid import GridError
from breadth.core.results.transfer_map import StoredMap, cells
from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE, SHIPPED_MAP
from breadth.core.storage.store import Store, StoredRun
from breadth.core.world.environments.registry import where
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.tui.screens import transfer_view
from breadth.tui.screens.transfer_view import TransferView

THREE = tuple(f.name for f in where(operands="3"))
DESIGNS, ROWS = [("form=postfix", "op=sub")], [(), ("form",)]


def _map(what: str = "operands=3", seeds: tuple[int, ...] = (0, 1)) -> StoredMap:
    made = cells(THREE, DESIGNS, ROWS, 30, seeds, FinetuneSettings(), 30)
    return StoredMap(tuple(DESIGNS), tuple(ROWS), tuple(made), what, weights_hash(BASE))


def _fill(store: Store, stored: StoredMap, train: dict, held: dict, ceiling: float, rows=None) -> None:
    """Made-up runs for the rows asked (all by default): training environments at train[row], held out at held[row]
    (+10 points on seed 1), the ceiling at `ceiling`."""
    for c in stored.cells:
        if rows is not None and c.vary not in rows:
            continue
        out = c.plan.split(0)[0]
        for job, _, n in c.plan.jobs(stored.base_hash):
            rate = ceiling if n == 0 else held[c.vary] + 0.1 * job.seed
            scores = {e: HeldOutScore(e, round(100 * (rate if e in out else train[c.vary])), 100, {})
                      for e in job.environments}  # fmt: skip
            record = RunMeta("finetune", job.settings, job.cell.mix.spec(), job.seed, 30, scores, (1.0,), 1.0)
            store.add(StoredRun(job.key, record, stored.base_hash, "transfer"))


def _text(app) -> str:
    return "\n".join(screen_lines(app))


async def test_the_map_shows_each_cell_beside_its_ceiling_and_marks_one_not_learned(tmp_path, monkeypatch):
    """Row `all`: held out 1-11% against a 90% ceiling, learned; row `form`: its training environments at 30%, so
    dimmed and marked †; the status counts the runs and names the pool in words; the terms line says what † means."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    stored = _map()
    with Store() as store:
        store.add_map(stored.name, stored.to_dict())
        _fill(store, stored, {(): 0.8, ("form",): 0.3}, {(): 0.01, ("form",): 0.2}, 0.9)
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f22")
        await wait_for(pilot, lambda: isinstance(app.screen, TransferView) and "/ 90" in _text(app), what="the map")

        rows = {line.split()[0]: line.rstrip() for line in screen_lines(app) if line.split()[:1] in (["all"], ["form"])}
        assert rows["all"].endswith("/ 90") and "all the rest" in rows["all"] and "†" not in rows["all"]
        assert rows["form"].endswith("/ 90 †")
        assert "3 numbers · 8/8 runs" in _text(app)  # 2 rows x 2 seeds, and each row's ceiling (its own steps) x 2
        assert transfer_view.TERMS in [line.strip() for line in screen_lines(app)]  # one line at 80 columns


async def test_the_map_fills_as_runs_are_stored(tmp_path, monkeypatch):
    """Before a row's runs are stored its cell says `not yet run`; once they are, the next re-read shows them."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setattr(transfer_view, "REFRESH_SECONDS", 0.2)
    stored = _map()
    with Store() as store:
        store.add_map(stored.name, stored.to_dict())
        _fill(store, stored, {(): 0.8}, {(): 0.01}, 0.9, rows=[()])
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f22")
        await wait_for(pilot, lambda: "not yet run" in _text(app), what="a row not yet run")
        with Store() as store:
            _fill(store, stored, {("form",): 0.8}, {("form",): 0.5}, 0.9, rows=[("form",)])
        await wait_for(pilot, lambda: "not yet run" not in _text(app), timeout=10, what="the row filled")
        assert "55 [" in _text(app)  # 50 and 60 on two seeds


async def test_a_stores_text_is_shown_as_text_and_brackets_step_between_maps(tmp_path, monkeypatch):
    """A map whose pool words hold markup and an escape shows them literally (with Shift+F5, as chosen); `[` goes
    to the older map and says which of two it is."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    hostile, plain = _map("[bold red]x[/] \x1b[31m", seeds=(5,)), _map("operands=3")  # two maps: other seeds
    with Store() as store:
        store.add_map(hostile.name, hostile.to_dict())
        store.db.execute("UPDATE maps SET created = 1")  # the older one
        store.add_map(plain.name, plain.to_dict())
    app = fake_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f22")
        await wait_for(pilot, lambda: "map 1 of 2" in _text(app), what="the newest map")
        await pilot.press("left_square_bracket")
        await pilot.press("f17")  # Shift+F5: the pool as chosen, in codes
        await wait_for(pilot, lambda: "map 2 of 2" in _text(app), what="the older map")
        assert "[bold red]x[/] \\x1b[31m" in _text(app)


async def test_a_fresh_home_shows_the_map_shipped_with_breadth(tmp_path, monkeypatch):
    """With no map of the user's own, the view shows the shipped store's map and says so, reading it immutably."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    beside = {p.name for p in SHIPPED_MAP.parent.iterdir()}
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f22")
        await wait_for(pilot, lambda: "shipped with breadth" in _text(app), what="the shipped map")
        assert "/ " in _text(app) and "all the rest" in _text(app)
    assert {p.name for p in SHIPPED_MAP.parent.iterdir()} == beside


async def test_a_map_this_breadth_cannot_read_is_counted_not_raised(tmp_path, monkeypatch):
    """A stored map of an unexpected shape (another version's, a damaged row) is refused by StoredMap in one line,
    and the view, with nothing else to show, says how many it could not read; the app runs on."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    good = _map().to_dict()
    bad = [{"designs": "x"}, {**good, "cells": good["cells"][:1]}, {**good, "what": 7}, [1, 2]]
    for data in bad:
        with pytest.raises(GridError, match="a stored transfer map of an unexpected shape"):
            StoredMap.from_dict(data)
    with Store() as store:
        store.add_map("map-bad", {"designs": "x"})
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f22")
        await wait_for(pilot, lambda: "unreadable" in _text(app), what="the count of unread maps")
        status = screen_lines(app)[0].rstrip()
        assert status == "no transfer map yet: `breadth transfer` fills this (1 stored, unreadable here)"
