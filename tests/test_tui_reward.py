"""A reward run in the app: the reward (mean and per environment) streams where the loss streams with the numbers a
person needs beside it, Shift+F1 shows the latest sampled group in its writers' colours, and Stop ends the run."""

from __future__ import annotations

import time

import pytest
from textual.widgets import Input, Select, Static
from tui_helpers import fake_app, wait_for

from breadth.core.world.episodes.scores import SampledEpisode, SampledGroup
from breadth.core.world.text.transcript import Role, Segment
from breadth.tui.app import BreadthApp
from breadth.tui.screens.rollouts_view import NO_RUN, Feed, RolloutsView, group_lines
from breadth.tui.widgets.loss_plot import REDRAW_HZ, LossPlot
from breadth.tui.widgets.reward_plot import RewardPlot, reward_line


def _form(app, recipe: str, steps: int, **counts: int) -> None:
    panel = app.train_panel
    panel.query_one("#recipe", Select).value = recipe
    for name, count in counts.items():
        panel.set_value(f"count-{name}", str(count))


def _line(app) -> str:
    return str(app.train_panel.query_one("#reward-line", Static).render())


async def _set_steps(pilot, app, steps: int) -> None:
    await pilot.pause()  # the recipe's defaults fill the inputs first (Select.Changed)
    app.train_panel.query_one("#steps", Input).value = str(steps)


