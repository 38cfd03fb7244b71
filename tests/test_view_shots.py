"""Every screen picture and app figure docs/*.md and README.md link has a maker: `bench.story_shots` or
`bench.view_shots` (read from their lists of names; no app runs)."""

from __future__ import annotations

import re
from pathlib import Path

from bench import story_shots, view_shots

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\((?:docs/)?([^)\s/]+\.(?:png|svg))\)")  # a Markdown link or image to a picture in docs/
SCREEN = re.compile(r"-\d+x\d+\.(?:png|svg)$")  # a picture of the app's screen at a size: NAME-80x24.png


def linked(path: Path) -> set[str]:
    """The pictures in docs/ that a Markdown file links, by file name."""
    return set(LINK.findall(path.read_text()))


def test_every_linked_app_picture_is_made_by_a_command_and_every_one_made_is_linked():
    """A picture of the app's screen linked anywhere (NAME-WxH), or any picture docs/app.md links, is one that
    story_shots or view_shots writes; and each one view_shots writes is linked and in docs/."""
    docs = sorted((ROOT / "docs").glob("*.md"))
    everywhere = set().union(*(linked(path) for path in [ROOT / "README.md", *docs]))
    app_pictures = {name for name in everywhere if SCREEN.search(name)} | linked(ROOT / "docs" / "app.md")
    made = set(story_shots.picture_names(story_shots.SHOTS.values())) | set(view_shots.pictures())
    assert app_pictures - made == set()
    assert set(view_shots.pictures()) <= everywhere
    assert all((ROOT / "docs" / name).is_file() for name in view_shots.pictures())
