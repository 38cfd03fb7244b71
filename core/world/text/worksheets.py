"""Pre-training text: single-digit addition worksheets, lines such as `3+4=7`, and their check."""

from __future__ import annotations

import random

from breadth.core.world.text.vocab import BOS


def worksheet_line(a: int, b: int) -> str:
    """One worksheet line with its newline, e.g. `3+4=7\\n`."""
    return f"{a}+{b}={a + b}{BOS}"


def worksheet_stream(seed: int, lines: int) -> str:
    """`lines` random worksheet lines (a, b in 0..9), starting after a newline."""
    rng = random.Random(f"worksheets/{seed}")
    return BOS + "".join(worksheet_line(rng.randrange(10), rng.randrange(10)) for _ in range(lines))


def worksheet_sums() -> list[tuple[int, int]]:
    """All 100 single-digit sums, the pre-training check."""
    return [(a, b) for a in range(10) for b in range(10)]
