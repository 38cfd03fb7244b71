"""bench.pool_recipe, the measurement a pool's recipe is chosen by: its refusals (its schedule is
tests/test_schedule.py's); and every bench's results file, checked before the work and read back to resume with one
line if it is not its own."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from bench import pool_recipe


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--base", "/nonexistent/base.safetensors"], "--base: /nonexistent/base.safetensors: no such checkpoint"),
        (["--decay", "0"], "--decay takes warm-up steps from 1, not 0"),
        (["--n", "4,4"], "--n"),
        (["--dropout", "2"], "dropout"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2_before_any_run(tmp_path, capsys, flags, says):
    """A base that is not there, a warm-up of 0 (a constant rate is asked by leaving --decay out), a repeated N or
    a recipe outside its range: one line naming it, exit 2, and no results file written (nothing was run)."""
    out = tmp_path / "recipe.json"
    assert pool_recipe.main([*flags, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m bench.pool_recipe: ") and says in err[0]
    assert not out.exists()


INSIDE = Path(__file__).parents[1] / "results" / "never-written.json"  # the installed package's shipped results


@pytest.mark.parametrize("bench", ["pool_recipe", "pool_screen"])
def test_a_results_file_that_cannot_be_written_is_refused_before_any_run(monkeypatch, capsys, bench):
    """A `--json` inside the installed package (`results/`, where a 40-minute trial once ended in a traceback that
    lost its runs): one line naming why, exit 2, and no worker started."""
    module = importlib.import_module(f"bench.{bench}")

    def no_workers(*args, **kwargs):
        raise AssertionError("a run started before the results file was checked")

    monkeypatch.setattr(module.cf, "ProcessPoolExecutor", no_workers)
    assert module.main(["--json", str(INSIDE)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside the installed breadth package" in err[0] and str(INSIDE) in err[0]
    assert not INSIDE.exists()


@pytest.mark.parametrize(("text", "says"), [("{not json", "not a JSON file"), ("[1, 2]", "not a JSON file")])
@pytest.mark.parametrize("bench", ["pool_recipe", "pool_screen"])
def test_a_results_file_to_resume_that_is_not_the_benchs_is_one_line_and_left_as_it_was(
    tmp_path, capsys, bench, text, says
):
    """Resuming from a file that is not a JSON object this bench wrote: one line naming it, exit 2, the file kept."""
    module = importlib.import_module(f"bench.{bench}")
    out = tmp_path / "results.json"
    out.write_text(text)
    assert module.main(["--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and str(out) in err[0]
    assert out.read_text() == text


@pytest.mark.parametrize(
    ("bench", "flag"),
    [
        ("finetune_bench", "--json"),
        ("forms_trial", "--json"),
        ("lockstep_bench", "--json"),
        ("lockstep_bench", "--save"),
        ("rl_bench", "--json"),
        ("soak", "--json"),
        ("speed_bench", "--json"),
        ("sweep_bench", "--json"),
        ("tui_bench", "--json"),
    ],
)
def test_every_bench_refuses_its_output_before_measuring(capsys, bench, flag):
    """Each bench that writes its measurements checks where first: a path inside the installed package is one line
    and exit 2 at once (it was written, or raised a traceback, only after the minutes of measuring)."""
    module = importlib.import_module(f"bench.{bench}")
    assert module.main([flag, str(INSIDE)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside the installed breadth package" in err[0] and f": {flag}: " in err[0]
    assert not INSIDE.exists()


def test_the_shipped_pool_base_is_the_base_the_pool_recipe_was_chosen_on():
    """`pool_base` is the 4 x 128 base, and its weights are those every shipped run of the larger base was keyed by
    (the pool recipe's validation, docs/environments.md): a remade or swapped file would not carry their numbers."""
    import json

    from breadth.core.storage.header import read_header, weights_hash
    from breadth.core.storage.paths import POOL_BASE

    shape = read_header(POOL_BASE).model
    assert (shape["n_layer"], shape["n_embd"]) == (4, 128)
    shipped = sorted((Path(__file__).parents[1] / "results").glob("pool-recipe-big-*.json"))
    assert len(shipped) >= 4
    keyed = {json.loads(key)["base"] for path in shipped for key in json.loads(path.read_text())}
    assert keyed == {weights_hash(POOL_BASE)}
