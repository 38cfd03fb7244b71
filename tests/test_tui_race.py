"""The race view, driven through Pilot on the real engine session with one scripted procedure per shipped model.

The two-digit-only model makes one call of two numbers on any sum, the three-digit-only model opens a single-digit
call (malformed on a two-digit sum, as the real one does), the mix plays perfectly.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from fake_engine import FakeEngine, ScriptedModels, ScriptedPolicy, demonstrator
from textual.widgets import Input
from tui_helpers import type_text, wait_for

from breadth.core.engine import protocol as p
from breadth.core.storage.header import read_metadata
from breadth.core.storage.presets import PRESETS
from breadth.tui.app import BreadthApp
from breadth.tui.catalog import ModelEntry
from breadth.tui.widgets.race import DEFAULT_RACE, LaneView


def one_call(ops: tuple[int, ...]) -> str:
    """The two-digit procedure on any sum: one call of two numbers (1+5+4 -> B14+14|28|, as the real model writes)."""
    if len(ops) == 2:
        return demonstrator(ops)
    n = int(f"{ops[0]}{ops[-1]}")
    return f"B{n}+{n}|{2 * n}|"


SCRIPTS = {
    "two_digit_70": one_call,
    "three_digit_70": lambda ops: f"B{str(ops[0])[0]}+|9|" if ops[0] > 9 else demonstrator(ops),  # single digits
}


class RaceModels(ScriptedModels):
    """Scripted models whose procedure depends on the checkpoint played (by name); three-digit waits for `held`."""

    def __init__(self, held: threading.Event | None = None) -> None:
        super().__init__()
        self.held = held

    def policy(self, model, batch: int):
        if self.held is not None and Path(model).stem == "three_digit_70":
            self.held.wait()  # an engine stuck in the middle of a race
        return ScriptedPolicy(SCRIPTS.get(Path(model).stem, lambda ops: demonstrator(ops)), batch)


class RaceEngine(FakeEngine):
    """The fake engine, playing RaceModels."""

    def __init__(self, held: threading.Event | None = None) -> None:
        super().__init__()
        self.held = held

    def models(self):
        return RaceModels(self.held)


def race_app(held: threading.Event | None = None) -> BreadthApp:
    """The app on an engine whose shipped models each play their own procedure."""
    return BreadthApp(engine_factory=lambda: RaceEngine(held))


def lane_text(view: LaneView) -> str:
    """What a lane has shown of its episode (the model's and the calculator's characters)."""
    return "".join(c.char for c in view.state.shown)


def lanes(app) -> dict[str, LaneView]:
    """The race's lanes by model key."""
    return app.playground.race.lanes


async def race(pilot, text: str) -> None:
    """Type `text` in race mode at the instant pace, press Enter, and wait until every lane has its verdict."""
    app = pilot.app
    app.playground.pace = 0
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.playground.race.by_probe and not app.playground.busy(), what="the race")


async def test_ctrl_r_toggles_race_and_single_play_and_the_sum_box_keeps_its_text():
    """F4 shows the race in the probe log's place and back; what is typed in the sum box stays, focus too."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "45+9")
        await pilot.press("f4")
        await pilot.pause()
        assert app.playground.racing
        assert app.playground.race.display and not app.playground.query_one("#probes").display
        assert list(lanes(app)) == list(DEFAULT_RACE)
        box = app.query_one("#sum", Input)
        assert box.value == "45+9" and app.focused is box
        await pilot.press("f4")
        await pilot.pause()
        assert not app.playground.racing and app.playground.query_one("#probes").display
        assert box.value == "45+9"


async def test_up_and_down_recall_earlier_sums_in_both_modes():
    """Up recalls the sums played before, newest first; Down walks back to what was being typed."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.playground.pace = 0
        box = app.query_one("#sum", Input)
        await type_text(pilot, "23+45")
        await pilot.press("enter")
        await pilot.press("f4")
        await race(pilot, "3+4+5")
        await type_text(pilot, "9-")
        await pilot.press("up")
        assert box.value == "3+4+5"
        await pilot.press("up")
        assert box.value == "23+45"
        await pilot.press("up")
        assert box.value == "23+45"  # the oldest stays
        await pilot.press("down")
        assert box.value == "3+4+5"
        await pilot.press("down")
        assert box.value == "9-"  # back to the sum being typed
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: not app.playground.busy(), what="the recalled race")
        assert app.playground.race.query_one("#race-head").render().plain.startswith("race 3+4+5 = 12")


