"""A setting's limits read as people write them: whole numbers with thousands separators, floats as before."""

from __future__ import annotations

import pytest

from breadth.core.world.settings import MAX_SEED, FinetuneSettings, SettingsError


def test_whole_number_limits_are_printed_as_integers_with_separators():
    """A seed above 2**32 - 1 names the limit 4,294,967,295, not 4.29497e+09."""
    with pytest.raises(SettingsError) as refused:
        FinetuneSettings(seed=MAX_SEED + 1)
    assert str(refused.value) == f"seed must be from 0 to 4,294,967,295, not {MAX_SEED + 1}"


def test_float_limits_are_printed_as_before():
    """A learning rate of 0 names its float limits as %g: above 0 to 1."""
    with pytest.raises(SettingsError, match=r"^lr must be above 0 to 1, not 0\.0$"):
        FinetuneSettings(lr=0.0)
