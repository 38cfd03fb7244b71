"""The README's ten-fold three-number curve line is what the committed result file holds: held out at the smallest
and largest N and the matched ceiling, each rounded as printed, with the split count and run count it states."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "results" / "curve-3-folds-10-2seeds-30.json"


def _pct(x: float) -> int:
    return round(100 * x)


def test_the_readme_ten_fold_line_matches_the_committed_result():
    """A re-run that changed the curve, or a README edited by hand, fails here until both agree."""
    points = {p["n"]: p for p in json.loads(RESULT.read_text())["points"]}
    line = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("On ten folds"))
    m = re.search(r"\[(\d+) runs\].*: (\d+) to (\d+) \[(\d+)-(\d+)\]%, against (\d+)", line)
    assert m, line
    runs, low, high, lo, hi, ceiling = map(int, m.groups())
    largest = max(points)  # the ceiling is n 0
    assert _pct(points[1]["held"][0]) == low
    assert [_pct(v) for v in points[largest]["held"]] == [high, lo, hi]
    assert _pct(points[0]["held"][0]) == ceiling
    assert {p["splits"] for p in points.values()} == {10}
    assert runs == sum(p["pairs"] for p in points.values())  # split x seed pairs, one run each
