"""The app's resources stay bounded: one copy of each view, closed views let go, text boxes hold a bounded length
and a flood of keys or a huge paste costs little and is said inline."""

from __future__ import annotations

import gc
import time
import weakref

from fake_engine import FakeEngine
from textual import events
from textual.widgets import Input
from textual_plotext import PlotextPlot
from tui_helpers import fake_app, unfold, wait_for

from breadth.core.engine import protocol as p
from breadth.tui.app import BreadthApp
from breadth.tui.screens.checkpoint_prompts import LoadPrompt, SavePrompt
from breadth.tui.screens.demos_view import DemosView
from breadth.tui.screens.help import HelpScreen
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.path_prompt import PATH_MAX, PathPrompt
from breadth.tui.screens.procedure_view import ProcedureView, RunProgress
from breadth.tui.widgets.bounded_input import BoundedInput
from breadth.tui.widgets.sum_box import MAX_SUM

SIZE = (80, 24)
VIEWS = {"f9": ProcedureView, "f14": DemosView, "f10": MatrixView}
PASTE = ("12+34+" * 20_000)[:100_000]  # 100 kB on one line
ROUNDS = 4  # rounds of opening and closing the views after the first (a leak shows by 2x its bound in 4)


def _a_run_to_watch(app) -> None:
    """A run in progress (no snapshot kept yet), so that F9 has something to show without replaying."""
    app.training_jobs.progress["run:1"] = RunProgress("run:1", "2d 4 #1", 0, 30, ("two_digit",))


def _tracked(monkeypatch, *kinds: type) -> dict[type, weakref.WeakSet]:
    """From now on, each object of `kinds` made (subclasses too) is in its kind's weak set while it is alive."""
    alive = {kind: weakref.WeakSet() for kind in kinds}
    for kind in kinds:

        def tracking(self, *args, init=kind.__init__, kept=alive[kind], **kwargs):
            init(self, *args, **kwargs)
            kept.add(self)

        monkeypatch.setattr(kind, "__init__", tracking)
    return alive


async def _live(pilot, alive: dict[type, weakref.WeakSet]) -> tuple[int, ...]:
    """How many objects of each tracked kind are alive once the app has settled: no view's worker running and the
    same counts for a second (a closed screen's last timers and tasks let go of it within a second or two)."""
    app, counts = pilot.app, []
    busy = lambda: any(w.group != "engine" and w.is_running for w in app.workers)  # noqa: E731
    while len(counts) < 5 or len(set(counts[-5:])) > 1 or busy():
        await pilot.pause(0.25)
        gc.collect()
        counts.append(tuple(len(kept) for kept in alive.values()))
        assert len(counts) < 80, f"the counts of {[kind.__name__ for kind in alive]} never settled: {counts}"
    return counts[-1]


def _deepest_stack(app, monkeypatch) -> list[int]:
    """A list whose last item is the deepest the screen stack has been after any screen was opened."""
    deepest = [len(app.screen_stack)]

    def measured(open_screen):
        def opened(*args, **kwargs):
            result = open_screen(*args, **kwargs)
            deepest.append(max(deepest[-1], len(app.screen_stack)))
            return result

        return opened

    monkeypatch.setattr(app, "push_screen", measured(app.push_screen))
    monkeypatch.setattr(app, "switch_screen", measured(app.switch_screen))
    return deepest


def _keys(app, *keys: str) -> None:
    """Post `keys` to the app at once, as the terminal driver posts what it reads."""
    for key in keys:
        app.post_message(events.Key(key, None))


async def test_view_keys_pressed_round_after_round_open_one_view_at_a_time_and_escape_returns_to_the_main_screen(
    monkeypatch,
):
    """F9, Shift+F2, F10 alternated three rounds (as fast as a terminal sends them): each key shows its view in
    place of the last, the stack never holds more than the main screen and one view, and one Escape gets back
    to the sum box. (60 rounds stacked 182 screens, 218 -> 459 MB; a stacking key adds a screen per key, so round
    one shows it and rounds two and three, each opened over a view, show a view key replacing an open view.)"""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        _a_run_to_watch(app)
        main = app.screen
        deepest = _deepest_stack(app, monkeypatch)
        for _ in range(3):
            _keys(app, *VIEWS)
            await wait_for(pilot, lambda: isinstance(app.screen, MatrixView), timeout=10, what="the round's last view")
            assert len(app.screen_stack) == 2
        assert deepest[-1] == 2
        for key, view in VIEWS.items():
            await pilot.press(key)
            assert isinstance(app.screen, view) and len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is main and app.focused.id == "sum"
        assert not [n.message for n in app._notifications if n.severity == "error"]


