"""Every local link and picture in README.md and docs/*.md names a file that exists, and an anchor a heading there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.M | re.S)  # code blocks: their brackets are not links
CODE = re.compile(r"`[^`\n]*`")  # inline code spans
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)


def prose(text: str) -> str:
    """The page without code blocks and code spans."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings."""
    return {slug(line.lstrip("#")) for line in FENCE.sub("", page.read_text()).splitlines() if line.startswith("#")}


def broken_links(page: Path) -> list[str]:
    """Local links of a page whose file is missing, or whose anchor no heading of that file makes."""
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:: not a local file
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_file():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    return broken


def test_every_local_link_of_the_readme_and_docs_resolves():
    """README.md and each docs/*.md page: every [text](path) and ![alt](path) is a file, every #anchor a heading."""
    assert (ROOT / "README.md").is_file() and len(PAGES) > 1
    broken = {page.name: bad for page in PAGES if (bad := broken_links(page))}
    assert broken == {}
