"""The README's ten-fold three-number curve line, and its equal-steps control line, are what the committed result
files hold: held out at the N they name and the matched ceiling, each rounded as printed, with the counts stated."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "results" / "curve-3-folds-10-2seeds-30.json"


def _pct(x: float) -> int:
    return round(100 * x)


def _points(path: Path) -> dict[int, dict]:
    """A committed curve file's points by N (the ceiling is N 0)."""
    return {p["n"]: p for p in json.loads(path.read_text())["points"]}


def _readme_line(start: str) -> str:
    return next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(start))


def test_the_readme_ten_fold_line_matches_the_committed_result():
    """A re-run that changed the curve, or a README edited by hand, fails here until both agree."""
    points, line = _points(RESULT), _readme_line("On ten folds")
    m = re.search(r"\[(\d+) runs\].*: (\d+) to (\d+) \[(\d+)-(\d+)\]%, against (\d+)", line)
    assert m, line
    runs, low, high, lo, hi, ceiling = map(int, m.groups())
    largest = max(points)  # the ceiling is n 0
    assert _pct(points[1]["held"][0]) == low
    assert [_pct(v) for v in points[largest]["held"]] == [high, lo, hi]
    assert _pct(points[0]["held"][0]) == ceiling
    assert {p["splits"] for p in points.values()} == {10}
    assert runs == sum(p["pairs"] for p in points.values())  # split x seed pairs, one run each


CONTROL = ROOT / "results" / "curve-3-controls-largest-5-1seed-30.json"


def test_the_readme_budget_control_line_matches_the_committed_result():
    """The README's equal-steps control (every N at N=32's steps) states N=8's held out with its interval and
    N=32's, as the committed control file holds them, and that every point of it trained for N=32's steps."""
    points, line = _points(CONTROL), _readme_line("Trained for N=32")
    m = re.search(r"N=8 still holds out only (\d+) \[(\d+)-(\d+)\]% to N=32's (\d+)\.", line)
    assert m, line
    low, lo, hi, high = map(int, m.groups())
    assert [_pct(v) for v in points[8]["held"]] == [low, lo, hi]
    assert _pct(points[32]["held"][0]) == high
    assert {p["steps"] for p in points.values()} == {points[32]["steps"]}  # the control: one budget for every N
    assert min(p["train"][0] for n, p in points.items() if n) >= 0.5  # its training environments are learned
