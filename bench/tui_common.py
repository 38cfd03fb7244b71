"""What the app benchmark's parts share: its bounds and sizes, its one error, and how numbers are summarised."""

from __future__ import annotations

import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL = 0.010  # seconds between tmux screen captures
FIRST_FRAME_TIMEOUT = 20.0
ENGINE_TIMEOUT = 60.0  # engine start (torch import) and the first loss points
TRAIN_TIMEOUT = 120.0  # a 400-step run, its evaluation and save
KEY_TIMEOUT = 2.0  # one key must be handled within this
STEPS = 400
STOP_RUNS = 5  # how many times Stop is timed
RACE_SUMS = ("3+4+5", "12+34+56", "9-4-3", "7+2+9")  # three-operand sums the races play, in turn
RACE_RUNS = 8  # how many four-model races are timed at the instant pace
RACE_TIMEOUT = 10.0  # one race must finish within this
RACE_LANES = 4  # the three shipped models and the one just trained
SHOWN = ("playground", "held-out scores")  # both on screen: the app has drawn its first frame


class BenchError(Exception):
    """A measurement could not be taken; the message is one line for the user."""


# processes


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile `q` (0-100) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def ms(seconds: float) -> str:
    """Seconds as milliseconds, for the tables."""
    return f"{seconds * 1000:.1f}"
