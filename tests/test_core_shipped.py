"""The shipped plate models show the plate's lesson: each family's procedure, and only it, is learned from it."""

from __future__ import annotations

import pytest

from core.learning import checkpoint
from core.learning.evaluate import evaluate
from core.world.presets import PRESETS


@pytest.fixture(scope="module")
def shipped(one_thread):
    """Held-out episodes (seed 0, 30 per family) of each shipped model, by preset name."""
    out = {}
    for name, preset in PRESETS.items():
        model, header = checkpoint.load(preset.shipped)
        assert header.run.seed == 0 and header.run.mix == preset.mix.spec()
        out[name] = evaluate(model, 0, 30)
    return out


def _calls(scored, family: str) -> list[int]:
    """Calls made in each episode of `family`."""
    return [len(s.episode.calls) for s in scored if s.problem.family == family]


def test_two_digit_model_makes_at_most_one_call_on_three_digit_sums(shipped):
    """A two-digit-only model never makes the second call a three-digit sum needs, so it solves none."""
    scores, scored = shipped["two_digit_70"]
    assert max(_calls(scored, "three_digit")) <= 1
    assert scores["three_digit"].solved == 0
    assert scores["two_digit"].solved >= 24  # it did learn its own family (29/30 when shipped)


def test_three_digit_model_splits_two_digit_sums(shipped):
    """A three-digit-only model never makes the single call a two-digit sum needs, so it solves none."""
    scores, scored = shipped["three_digit_70"]
    assert 1 not in _calls(scored, "two_digit")
    assert scores["two_digit"].solved == 0
    assert scores["three_digit"].solved >= 24  # 28/30 when shipped


def test_mix_model_learns_both_procedures(shipped):
    """The 35 + 35 model makes one call on two-digit sums and two on three-digit sums, and solves some of each."""
    scores, scored = shipped["mix_35_35"]
    assert set(_calls(scored, "two_digit")) == {1}
    assert set(_calls(scored, "three_digit")) == {2}
    assert scores["two_digit"].solved > 0 and scores["three_digit"].solved > 0
