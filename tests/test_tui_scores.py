"""The score panel on the grid of families: own families with bars, the other environments summarised, at 80x24."""

from __future__ import annotations

from textual.widgets import Collapsible, Input, Select
from tui_helpers import fake_app, unfold, wait_for

from breadth.core.storage.header import weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import brief
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _old_run(base_hash: str) -> StoredRun:
    """A stored run from before the grid: scored on the plate's two families only."""
    settings = FinetuneSettings(seed=3)
    scores = {"add_2x2": HeldOutScore("add_2x2", 27, 30), "add_3x1": HeldOutScore("add_3x1", 0, 30)}
    run = RunMeta("finetune", settings, "add_2x2=70", 3, 30, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key("add_2x2=70", settings, 30, base_hash), run, base_hash, "sweep")


def _row(table, key: str) -> list[str]:
    """The cells of a runs-table row as plain text."""
    return [cell.plain.strip() for cell in table.get_row(key)]


async def test_own_families_have_bars_the_other_environments_a_summary_and_every_column_is_in_view(
    tmp_path, monkeypatch
):
    """At 80x24 the two-digit model shows its own family's bar (a column left before the border), then the nine other
    environments under their mean, in the matrix columns' words (`add 3` over `0-9`), each line whole in the panel;
    Shift+F5 shows them by code and again gives the words back; the runs table shows model, seed, the plate's two, own
    and other in view with three rows under its header, and `-` for what an old run never scored."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    with Store() as store:
        store.add(_old_run(weights_hash(BASE)))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 4, what="the stored run")
        app.catalogue.switch_to("shipped:two_digit_70")
        await pilot.pause()
        panel = app.score_panel
        shown = str(panel.query_one("#environment-scores").render())
        assert "30/30 100%" in shown  # its own family, with a bar
        assert "other environments  mean 0%" in shown
        assert shown.splitlines()[-3:] == [  # add 3 numbers of 0-9 (add_3x1) 0%, add 2 of 0-9 0%, ...
            "      add   2   3   4 sub   2   3   4",
            "  0-9       0   0   0           0   0",
            "10-99           0   0       0   0    ",
        ]
        room = panel.content_region.width
        assert all(len(line) <= room for line in shown.splitlines())  # nothing wrapped or cut
        assert len(shown.splitlines()[0]) < room  # the bar's interval leaves a column before the border
        await pilot.press("shift+f5")
        coded = str(panel.query_one("#environment-scores").render())
        for family in REGISTERED.values():
            if family.name != "add_2x2":
                assert f"{family.short:<5}  0" in coded, f"{family.name} missing from the summary"
        await pilot.press("shift+f5")
        assert str(panel.query_one("#environment-scores").render()) == shown
        assert panel.query_one("#environment-scores").region.right <= panel.region.right
        table = panel.query_one("#runs")
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.scrollable_content_region.width
        assert table.region.bottom <= panel.region.bottom
        assert table.region.height >= table.header_height + 3  # its header and three rows
        assert _row(table, "shipped:two_digit_70")[1:] == ["0", "100", "0", "100", "0"]
        assert _row(table, "shipped:mix_35_35")[1:] == ["0", "100", "97", "98", "1"]
        (old,) = [k for k, e in app.entries.items() if e.origin == "stored"]
        assert _row(table, old)[1:] == ["3", "90", "0", "90", "-"]  # 8 families never scored
        app.catalogue.switch_to(old)
        await pilot.pause()
        shown = str(panel.query_one("#environment-scores").render())
        assert "mean 0% of 1 scored" in shown
        assert shown.splitlines()[-2:] == [  # add 3 numbers of 0-9 alone scored
            "  0-9       -   0   -           -   -",
            "10-99           -   -       -   -    ",
        ]


async def test_a_family_outside_the_plate_is_set_under_more_families_and_trained(tmp_path, monkeypatch):
    """Counts set under "more environments" (named in its folded title) train that family alone; the new model's
    own family gets the bar and the plate's two join the other environments."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("BREADTH_RUNS", str(tmp_path / "runs"))
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.train_panel
        sub = REGISTERED["sub_3x1"]
        for name in ("add_2x2", "add_3x1"):
            panel.query_one(f"#count-{name}", Input).value = "0"
        await unfold(pilot, "more")
        panel.query_one("#count-sub_3x1", Input).value = str(sub.demo_pool + 1)
        await pilot.press("f2")
        await pilot.pause()
        assert panel.status_is_error and str(sub.demo_pool) in panel.status and app.training is None
        panel.query_one("#count-sub_3x1", Input).value = "40"
        panel.query_one("#steps", Input).value = "10"
        panel.query_one("#more", Collapsible).collapsed = True
        await pilot.pause()
        assert panel.query_one("#preset", Select).value == "custom"
        assert panel.query_one("#more", Collapsible).title == "more environments: sub 3 0-9 40"  # its matrix column
        await pilot.press("f2")
        await wait_for(
            pilot, lambda: app.training is None and app.entries[app.current].origin == "trained", what="training"
        )
        entry = app.entries[app.current]
        assert entry.origin == "trained" and entry.run.mix == "sub_3x1=40" and set(entry.scores) == set(REGISTERED)
        shown = str(app.score_panel.query_one("#environment-scores").render())
        assert shown.startswith(brief(sub)) and "other environments" in shown  # `3 singles minus`, in words
        assert "      add   2   3   4 sub   2   3" in shown  # add_2x2 (add 2 over 10-99) now among the others
        assert not [f for f in REGISTERED.values() if f.short in shown]  # in words, no code


def test_a_long_title_keeps_its_run_number_in_the_runs_table():
    """Two runs of one mix stay told apart when their titles are cut to the runs table's width, after a whole word."""
    from breadth.tui.widgets.score_lines import MODEL_WIDTH, fit_title

    assert fit_title("2d 70") == "2d 70"
    cut = fit_title("2d 35+3d 35 #12")
    assert len(cut) == MODEL_WIDTH and cut == "2d 35+… #12"
    assert fit_title("2d 70 lr 0.001 drop 0.1") == "2d 70 lr…"  # not `2d 70 lr 0…`: no word is cut in half


async def test_a_wide_screen_gives_the_runs_table_titles_more_room_and_a_narrow_one_takes_it_back(
    tmp_path, monkeypatch
):
    """At 120x40 a stored run's long title (its settings named) shows whole, every score column still in view;
    resized to 80x24 it is cut again to the model column's width, after a whole word."""
    from breadth.tui.widgets.score_lines import MODEL_WIDTH, fit_title

    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    base_hash = weights_hash(BASE)
    settings = FinetuneSettings(seed=1, lr=0.001, dropout=0.1)
    scores = {"add_2x2": HeldOutScore("add_2x2", 27, 30)}
    run = RunMeta("finetune", settings, "add_2x2=70", 1, 30, scores, (1.0,), 5.0, 0.1)
    with Store() as store:
        store.add(StoredRun(run_key("add_2x2=70", settings, 30, base_hash), run, base_hash, "sweep"))
    app = fake_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(app.entries) == 4, what="the stored run")
        table = app.score_panel.query_one("#runs")
        (key,) = [k for k, e in app.entries.items() if e.origin == "stored"]
        title = app.entries[key].title
        assert len(title) > MODEL_WIDTH and _row(table, key)[0] == title
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.scrollable_content_region.width
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        width = app.score_panel.model_width
        assert MODEL_WIDTH <= width < len(title) and _row(table, key)[0] == fit_title(title, width) == "two-digit…"
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.scrollable_content_region.width