async def test_a_race_shows_one_model_calling_once_while_another_splits_the_sum():
    """On 45+91 the two-digit model writes B45+91| and is right; the three-digit one opens a single-digit call."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await race(pilot, "45+91")
        two, three, mix = (lanes(app)[f"shipped:{name}"] for name in PRESETS)
        assert lane_text(two) == "B45+91|136|136|" and "correct" in two.state.verdict.plain
        assert lane_text(three).startswith("B4+|?|") and "malformed call" in three.state.verdict.plain
        assert lane_text(mix) == "B45+91|136|136|"
        head = app.playground.race.query_one("#race-head").render().plain
        assert "45+91 = 136" in head and "two-digit" in head  # the true result and the family, once
        plays = [c for c in app.supervisor.engine.sent if isinstance(c, p.Probe)]
        assert {c.key for c in plays} == set(DEFAULT_RACE) and len({c.id for c in plays}) == 3  # one Probe each
        assert not app.playground.probes  # nothing went to the single-model log


async def test_a_three_operand_race_judges_each_procedure_against_the_true_result():
    """On 3+4+5 the one-call model is judged against 12 with its failure kind; the others solve it."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await race(pilot, "3+4+5")
        two, three, mix = (lanes(app)[f"shipped:{name}"] for name in PRESETS)
        assert lane_text(two) == "B35+35|70|70|" and two.state.verdict.plain == "✗ wrong number of calls"
        assert lane_text(three) == lane_text(mix) == "B3+4|7|B7+5|12|12|"
        assert "correct" in three.state.verdict.plain
        assert "3+4+5 = 12" in app.playground.race.query_one("#race-head").render().plain


async def test_lanes_stack_at_80_columns_and_stand_side_by_side_when_wide():
    """At 80x24 the lanes are one line each, one under another; at 120x40 they are columns, side by side."""
    for size, columns in (((80, 24), False), ((120, 40), True)):
        app = race_app()
        async with app.run_test(size=size) as pilot:
            await pilot.press("f4")
            await race(pilot, "45+91")
            views = list(lanes(app).values())
            xs = {v.region.x for v in views}
            ys = {v.region.y for v in views}
            if columns:
                assert len(xs) == 3 and len(ys) == 1, size
            else:
                assert len(xs) == 1 and len(ys) == 3 and all(v.region.height == 1 for v in views), size
            assert all(v.region.width > 0 and v.region.height > 0 for v in views)  # every lane on screen


async def test_the_model_just_trained_joins_the_race_and_a_runs_row_takes_one_out():
    """After training, a fourth lane holds the new model; Enter on a racing model's row takes it out of the race."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        app.train_panel.query_one("#steps", Input).value = "4"
        app.train_panel.set_value("held-out", "3")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.training is None and app.current.startswith("run:"), what="training")
        trained = app.current
        assert list(lanes(app)) == [*DEFAULT_RACE, trained]
        await race(pilot, "45+91")
        assert lane_text(lanes(app)[trained]) == "B45+91|136|136|"
        table = app.score_panel.query_one("#runs")
        table.focus()
        table.move_cursor(row=1)  # the three-digit-only model
        await pilot.press("enter")
        await pilot.pause()
        assert list(lanes(app)) == ["shipped:two_digit_70", "shipped:mix_35_35", trained]
        assert "left the race" in str(app.playground.query_one("#sum-message").render())
        await pilot.press("enter")  # and back in
        await pilot.pause()
        assert list(lanes(app)) == ["shipped:two_digit_70", "shipped:mix_35_35", trained, "shipped:three_digit_70"]


async def test_a_race_keeps_at_least_two_and_at_most_four_models(tmp_path):
    """Taking out all but two models is refused inline, and so is adding a fifth."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for name in ("a", "b"):  # two more models with a checkpoint: runs-table rows 3 and 4
            path = tmp_path / f"{name}.safetensors"
            shutil.copy(PRESETS["mix_35_35"].shipped, path)
            app.catalogue.add_loaded_model(ModelEntry.loaded(str(path), read_metadata(path)))
        await pilot.press("f4")
        table = app.score_panel.query_one("#runs")
        message = app.playground.query_one("#sum-message")

        async def choose(row: int) -> None:
            table.focus()
            table.move_cursor(row=row)
            await pilot.press("enter")
            await pilot.pause()

        await choose(0)  # two-digit only leaves
        await choose(1)  # three-digit only cannot leave: one model would be left
        assert list(lanes(app)) == ["shipped:three_digit_70", "shipped:mix_35_35"]
        assert "error" in message.classes and "needs 2 models" in str(message.render())
        for row in (0, 3):
            await choose(row)
        assert len(lanes(app)) == 4 and "error" not in message.classes
        await choose(4)
        assert len(lanes(app)) == 4 and "error" in message.classes and "4 models race at most" in str(message.render())


