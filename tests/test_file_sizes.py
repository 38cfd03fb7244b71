"""The task world's files stay small: none of core/world's modules is longer than 400 lines."""

from __future__ import annotations

from pathlib import Path

WORLD = Path(__file__).resolve().parent.parent / "core" / "world"
MOST = 400


def test_no_module_of_the_task_world_is_longer_than_400_lines():
    """Every .py file under core/world has at most 400 lines (the records of a run and its scores are two modules)."""
    long = {
        p.relative_to(WORLD).as_posix(): n for p in WORLD.rglob("*.py") if (n := len(p.read_text().splitlines())) > MOST
    }
    assert long == {}, f"longer than {MOST} lines: {long}"