async def test_a_reward_run_streams_mean_and_per_environment_reward_and_its_numbers():
    """On a mix of two environments the reward plot replaces the loss plot: the mean and one line per environment
    fill step by step, redrawn on the 4 Hz timer (not per step); the line under it says pass@8 before training was
    0% and that reward has nothing to reinforce, then reward beside the expected calls, no-call share and chars, and
    the colour key in words (`two-digit`; Shift+F5: `a2x2`, and again the words)."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        _form(app, "reward", 40, add_2x2=5, add_3x1=5)
        await _set_steps(pilot, app, 40)
        await pilot.press("f2")
        plot = app.train_panel.query_one(RewardPlot)
        start, drawn = time.monotonic(), plot.draws
        await wait_for(pilot, lambda: app.training is None, what="the scripted run")
        seconds = time.monotonic() - start
        assert plot.display and not app.train_panel.query_one(LossPlot).display
        assert [s for s, _ in plot.mean] == list(range(1, 41)) and plot.mean[-1][1] == 1.0
        assert list(plot.environments) == ["add_2x2", "add_3x1"]
        assert all(len(v) == 40 for v in plot.environments.values())
        assert 1 <= plot.draws - drawn <= seconds * REDRAW_HZ + 2  # 40 steps, a handful of draws
        line = _line(app).splitlines()  # the panel is 46 columns wide: the short words, one row each
        assert line[0] == "pass@8 0% before: nothing to learn" and line[1] == "reward 1.00 · expected 0.90"
        assert line[2].startswith("no call 0% · ") and line[2].endswith(" chars/episode")
        assert line[3] == "━ mean ━ two-digit ━ 3 singles"
        await pilot.press("shift+f5")  # the key by code, and again in words
        await pilot.pause()
        assert _line(app).splitlines()[3] == "━ mean ━ a2x2 ━ a3x1"
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _line(app).splitlines()[3] == "━ mean ━ two-digit ━ 3 singles"
        assert "reward 1.00" in app.train_panel.status or "done" in app.train_panel.status


async def test_a_demonstrations_run_still_plots_its_loss_and_shows_no_reward_line():
    """After a reward run, a demonstrations run brings the loss plot (log scale) back and hides the reward line."""
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        _form(app, "reward", 5, add_3x1=5)
        await _set_steps(pilot, app, 5)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.current == "run:1" and app.training is None, what="the reward run")
        _form(app, "finetune", 5)
        await _set_steps(pilot, app, 5)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.current == "run:2" and app.training is None, what="the demonstrations run")
        loss = app.train_panel.query_one(LossPlot)
        assert loss.display and len(loss.live) == 5
        assert not app.train_panel.query_one(RewardPlot).display
        assert not app.train_panel.query_one("#reward-line", Static).display


async def test_the_rollouts_view_shows_the_latest_group_with_rewards_and_says_when_no_run_goes():
    """Shift+F1 with no reward run says so in one line; during one it shows the run and the prompt's family in words
    (`3 singles 5 #1`; Shift+F5: `a3x1 5 #1`, and again the words) and each sampled episode with its reward and
    verdict, refreshed as groups arrive; Stop (F3) ends the run and the view says it ended."""
    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f13")
        assert isinstance(app.screen, RolloutsView)
        assert str(app.screen.query_one("#rollouts-status", Static).render()) == NO_RUN
        await pilot.press("escape")
        _form(app, "reward", 200, add_2x2=0, add_3x1=5)
        await _set_steps(pilot, app, 200)  # the scripted group's first correct episode comes at step 50
        await pilot.press("f2")
        await pilot.press("f13")
        view = app.screen
        assert isinstance(view, RolloutsView)

        def lines() -> str:
            return str(view.query_one("#rollouts-lines", Static).render())

        await wait_for(
            pilot, lambda: "✓" in lines(), what="a group with a correct episode"
        )  # the scripted reward rises
        status = str(view.query_one("#rollouts-status", Static).render())
        assert status.startswith("rollouts 3 singles 5 #1 · step ") and "group reward" in status
        numbers = str(view.query_one("#rollouts-numbers", Static).render())  # the full words at 80 columns
        assert numbers.startswith("pass@8 before training 0%: reward has nothing to reinforce\nreward ")
        assert "with the expected calls" in numbers and "chars/episode" in numbers
        shown = lines()
        assert shown.startswith("prompt ") and "(3 singles)" in shown
        await pilot.press("shift+f5")  # the run and the prompt's family by code, and again in words
        await pilot.pause()
        assert str(view.query_one("#rollouts-status", Static).render()).startswith("rollouts a3x1 5 #1 · step ")
        assert "(a3x1)" in lines()
        await pilot.press("shift+f5")
        await pilot.pause()
        assert str(view.query_one("#rollouts-status", Static).render()).startswith("rollouts 3 singles 5 #1 · ")
        assert "(3 singles)" in lines()
        assert " 1 1 ✓= correct  " in shown and " 0 ✗  no call  " in shown  # right by the expected calls; wrong
        before = view.redraws
        await pilot.pause(1.2)
        assert 1 <= view.redraws - before <= 4  # refreshed as groups arrive, at most every 0.5 s
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, timeout=5, what="the stop")
        await wait_for(pilot, lambda: "run ended" in str(view.query_one("#rollouts-status", Static).render()))


def test_an_episode_is_shown_as_text_in_its_writers_colours_never_as_markup():
    """The model's characters are cyan, the calculator's on yellow, as the playground colours them; a transcript
    holding markup or an escape sequence is shown as written (escaped), never obeyed."""
    episode = SampledEpisode(
        (Segment(Role.PROMPT, "3+4="), Segment(Role.ACTION, "B[b]x\x1b[2J|"), Segment(Role.ENVIRONMENT, "7|")),
        0.0,
        "malformed call",
        False,
    )
    text = group_lines(SampledGroup("3+4=", "no_such_family", (episode,), 8))
    assert "[b]x\\x1b[2J" in text.plain and "\x1b" not in text.plain
    styles = {text.plain[s.start : s.end]: str(s.style) for s in text.spans}
    assert styles["B[b]x\\x1b[2J|"] == Role.ACTION.style and styles["7|"] == Role.ENVIRONMENT.style


def test_a_malformed_group_is_one_line_and_the_last_good_group_stays():
    """A group the engine sent in the wrong shape is one line in the view; the group shown before stays."""
    feed = Feed()
    feed.begin("a3x1 5 #1", 10, 2, ["add_3x1"])
    good = SampledGroup(
        "3+4=", "add_2x2", (SampledEpisode((Segment(Role.PROMPT, "3+4="),), 0.0, "unfinished", False),), 2
    )
    feed.sampled(1, good.to_dict())
    feed.sampled(2, {"prompt": "3+4=", "family": "add_2x2", "episodes": [{"segments": [["root", "x"]]}]})
    assert feed.group == good and feed.step == 1 and feed.error.startswith("a sampled episode: no role")


def test_the_line_says_next_to_nothing_when_pass_at_g_is_small_and_nothing_while_measuring():
    """pass@8 of 3% is 'next to nothing to reinforce' (narrow: 'little to learn'), 40% gets no warning; before it is
    measured the line says so."""
    assert "next to nothing to reinforce" in reward_line({"pass": 0.03}, None, 8, ["add_3x1"]).plain
    assert reward_line({"pass": 0.03}, None, 8, ["add_3x1"], width=36).plain == "pass@8 3% before: little to learn"
    assert "reinforce" not in reward_line({"pass": 0.4}, None, 8, ["add_3x1"]).plain
    assert reward_line(None, None, 8, ["add_3x1"]).plain == "measuring pass@8 before training..."


@pytest.mark.slow
async def test_stop_ends_a_real_reward_run_within_the_grace(tmp_path, monkeypatch):
    """With the real engine and the default reward settings (16 prompts x 8 episodes), Stop pressed while the reward
    streams ends the run within the supervisor's grace: the engine itself answers "stopped at step N" (past the
    grace the supervisor kills it and says it did not answer). No wall-clock bound beyond that: one failed at
    1.5 s on a loaded machine with nothing wrong."""
    monkeypatch.setenv("BREADTH_RUNS", str(tmp_path / "runs"))
    app = BreadthApp()
    async with app.run_test(size=(100, 32)) as pilot:
        _form(app, "reward", 2000, add_2x2=0, add_3x1=35)
        await _set_steps(pilot, app, 2000)
        await pilot.press("f2")
        plot = app.train_panel.query_one(RewardPlot)
        await wait_for(pilot, lambda: len(plot.mean) >= 3, timeout=60, what="three reward steps")
        assert _line(app).startswith("pass@8 ") and " before" in _line(app)
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.training is None, timeout=10, what="the stop")
        assert "stopped at step" in app.train_panel.status, app.train_panel.status


async def test_shift_f1_opens_the_rollouts_view_however_the_terminal_names_it():
    """Shift+F1 opens the view whether the terminal's key reaches Textual as f13 or as shift+f1 (as in tmux, where an
    f13-only binding never fired); the help lists the key once, as Shift+F1."""
    from breadth.tui.screens.help import app_bindings, key_lines

    app = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("shift+f1", "f13"):
            await pilot.press(key)
            assert isinstance(app.screen, RolloutsView), key
            await pilot.press("escape")
            assert not isinstance(app.screen, RolloutsView)
    (keys,) = [keys for _, keys, does in key_lines(app_bindings(BreadthApp)) if "sampled" in does]
    assert keys == "Shift+F1"