async def test_models_the_engine_let_go_are_loaded_again_for_their_lanes(tmp_path):
    """The engine holds four models; after two more were loaded, a race reloads the shipped ones it dropped."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await race(pilot, "45+91")
        for name in ("a", "b"):
            path = tmp_path / f"{name}.safetensors"
            shutil.copy(PRESETS["mix_35_35"].shipped, path)
            app.catalogue.add_loaded_model(ModelEntry.loaded(str(path), read_metadata(path)))
            await pilot.pause()
        await wait_for(
            pilot, lambda: not set(DEFAULT_RACE) <= app.supervisor.loaded, what="the engine to unload a shipped model"
        )
        await race(pilot, "12+34")
        assert all(
            "correct" in lanes(app)[k].state.verdict.plain for k in ("shipped:two_digit_70", "shipped:mix_35_35")
        )
        assert not any("engine error" in v.state.verdict.plain for v in lanes(app).values())
        await pilot.press("f4")  # and the current model, let go by the race, plays again too
        app.playground.pace = 0
        await type_text(pilot, "2+3")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.playground.probes and not app.playground.busy(), what="the single probe")
        assert "correct" in next(iter(app.playground.probes.values())).state.verdict.plain


async def test_a_dead_engine_during_a_race_ends_its_lanes_with_a_note_and_the_next_race_plays():
    """The engine dies mid-race: lanes without a verdict say the engine stopped; a new engine runs the next race."""
    held = threading.Event()
    app = race_app(held)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        app.playground.pace = 0
        await type_text(pilot, "45+91")
        await pilot.press("enter")
        two = lanes(app)["shipped:two_digit_70"]
        await wait_for(pilot, lambda: two.state.verdict is not None, what="the first lane")
        dying = app.supervisor.engine
        dying.kill()
        await wait_for(pilot, lambda: not app.playground.busy(), what="the lanes in flight to end")
        held.set()  # release the stuck thread of the dead engine
        three = lanes(app)["shipped:three_digit_70"]
        assert "engine error: the engine stopped" in three.state.verdict.plain
        assert "engine error: the engine stopped" in str(three.render())
        assert "correct" in two.state.verdict.plain  # a lane that had finished keeps its verdict
        await wait_for(pilot, lambda: app.supervisor.engine is not dying and app.supervisor.ready, what="a new engine")
        app.query_one("#sum", Input).value = ""
        await race(pilot, "45+91")
        assert "malformed call" in lanes(app)["shipped:three_digit_70"].state.verdict.plain


async def test_a_race_with_a_slow_pace_reveals_the_lanes_gradually():
    """At the slow pace no lane shows its whole episode at once; each completes later, with its verdict."""
    app = race_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        app.playground.pace = 3  # slow: 6 characters a second
        await type_text(pilot, "45+91")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: all(v.state.verdict is not None for v in lanes(app).values()),
            what="every verdict",
        )
        assert any(v.state.pending for v in lanes(app).values()), "every lane was shown at once at the slow pace"
        assert not any("correct" in str(v.render()) for v in lanes(app).values() if v.state.pending)
        app.playground.pace = 0
        await wait_for(pilot, lambda: not app.playground.busy(), what="the rest of the race")
        assert "correct" in str(lanes(app)["shipped:two_digit_70"].render())


SIZE_STACKED, SIZE_COLUMNS = (80, 24), (120, 40)


def _snapshot_race(text: str):
    """A Pilot script: race mode, `text` at the instant pace, every lane finished, the cursor blink frozen."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for box in app.query(Input):
            box.cursor_blink = False
        await pilot.press("f4")
        await race(pilot, text)
        await pilot.pause()

    return run_before


def test_snapshot_race_stacked_at_80x24(snap_compare):
    """At 80x24: the sum, its true result and family once, then one line per model with its verdict."""
    assert snap_compare(race_app(), terminal_size=SIZE_STACKED, run_before=_snapshot_race("45+91"))


def test_snapshot_race_in_columns_at_120x40(snap_compare):
    """At 120x40: one bordered column per model, named in its border, the episode and the verdict under it."""
    assert snap_compare(race_app(), terminal_size=SIZE_COLUMNS, run_before=_snapshot_race("45+91"))
