"""bench.pool_recipe, the measurement a pool's recipe is chosen by: its decaying learning rate and its refusals."""

from __future__ import annotations

import math

import pytest

from bench import pool_recipe


def test_the_decayed_learning_rate_warms_up_then_falls_to_zero_by_a_cosine():
    """`--decay W`: the rate rises linearly to the recipe's lr over W steps, then follows a cosine down to 0 at the
    last step, never above lr; the run's arithmetic otherwise is the plate's (a constant rate when not asked)."""
    at = pool_recipe.decayed(1e-3, 1000, 100)
    assert at(1) == pytest.approx(1e-5) and at(50) == pytest.approx(5e-4) and at(100) == pytest.approx(1e-3)
    assert at(550) == pytest.approx(5e-4)  # half way through the decay: half the rate
    assert at(1000) == pytest.approx(0.0, abs=1e-12)
    rates = [at(s) for s in range(1, 1001)]
    assert max(rates) == pytest.approx(1e-3) and all(b <= a for a, b in zip(rates[99:], rates[100:], strict=False))
    assert math.isclose(pool_recipe.decayed(1e-3, 10, 0)(1), 1e-3 * 0.5 * (1 + math.cos(math.pi / 10)))  # no warm-up


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--base", "/nonexistent/base.safetensors"], "--base: /nonexistent/base.safetensors: no such checkpoint"),
        (["--decay", "-5"], "--decay takes warm-up steps from 0, not -5"),
        (["--n", "4,4"], "--n"),
        (["--dropout", "2"], "dropout"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2_before_any_run(tmp_path, capsys, flags, says):
    """A base that is not there, a negative warm-up, a repeated N or a recipe outside its range: one line naming it,
    exit 2, and no results file written (nothing was run)."""
    out = tmp_path / "recipe.json"
    assert pool_recipe.main([*flags, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m bench.pool_recipe: ") and says in err[0]
    assert not out.exists()
