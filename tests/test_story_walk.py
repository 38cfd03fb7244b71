"""The story walked as an audience sees it, on the shipped models and stores, at 80x24 and 120x40: at every step
each act's caption is whole on screen and its view is the act's own (the lanes, the procedure at the moment's
step, the matrix, the act's curve), showing the models the caption names and the numbers it quotes."""

from __future__ import annotations

import re

import pytest
from fake_engine import FakeEngine
from textual.geometry import Region
from textual.widgets import DataTable, Static
from tui_helpers import screen_lines, wait_for

from breadth.core.results.curve_points import warnings
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import brief, where_words
from breadth.tui.app import BreadthApp
from breadth.tui.screens.curve_store import read_curve
from breadth.tui.screens.curve_view import CurvePlot, CurveView
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.procedure_view import ProcedureView
from breadth.tui.screens.transfer_view import TransferView
from breadth.tui.story import VIEWS, Act, Step, default_story
from breadth.tui.widgets.caption import Caption

MODELS = {  # how a caption names a shipped model (any wording holding these words), and the model's key
    "two-digit model": "shipped:two_digit_70",
    "3 singles model": "shipped:three_digit_70",
    "the mix": "shipped:mix_35_35",
}
NUMBER = re.compile(r"(?<![\d.])\d+(?![\d.]*\d)")  # a whole number as written (`19` of `19%`, `74` of `B74+34|`)


class ShippedEngine(FakeEngine):
    """The engine's session in a thread, as in the app's other tests, serving the shipped models themselves."""

    def models(self):
        from breadth.core.learning.experiment import TorchModels  # torch: in the tests' process, never the app's

        return TorchModels()


def _numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def _text(app, region: Region) -> str:
    """What the screen shows inside `region`, row by row."""
    return "\n".join(line[region.x : region.right] for line in screen_lines(app)[region.y : region.bottom])


def _named(say: str) -> set[str]:
    """The keys of the shipped models `say` names."""
    return {key for words, key in MODELS.items() if words in say.lower()}


def _check_caption(app, where: str, say: str, size: tuple[int, int]) -> None:
    """The act's place and the caption are on the screen's caption line, every word of them (nothing cut)."""
    caption = app.screen.query_one(Caption)
    assert caption.display and caption.said == (where, say), (caption.said, where, say)
    assert app.screen.region.contains_region(caption.region), (size, caption.region)
    shown = " ".join(_text(app, caption.region).split())
    assert shown == " ".join(f"{where}  {say}".split()), (size, shown)


def _check_lanes(app, act: Act, step: Step, say: str) -> str:
    """The race on the main screen, each lane whole and titled; the models the caption names race there, and a
    model it says fails (or solves) shows that verdict. Returns the lanes' text on screen."""
    assert app.screen is app.screen_stack[0], type(app.screen)
    lanes = {view.state.key: view for view in app.playground.race.views()}
    assert set(lanes) == set(MODELS.values())  # the shipped three race
    box = app.playground.query_one("#lanes").region
    for view in lanes.values():
        assert box.contains_region(view.region) and app.screen.region.contains_region(view.region), view.region
        border = _text(app, Region(view.region.x, view.region.y, view.region.width, 1))
        assert f" {view.state.title} " in border, (view.state.title, border)  # named whole in its border
    if step.probe is None:
        return ""
    prompt = act.probes[step.probe].text
    for key, view in lanes.items():
        text = _text(app, view.region)
        assert f"{prompt}=" in text and view.state.verdict is not None, (key, text)
    assert _named(say) <= set(lanes)
    for clause in re.split(r"[.;:]", say):
        said = clause.lower()
        for mark, models in (("✗", " fails" in said), ("✓", " solves" in said)):
            if models:
                named = set(lanes) if "every model" in said else _named(clause)
                for key in named:
                    assert mark in _text(app, lanes[key].region), (clause, key, _text(app, lanes[key].region))
    return "\n".join(_text(app, view.region) for view in lanes.values())


