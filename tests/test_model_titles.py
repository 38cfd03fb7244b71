"""Model titles an audience reads: a model trained in this session is `trained just now: <mix> #n`, and no two
rows of the runs table share a title (after a restart, a stored run of a shipped model's mix said the same)."""

from __future__ import annotations

import time

from textual.widgets import Input
from tui_helpers import fake_app, wait_for

from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.tui.catalog import ModelEntry
from breadth.tui.parts.catalogue import titles_apart, when

NOON = time.mktime((2026, 12, 1, 12, 0, 0, 0, 0, -1))  # local noon, 1 Dec 2026


def _stored(mix: str, seed: int, base_hash: str) -> StoredRun:
    """A stored sweep run of `mix` (no checkpoint)."""
    settings = FinetuneSettings(seed=seed)
    scores = {"two_digit": HeldOutScore("two_digit", 150, 200), "three_digit": HeldOutScore("three_digit", 0, 200)}
    run = RunMeta("finetune", settings, mix, seed, 200, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key(mix, settings, 200, base_hash), run, base_hash, "sweep")


def _entry(key: str, title: str, seed: int = 0, made: float = 0.0, origin: str = "stored") -> ModelEntry:
    run = RunMeta("finetune", FinetuneSettings(seed=seed), "two_digit=70", seed)
    return ModelEntry(key, title, "", run, origin, made=made)


def test_a_model_trained_now_is_called_trained_just_now():
    """`trained just now: two-digit 70 #3`: what it is, then its mix, then its run number (kept when a lane cuts it)."""
    run = RunMeta("finetune", FinetuneSettings(seed=0), "two_digit=70", 0)
    entry = ModelEntry.trained("run:3", 3, "", run.to_dict())
    assert entry.title == "trained just now: two-digit 70 #3"


def test_rows_that_would_share_a_title_say_what_tells_them_apart():
    """The first keeps the title; the others add their seed when seeds differ and when they were stored; a number
    when nothing else differs; titles no other row shares are left alone."""
    entries = [
        _entry("shipped", "a2x2 70", origin="shipped"),
        _entry("a", "a2x2 70", made=NOON),
        _entry("b", "a2x2 70", seed=1, made=NOON - 86400),
        _entry("c", "a3x1 70", made=NOON),
        _entry("d", "x.safetensors", origin="loaded"),
        _entry("e", "x.safetensors", origin="loaded"),
    ]
    given = {e.key: e.title for e in entries}
    titles_apart(entries, given)
    noon = time.strftime("%H:%M", time.localtime(NOON))
    assert [e.title for e in entries] == [
        "a2x2 70",
        f"a2x2 70 seed 0 {when(NOON)}",
        f"a2x2 70 seed 1 {when(NOON - 86400)}",
        "a3x1 70",
        "x.safetensors",
        "x.safetensors (2)",
    ]
    assert when(NOON, NOON + 60) == noon and when(NOON - 86400, NOON) == "30 Nov"
    titles_apart(entries[:2], given)  # asked again with fewer rows: the given titles are the start each time
    assert [e.title for e in entries[:2]] == ["a2x2 70", f"a2x2 70 {when(NOON)}"]


async def test_after_a_restart_a_stored_run_of_a_shipped_mix_is_not_called_like_the_shipped_model(
    tmp_path, monkeypatch
):
    """A store holding a two-digit-only run (as a run trained in an earlier session leaves): the runs table shows
    the shipped `two-digit 70` and the stored one with when it was stored; every title differs."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        store.add(_stored("two_digit=70", 0, weights_hash(BASE)))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 4, timeout=10, what="the stored run")
        titles = [e.title for e in app.entries.values()]
        assert len(set(titles)) == len(titles)
        stored = next(e for e in app.entries.values() if e.origin == "stored")
        assert titles[0] == "two-digit 70" and stored.title == f"two-digit 70 {when(stored.made)}"


async def test_a_model_trained_in_the_app_is_called_trained_just_now_in_the_table_and_the_header():
    """F2 trains the form's mix: its row and the current model's header say `trained just now`, its mix, the settings
    that differ from the defaults, its run number."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.query_one("#steps", Input).value = "20"
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.current == "run:1" and app.training is None, what="the run")
        await pilot.pause()
        assert app.entries["run:1"].title == "trained just now: mix 35+35 steps 20 #1"
        header = app.score_panel.heading
        assert "trained just now: mix 35+35 steps 20 #1" in header
