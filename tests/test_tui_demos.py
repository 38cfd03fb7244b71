"""The demonstrations view (Shift+F2): the form's mix's demonstrations, the characters that carry loss marked apart."""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Input, Static
from tui_helpers import fake_app, wait_for

from breadth.core.world.environments.mix import Mix
from breadth.core.world.text.vocab import CHARS
from breadth.tui.screens.demos_view import LOSS_STYLE, DemosView

SIZE = (80, 24)


def _set(app, **inputs: str) -> None:
    """Type values into the training form's inputs, by id."""
    for field_id, value in inputs.items():
        app.train_panel.query_one(f"#{field_id}", Input).value = value


def _content(app, selector: str) -> Text:
    return app.screen.query_one(selector, Static).content


CODE = re.compile(r"\b[as][234]x[12]\b")  # a family's coordinate code: `a2x2`, `s4x1`


def _shown(app) -> tuple[list[str], list[str], str]:
    """The list as a reader takes it: (family labels, episodes, the characters marked with loss), in reading order."""
    text = _content(app, "#demos-lines")
    lines = [line for line in text.plain.splitlines() if ":" not in line]  # family tallies hold ':'
    episodes = [w for line in lines for w in line.split() if "=" in w]  # a label (`3 singles`) never holds '='
    spans = sorted(text.spans, key=lambda s: s.start)
    labels = [text.plain[s.start : s.end].strip() for s in spans if s.style == "bold"]
    marked = "".join(text.plain[s.start : s.end] for s in spans if s.style == LOSS_STYLE)
    return labels, episodes, marked


def _counted(mix: Mix, seed: int) -> tuple[int, int, str]:
    """Characters, characters with loss and those characters, from the training pairs training uses."""
    chars, with_loss = 0, ""
    for problem in mix.demonstrations(seed):
        _, targets = problem.demonstration().training_pair()
        chars += len(targets)
        with_loss += "".join(CHARS[t] for t in targets if t != -1)
    return chars, len(with_loss), with_loss


async def _open(pilot) -> None:
    await pilot.press("f14")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DemosView), what="the demonstrations view")
    await wait_for(pilot, lambda: "reading" not in _content(pilot.app, "#demos-status").plain, what="the lines")
    await pilot.pause()


async def test_ctrl_d_lists_the_forms_mix_and_seed_with_the_model_s_characters_marked():
    """Shift+F2 shows every demonstration of the form's mix and seed, after its family's words (`two-digit`), the
    loss-carrying characters exactly the model's calls and answers; the summary counts them; Shift+F5 names the mix
    and families by code (`a2x2`) and again in words; Escape closes the view.
    """
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        _set(app, **{"count-add_2x2": "5", "count-add_3x1": "4", "seed": "7"})
        await _open(pilot)
        mix = Mix.of(add_2x2=5, add_3x1=4)
        problems = mix.demonstrations(7)
        labels, episodes, marked = _shown(app)
        assert labels == ["two-digit"] * 5 + ["3 singles"] * 4
        assert episodes == [p.demonstration().text for p in problems]
        chars, with_loss, counted = _counted(mix, 7)
        assert marked == counted  # the model's calls and answers, never the prompt or the calculator's results
        first = problems[0]
        call, answer = f"B{first.operands[0]}+{first.operands[1]}|", f"{first.answer}|"
        assert marked.startswith(call + answer)
        status = _content(app, "#demos-status").plain
        assert f"seed 7: 9 demonstrations, {chars:,} characters" in status
        assert f"with loss: {with_loss:,} ({100 * with_loss / chars:.0f}%)" in status
        assert status.startswith("mix 5+4, seed 7")
        assert "per environment: two-digit" in status and "· 3 singles" in status
        lines = _content(app, "#demos-lines").plain
        assert "3 singles: 4 demonstrations" in lines  # at 80 columns the long label does not fit beside the counts
        assert not CODE.search(status + lines)
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _shown(app)[0] == ["a2x2"] * 5 + ["a3x1"] * 4
        coded = _content(app, "#demos-status").plain
        assert coded.startswith("a2x2 5+a3x1 4, seed 7") and "per environment: a2x2" in coded and "· a3x1" in coded
        assert "a3x1: 4 demonstrations" in _content(app, "#demos-lines").plain
        await pilot.press("shift+f5")
        await pilot.pause()
        assert _content(app, "#demos-status").plain == status and _content(app, "#demos-lines").plain == lines
        assert (
            "with loss" in _content(app, "#demos-legend").plain and "calculator" in _content(app, "#demos-legend").plain
        )
        await pilot.press("escape")
        assert not isinstance(app.screen, DemosView)
        assert app.return_code is None


async def test_counts_the_form_refuses_show_one_inline_line():
    """A count over the family's pool shows the form's one-line reason in the view, no list, and the app runs on."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        _set(app, **{"count-add_2x2": "500"})
        await _open(pilot)
        status = _content(app, "#demos-status").plain
        assert status == "no demonstrations to show: add 2 10-99: a count from 0 to 200, not 500"
        assert not app.screen.lines and not _content(app, "#demos-lines").plain
        await pilot.press("escape")
        assert not isinstance(app.screen, DemosView) and app.return_code is None


async def test_a_long_mix_scrolls_and_a_wider_terminal_holds_more_columns():
    """280 demonstrations scroll to the last one at 80x24; at 120x40 they take fewer rows (more columns)."""
    rows = {}
    for size in (SIZE, (120, 40)):
        app = fake_app()
        async with app.run_test(size=size) as pilot:
            _set(app, **{"count-add_2x2": "140", "count-add_3x1": "140"})
            await _open(pilot)
            labels, episodes, _ = _shown(app)
            assert len(episodes) == 280 and labels.count("3 singles") == 140
            rows[size] = len(_content(app, "#demos-lines").plain.splitlines())
            box = app.screen.query_one("#demos-list")
            assert box.max_scroll_y > 0
            await pilot.press("end")
            await pilot.pause()
            assert box.scroll_y == box.max_scroll_y
    assert rows[(120, 40)] < rows[SIZE]


def test_snapshot_demos(snap_compare):
    """At 80x24 the shipped 35+35 mix: summary, legend, two columns of demonstrations with the model's characters
    underlined in cyan, the prompt dim, the calculator's results dim yellow.
    """

    async def run_before(pilot) -> None:
        for box in pilot.app.query(Input):
            box.cursor_blink = False
        await _open(pilot)

    assert snap_compare(fake_app(), terminal_size=SIZE, run_before=run_before)