async def _check_procedure(pilot, act: Act, step: Step, say: str) -> str:
    """The procedure view of the model the caption names, at the moment's step, every shown line replayed there and
    its family named in words."""
    app, screen = pilot.app, pilot.app.screen
    assert isinstance(screen, ProcedureView), type(screen)
    assert {screen.run.key} >= _named(say) and screen.run.key == MODELS["the mix"]  # the act replays the mix
    moment = act.moments[step.moment or 0]
    shown = [line for line in screen.lines if screen._shown(line)]
    await wait_for(
        pilot,
        lambda: screen.step == moment.step and all(line.step == moment.step and line.verdict for line in shown),
        what=f"the replays at step {moment.step}",
    )
    await pilot.pause()
    text = _text(app, screen.region)
    assert f"step {moment.step} of" in text
    for line in shown:  # each family in words on stage, never its code
        family = REGISTERED[line.problem.environment]
        assert f"{brief(family)} " in text and family.short not in text, (brief(family), text)
    return text


async def _check_matrix(pilot, say: str, size: tuple[int, int]) -> str:
    """The matrix: its 27 rows, at least 17 in view at 80x24, starred where each model trained; the percentage the
    caption quotes is the largest cell in view off the stars."""
    screen = pilot.app.screen
    assert isinstance(screen, MatrixView), type(screen)
    await wait_for(pilot, lambda: screen.lines and screen.query_one(DataTable).row_count, what="the matrix's rows")
    await pilot.pause()
    table = screen.query_one(DataTable)
    assert table.row_count == 27 and table.region.height - 2 >= 17, size  # rows under two header lines (were 8)
    assert not screen.query_one("#matrix-detail").display  # a talk shows rows, not one cell's detail
    text = _text(pilot.app, table.scrollable_content_region)
    cells = [cell for row in text.splitlines()[2:] for cell in row.split()[-len(screen.columns) :]]
    assert any(cell.startswith("*") for cell in cells)
    unstarred = [int(cell) for cell in cells if cell.isdigit()]
    assert [int(n) for n in re.findall(r"(\d+)%", say)] == [max(unstarred)], (say, max(unstarred))
    return text


async def _check_curve(pilot, act: Act) -> str:
    """The act's own curve (the newest over its pool's words): its status, points and rows, no other act's; the
    ceiling's line labelled on the axis with the value the caption quotes; no blank row over the caption."""
    screen = pilot.app.screen
    assert isinstance(screen, CurveView), type(screen)
    await wait_for(pilot, lambda: screen.last.curve is not None, what=f"the curve over {act.curve}")
    await pilot.pause()
    assert screen.last.curve.what == act.curve and screen.query_one(CurvePlot).found == read_curve(0, act.curve).found
    text = _text(pilot.app, Region(0, 0, screen.size.width, screen.query_one(Caption).region.y))
    assert f"{where_words(act.curve)} ·" in text  # the curve's pool, in words (`2 numbers`)
    if not warnings(screen.last.found):  # nothing to warn of: no blank row over the caption
        assert screen.query_one("#curve-terms").region.bottom == screen.query_one(Caption).region.y
    (ceiling,) = [row for row in _text(pilot.app, screen.query_one(CurvePlot).region).splitlines() if "ceiling" in row]
    assert ceiling.split("┤")[0].strip() in re.findall(r"\d+%", act.say), ceiling  # its value, on the axis at its row
    return text


async def _check_transfer(pilot) -> str:
    """The shipped map: every cell read, whole on screen above the caption (its numbers are checked against the
    caption by the walk)."""
    screen = pilot.app.screen
    assert isinstance(screen, TransferView), type(screen)
    await wait_for(pilot, lambda: screen.last.stored is not None, what="the transfer map")
    await pilot.pause()
    text = _text(pilot.app, Region(0, 0, screen.size.width, screen.query_one(Caption).region.y))
    assert "shipped with breadth" in text and "not yet run" not in text
    assert screen.query_one("#map-terms").region.bottom <= screen.query_one(Caption).region.y
    return text


