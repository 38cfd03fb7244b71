"""The README as a newcomer meets it: two commands that say what they are doing and how long set-up takes, a first
screen in plain words, the colours the app really renders, and a length that reads in one sitting."""

from __future__ import annotations

import colorsys
import re
from pathlib import Path

from rich.style import Style

from breadth.core.storage.presets import PRESETS
from breadth.core.world.environments.registry import env_id, environments
from breadth.core.world.text.transcript import Role
from breadth.tui.app import BreadthApp

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FIRST_SCREEN = 25  # lines: what a browser or a terminal shows before any scrolling
FENCE = re.compile(r"^```.*?\n(.*?)^```", re.M | re.S)
HUES = ((15, "red"), (45, "orange"), (70, "yellow"), (165, "green"), (200, "cyan"), (255, "blue"), (345, "magenta"))
COLOURED = re.compile(rf"\b(in|on) ({'|'.join(sorted({name for _, name in HUES}))})\b")


def commands() -> list[str]:
    """The README's first code block, one command a line."""
    return FENCE.search(README)[1].splitlines()


def test_the_readme_is_under_200_lines():
    """The README reads in one sitting: under 200 lines, the detail in docs/."""
    assert len(README.splitlines()) < 200


def test_the_readme_starts_with_two_commands_ci_runs_the_second_verbatim():
    """Right under the title, two commands: one opens the app after all set-up, one runs the tests, and .ci/run's
    last line is the second, character for character."""
    assert [line for line in README.splitlines()[:3] if line] == ["# breadth", "```sh"]  # nothing before them
    app, tests = commands()
    assert app.startswith("python3 -m venv .venv && ") and app.endswith(" && .venv/bin/breadth-tui")
    assert tests.startswith("python3 -m venv .venv && ") and re.search(
        r" && \.venv/bin/python -m pytest -q -n \d$", tests
    )
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert ci[-1] == tests


def test_set_up_shows_that_it_is_working_and_the_readme_says_how_long_it_takes():
    """Neither command installs quietly (pip names each package as it goes, no minutes of silence), and the lines
    after them give the set-up's measured time in minutes."""
    for command in commands():
        pip = command.split(" && ")[1]
        assert pip.startswith(".venv/bin/pip install ") and "-q" not in pip.split()
    after = README[README.index("```", README.index("```") + 3) :].split("\n\n")[1]
    assert re.search(r"set-up takes [^.]*\d+ min", after), after


def codes() -> set[str]:
    """Every name a person types for an environment, its gym id, and every shipped model's name."""
    every = environments()
    return {name for f in every for name in f.names()} | {env_id(f) for f in every} | set(PRESETS)


def test_the_first_screen_is_plain_words_before_codes_citations_and_the_dropout_search():
    """The first 25 lines say what breadth is without a coordinate code (`a2x2`), an environment or model name
    (`two_digit`, `mix_35_35`), the plate's citations or the recipe search: those come after."""
    screen = "\n".join(README.splitlines()[:FIRST_SCREEN])
    found = {c for c in codes() if re.search(rf"(?<![\w/-]){re.escape(c)}(?![\w-])", screen, re.I)}
    found |= set(re.findall(r"\b[as]\d+x\d+\b", screen))  # a coordinate code of a family not registered
    assert found == set()
    for later in (r"arXiv", r"Cobbe", r"Kimi", r"dropout", r"\bsearch"):  # the plate's citations, the recipe search
        assert not re.search(later, screen, re.I), later
    assert "**breadth** is" in screen


def rendered(colour) -> str:
    """The name of a colour as the app draws it: Textual maps the 16 ANSI colours through its theme."""
    r, g, b = colour.get_truecolor(BreadthApp(start_engine=False).ansi_theme)
    hue = 360 * colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)[0]
    return next((name for limit, name in HUES if hue < limit), "red")


def test_the_readme_and_the_app_page_name_the_colours_the_app_renders():
    """The model's characters and the calculator's replies are described in the colours the screen shows them in
    (the calculator's `yellow` renders orange in Textual's theme, so the pages say orange)."""
    model = rendered(Style.parse(Role.ACTION.style).color)
    calculator = rendered(Style.parse(Role.ENVIRONMENT.style).bgcolor)
    for page in (README, (ROOT / "docs" / "app.md").read_text()):
        said = {"model": set(), "calculator": set()}
        for match in COLOURED.finditer(page):
            clause = re.split(r"[,.;:(]", page[max(0, match.start() - 80) : match.start()])[-1]
            for who, preposition in (("model", "in"), ("calculator", "on")):
                if who in clause and match[1] == preposition:
                    said[who].add(match[2])
        assert said == {"model": {model}, "calculator": {calculator}}
