"""The product's files stay small: no module of core/, tui/ or bench/ is longer than 400 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("core", "tui", "bench")
MOST = 400


def test_no_product_module_is_longer_than_400_lines():
    """Every .py file under core/, tui/ and bench/ has at most 400 lines: a module that grows past it is split by
    what its parts do (the engine's loop apart from its session, the served app's addresses apart from its server)."""
    long = {
        p.relative_to(ROOT).as_posix(): n
        for folder in PRODUCT
        for p in (ROOT / folder).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MOST
    }
    assert long == {}, f"longer than {MOST} lines: {long}"
    assert len(list((ROOT / "core").rglob("*.py"))) > 50  # the folders were found