async def test_help_and_prompts_replace_each_other_over_a_view_and_a_key_brings_back_its_open_screen(monkeypatch):
    """F1, Ctrl+S and Ctrl+O over a view replace one another (at most main, view, one modal); a view's key inside
    a modal over that view brings the view back; F1 on the help closes it; Escapes unwind to the main screen.
    Three rounds: a stacking key shows in the first, and the second and third start over a view and a modal."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        main, pace = app.screen, app.playground.pace
        deepest = _deepest_stack(app, monkeypatch)
        for _ in range(3):
            _keys(app, "f10", "f1", "ctrl+s", "ctrl+o", "f14", "ctrl+s", "f8")
            await wait_for(pilot, lambda pace=pace: app.playground.pace != pace, timeout=10, what="the keys")
            pace = app.playground.pace
            assert [type(s) for s in app.screen_stack[1:]] == [DemosView, SavePrompt]
        assert deepest[-1] == 3
        await pilot.press("ctrl+o")
        assert [type(s) for s in app.screen_stack[1:]] == [DemosView, LoadPrompt]
        await pilot.press("f14")  # the view under the prompt comes back
        assert [type(s) for s in app.screen_stack[1:]] == [DemosView]
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, DemosView)
        await pilot.press("ctrl+s", "escape", "escape")
        await pilot.pause()
        assert app.screen is main and app.focused.id == "sum"


async def test_closed_views_let_go_of_their_widgets(monkeypatch):
    """Opening and closing the views four more times leaves about as many footer keys and plots alive as one
    round (Textual's Footer kept every key it drew; textual-plotext kept every plot subscribed to the theme)."""
    from textual.widgets._footer import FooterKey

    alive = _tracked(monkeypatch, FooterKey, PlotextPlot)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        _a_run_to_watch(app)
        _keys(app, *VIEWS, "escape")
        keys, plots = await _live(pilot, alive)
        for _ in range(ROUNDS):
            _keys(app, *VIEWS, "escape")
            await pilot.pause()
        assert len(app.screen_stack) == 1
        # a closed view or two may linger (their last tasks), never one per round: each leak alone (the other
        # fixed) left 72 more keys (65 -> 137) or 8 more plots (4 -> 12) after these four rounds
        after_keys, after_plots = await _live(pilot, alive)
        assert after_keys <= keys + 20 and after_plots <= plots + 4, (keys, after_keys, plots, after_plots)


async def test_a_100_kB_paste_is_cut_to_the_sum_box_limit_and_said_inline():
    """A bracketed paste of 100 kB into the sum box keeps its first MAX_SUM characters, and the line under the box
    says it was cut and how much was left out (Input alone refused the whole paste)."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        box = app.query_one("#sum", Input)
        app.post_message(events.Paste(PASTE))
        await wait_for(pilot, lambda: box.value, timeout=5, what="the paste")
        assert box.value == PASTE[:MAX_SUM]
        message = app.playground.query_one("#sum-message")
        await wait_for(pilot, lambda: "cut" in str(message.render()), timeout=5, what="the message")
        assert f"{len(PASTE) - MAX_SUM:,} left out" in str(message.render()) and message.has_class("error")


async def test_a_100_kB_paste_into_a_path_prompt_is_cut_to_path_max_and_said_inline():
    """A 100 kB paste into the Load prompt keeps PATH_MAX characters and says so under the box."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        prompt = app.screen
        app.post_message(events.Paste(PASTE))
        await wait_for(pilot, lambda: "cut" in prompt.message, timeout=5, what="the message")
        assert prompt.query_one("#path", Input).value == PASTE[:PATH_MAX]
        assert f"{len(PASTE) - PATH_MAX:,} characters left out" in prompt.message


async def test_twenty_thousand_keys_past_the_limit_are_dropped_before_routing_without_a_bell(monkeypatch):
    """Keys typed into a full sum box (a paste typed as keys) never reach it: the app drops them before routing,
    rings no bell, posts one Overflow and says it under the box; a binding after the flood still works."""
    bells: list[int] = []
    app = fake_app()
    monkeypatch.setattr(app, "bell", lambda: bells.append(1))
    seen: list = []  # every message any part of the app handled
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        box = app.query_one("#sum", Input)
        pace = app.playground.pace
        start = time.perf_counter()
        _keys(app, *PASTE[:20_000])
        app.post_message(events.Key("f8", None))  # a binding after the flood
        await wait_for(pilot, lambda: app.playground.pace != pace, timeout=60, what="the keys")
        print(f"20,000 keys in {time.perf_counter() - start:.2f} s")
        assert box.value == PASTE[:MAX_SUM] and not bells
        routed = {id(m) for m in seen if isinstance(m, events.Key) and m.is_forwarded}
        assert len(routed) <= MAX_SUM + 1  # the characters that fit (and the one that found the box full)
        assert len({id(m) for m in seen if isinstance(m, BoundedInput.Overflow)}) == 1  # seen as it bubbles
        assert f"at most {MAX_SUM} characters" in str(app.playground.query_one("#sum-message").render())


async def test_every_text_box_of_the_app_is_bounded():
    """Every text box on the main screen (its folded sections opened) and in the path prompts is a BoundedInput with a
    max_length."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await unfold(pilot, "more", "advanced")
        boxes = list(app.screen.query(Input))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        boxes += list(app.screen.query(Input))
        assert len(boxes) > 10
        for box in boxes:
            assert isinstance(box, BoundedInput) and 0 < box.max_length <= PATH_MAX, box.id


def test_no_priority_binding_is_a_printable_key():
    """The app drops keys a full box refuses before checking bindings: that is safe only while no priority
    binding is a printable character."""
    from breadth.tui.app import BreadthApp

    for binding in BreadthApp.BINDINGS:
        for key in binding.key.split(","):
            assert len(key) > 1 and not (binding.priority and key.isprintable() and len(key) == 1), key


class HeldPlays(FakeEngine):
    """A fake engine that keeps Probe commands until `release()`: their answers come when the test says."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[p.Probe] | None = []

    def send(self, command) -> bool:
        if isinstance(command, p.Probe) and self.held is not None:
            self.sent.append(command)
            self.held.append(command)
            return True
        return super().send(command)

    def release(self) -> None:
        held, self.held = self.held or [], None
        for command in held:
            super().send(command)


async def test_a_procedure_view_closed_while_its_probes_play_drops_them_without_an_error(monkeypatch):
    """F9 replays a probe per family; Escape before they answer: their characters and verdicts, arriving for
    a view no longer open, are dropped (no error line), and the playground shows none of them."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    app = BreadthApp(engine_factory=HeldPlays)
    async with app.run_test(size=SIZE) as pilot:
        app.train_panel.query_one("#steps", Input).value = "30"
        app.train_panel.set_value("held-out", "2")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.current == "run:1", timeout=20, what="the run")
        await pilot.press("f9", "escape")
        assert len(app.screen_stack) == 1 and app.play_router.listeners
        app.supervisor.engine.release()
        await wait_for(pilot, lambda: not app.play_router.listeners, timeout=20, what="the replays to end")
        await pilot.pause(0.2)
        assert not [n.message for n in app._notifications if n.severity == "error"]
        assert not app.playground.probes


async def test_moving_the_focus_makes_no_new_footer_keys_and_a_view_still_shows_its_own(monkeypatch):
    """Tab round the main screen's widgets: the footer's keys are not made again while the keys it shows stay the
    same (each focus move recomposed 9 of them); opening a view shows that view's keys, and Escape the main ones."""
    from textual.widgets._footer import FooterKey

    alive = _tracked(monkeypatch, FooterKey)[FooterKey]
    made = []
    monkeypatch.setattr(alive, "add", lambda key, add=alive.add: (made.append(key.key), add(key))[1])
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        main_keys = [key.key for key in app.screen.query(FooterKey)]
        assert "f2" in main_keys and len(made) == len(main_keys)
        for _ in range(6):
            await pilot.press("tab")
        assert len(made) == len(main_keys)
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView), timeout=10, what="the matrix")
        await pilot.pause()
        assert [key.key for key in app.screen.query(FooterKey)] != main_keys
        await pilot.press("escape")
        await pilot.pause()
        assert [key.key for key in app.screen.query(FooterKey)] == main_keys