def _message(app) -> str:
    """The line under the sum box (the main screen's, also while a view is over it)."""
    return str(app.playground.query_one("#sum-message", Static).render())


def _check_place(app, act: Act, step: Step) -> None:
    """Under the sum box: the act, and the probe with its sum or the moment with its step."""
    line, head = _message(app), f"act {step.act + 1}"
    if step.probe is not None:
        probe = f"probe {step.probe + 1} of {len(act.probes)}"
        assert line.startswith(head) and probe in line, line  # then the sum, or a failure kind in plain words
        assert f"race {act.probes[step.probe].text}" in str(app.playground.query_one("#race-head", Static).render())
    elif step.moment is not None:
        assert f"moment {step.moment + 1} of {len(act.moments)}: step {act.moments[step.moment].step}" in line, line
    else:
        assert line.startswith(f"{head} of ") and act.title in line, line


def _said(story, step: Step) -> tuple[str, str]:
    """The act's place and the caption the story gives `step`: a probe's caption alone; an act's opening or a
    moment after the act's place."""
    act = story.acts[step.act]
    if step.probe is not None:
        return "", act.probes[step.probe].say
    where = f"act {step.act + 1} of {len(story.acts)}: {act.title}"
    return where, act.say if step.moment is None else act.moments[step.moment].say


async def _step(pilot) -> None:
    await pilot.press("pagedown")
    await pilot.pause()
    await wait_for(pilot, lambda: not pilot.app.playground.busy(), what="the race")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_every_act_shows_what_its_caption_says_at_80x24_and_120x40(size, one_thread):
    """PageDown through the default story on the shipped models: at each step the act's place and caption are whole
    on screen and the line under the sum box says where the story is; the act's view is the one shown (the race's
    lanes, the procedure at the moment's step, the matrix, the act's own curve, never another act's) with the act's
    calculator; the models the caption names are on screen (the first caption names every lane's), a model it says
    fails shows ✗, one it says solves ✓; every number the caption quotes (a call, a reply, a step, a percentage, a
    count of kinds) is in the view, except at an act's opening over the race, which plays nothing. Past the last act
    the story says it has ended, on the main screen."""
    app = BreadthApp(engine_factory=ShippedEngine, demo=default_story())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, what="the engine")
        app.playground.pace = 0
        story, seen = app.demo_mode.demo, set()
        assert len(story.acts) == 8 and {act.view for act in story.acts} == {"", *VIEWS}
        assert not app.query_one(Caption).display
        assert f"{len(story.acts)} acts, {len(story.probes)} probes" in _message(app)
        for step in app.demo_mode.steps:
            raced = dict(app.playground.race.by_probe)
            await _step(pilot)
            act = story.acts[step.act]
            where, say = _said(story, step)
            if act.view:
                await wait_for(pilot, lambda: app.screen.query(Caption), what=f"the caption on act {step.act + 1}")
                await wait_for(pilot, lambda say=say: app.screen.query_one(Caption).said[1] == say, what="its caption")
            _check_caption(app, where, say, size)
            assert app.playground.lie_spec() == act.lie, (step, act.lie)  # the act's calculator, honest after the lie
            _check_place(app, act, step)
            if act.view == "procedure":
                view = await _check_procedure(pilot, act, step, say)
            elif act.view == "matrix":
                view = await _check_matrix(pilot, say, size)
            elif act.view == "curve":
                view = await _check_curve(pilot, act)
            elif act.view == "transfer":
                view = await _check_transfer(pilot)
            else:
                view = _check_lanes(app, act, step, say)
                if step.probe is None:
                    assert app.playground.race.by_probe == raced  # an act's opening plays nothing
            if step == app.demo_mode.steps[0]:
                assert _named(say) == set(MODELS.values())  # the first caption names each model racing
            if view:
                missing = _numbers(say) - _numbers(view)
                assert not missing, (size, step, say, missing)
            seen.add(act.view)
        assert seen == {"", *VIEWS}
        await _step(pilot)
        assert app.screen is app.screen_stack[0] and app.query_one(Caption).plain() == "end of the story"
        assert "end of the story" in _message(app)
