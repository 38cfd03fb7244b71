"""docs/design.md's layout names every product module, each under the folder it lives in: core/, tui/ and bench/
(the benchmarks are not installed, but tests/test_file_sizes.py counts them as product too)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PRODUCT = ("core", "tui", "bench")  # the installed code and the benchmarks (checkpoints/ and results/ hold data)


def _layout() -> dict[str, str]:
    """The layout block's entries: folder (`core/world/episodes/`) -> what its entry says."""
    block = re.search(r"^```\n(.*?)^```", (REPO / "docs" / "design.md").read_text(encoding="utf-8"), re.M | re.S)
    assert block, "docs/design.md opens with its layout in a fenced block"
    entries: dict[str, str] = {}
    folder = None
    for line in block.group(1).splitlines():
        head = re.match(r"^(\S+/)\s+(.*)", line)
        if head:
            folder = head.group(1)
            entries[folder] = head.group(2)
        elif folder is not None:
            entries[folder] += " " + line.strip()
    return entries


def test_the_design_docs_layout_names_every_product_module_under_its_own_folder():
    """Every .py module of core/, tui/ and bench/ (but __init__) is named as a word in its own folder's entry of the
    layout, and every folder holding modules has an entry."""
    entries = _layout()
    missing = []
    for path in sorted(p for top in PRODUCT for p in (REPO / top).rglob("*.py")):
        if path.name == "__init__.py" or ".venv" in path.parts:
            continue
        folder = path.parent.relative_to(REPO).as_posix() + "/"
        said = entries.get(folder)
        if said is None or not re.search(rf"(?<![\w.]){re.escape(path.stem)}(?!\w)", said):
            missing.append(path.relative_to(REPO).as_posix())
    assert missing == [], f"docs/design.md's layout does not name: {', '.join(missing)}"
