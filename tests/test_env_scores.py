"""Scoring many environments: pooled by dimension (each environment counts once), drawn whole at 80 columns,
decoded fast with exactly the old path's episodes, and `breadth eval --envs | --where | --draw` on the command line."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from breadth.core.cli.env_scores import summary_view
from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.dimensions import Column, group, rate, summarise
from breadth.core.world.environments.registry import by_name, draw, env_id, environments
from breadth.core.world.episodes.scores import HeldOutScore

WIDTH = 80


def score(name: str, solved: int, total: int = 30) -> HeldOutScore:
    """A made-up score of one environment."""
    return HeldOutScore(name, solved, total)


def test_a_rate_pools_environments_each_counted_once():
    """The mean is over environments (not sums); the pooled counts are kept beside it; empty scores are left out."""
    r = rate([score("add_2x2", 30, 30), score("add_3x1", 0, 10), score("add_2x1", 0, 0)])
    assert (r.mean, r.solved, r.total, r.environments) == (0.5, 30, 40, 2)
    assert r.percent() == "50%" and rate([]).percent() == "-"


def test_group_pools_by_the_values_of_any_dimensions():
    """Scores by environment name pool by operand count, by digits per position and by operations as signs."""
    scores = {"add_2x2": score("add_2x2", 30), "add_2x1": score("add_2x1", 0), "2a1s2": score("2a1s2", 15)}
    by_operands = group(scores, ("operands",))
    assert by_operands[("2",)].mean == 0.5 and by_operands[("3",)].mean == 0.5
    assert set(group(scores, ("digits", "op"))) == {("2.2", "+"), ("1.1", "+"), ("2.1.2", "+-")}
    with pytest.raises(ValueError, match="no dimension 'colour'"):
        group(scores, ("colour",))


def test_summarise_makes_a_table_per_operand_count_with_its_means():
    """Rows are digit layouts, columns operation layouts per form (the plate's form first, one operation first),
    cells absent where no environment was scored; the row, column and table means pool their environments."""
    names = ["add_2x2", "add_2x1", "sub_2x2", "2a2_postfix", "2a1s2", "2s1a2", "add_3x1"]
    scores = {n: score(n, 3 * i) for i, n in enumerate(names)}
    summary = summarise(scores)
    two, three = summary.tables
    assert (two.operands, three.operands) == (2, 3)
    assert two.rows == ("1.1", "2.2")
    assert [c.header for c in two.columns] == ["+", "-", "+ p"]
    assert [c.header for c in three.columns] == ["+", "+-", "-+"]
    assert (("1.1", Column("-", "infix")) in two.cells) is False
    assert two.cells[("2.2", Column("-", "infix"))].mean == pytest.approx(0.2)
    assert two.row_means["2.2"].environments == 3 and two.column_means[Column("+", "infix")].environments == 2
    assert summary.overall.environments == 7 and summary.overall.solved == sum(range(0, 21, 3))
    assert list(summary.by["op"]) == ["+", "-", "+-", "-+"]  # shortest first
    assert list(summary.by["form"]) == ["infix", "postfix"]  # the plate's form first


def _printed(renderable) -> str:
    console = Console(width=WIDTH, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the console
    console.print(renderable)
    return console.export_text()


def test_every_environment_summarised_reads_whole_at_80_columns():
    """All of the registry, rates from 0 to 100%: no cell cut to `…`, no line past 80 columns, every table drawn."""
    scores = {f.name: score(f.name, i % 31) for i, f in enumerate(environments())}
    text = _printed(summary_view(summarise(scores), "two_digit_70.safetensors: test splits of seed 0, 30 sums each"))
    assert "…" not in text, text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= WIDTH, text
    for n in (2, 3, 4):
        assert f"{n} numbers:" in text
    assert "100%" in text and "2.1.2.2" in text and "++-" in text and "- p" in text
    assert f"overall: {100 * summarise(scores).overall.mean:.0f}% mean over {len(environments())} environments" in text


@pytest.fixture(scope="module", params=["mix_35_35", "two_digit_70"])
def model(request):
    """A shipped model: one whose episodes mostly end early, one with many running to the context's end."""
    from breadth.core.learning import checkpoint
    from breadth.core.storage.presets import checkpoint_path

    return checkpoint.load(checkpoint_path(request.param))[0]


def test_fast_scoring_plays_exactly_as_evaluate(model):
    """The fast path (prompts in one step, finished rows dropped, sorted by length, small batches) gives the same
    episodes, verdicts and scores, in the same order, as `evaluate` on a seeded draw of environments."""
    from breadth.core.learning.evaluate import evaluate, evaluate_environments

    names = [f.name for f in draw(16, 4)]
    slow_scores, slow = evaluate(model, 0, 12, environments=names)
    fast_scores, fast = evaluate_environments(model, 0, 12, names, batch=37)
    assert [(s.problem, s.episode.transcript, s.verdict) for s in fast] == [
        (s.problem, s.episode.transcript, s.verdict) for s in slow
    ]
    assert fast_scores == slow_scores


def test_scoring_a_validation_split_plays_its_sums_never_the_test_ones(model):
    """`split="validation"` plays each environment's validation sums (what a pool or a recipe is chosen on), none of
    its test sums; a split that is neither is one line."""
    from breadth.core.learning.evaluate import evaluate_environments

    names = [f.name for f in draw(3, 7)] + ["add_2x1"]  # add_2x1's validation split holds only 12 sums
    _, played = evaluate_environments(model, 0, 20, names, split="validation")
    wanted = [p for n in names for p in by_name(n).validation(0, 20)]
    assert [s.problem for s in played] == wanted and len(wanted) == 3 * 20 + 12
    assert not {(p.environment, p.operands) for p in wanted} & {
        (p.environment, p.operands) for n in names for p in by_name(n).held_out(0, 200)
    }
    with pytest.raises(ValueError, match="a split is test or validation, not 'train'"):
        evaluate_environments(model, 0, 20, names, split="train")


def test_eval_envs_prints_by_dimension_and_keeps_every_score_in_json(tmp_path, capsys, monkeypatch):
    """`breadth eval two_digit_70 --envs ID,ID --json`: tables by dimension, each environment's score in the JSON."""
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    out = tmp_path / "scores.json"
    ids = "breadth/add-2x2-v1,breadth/2a1s2-v1,breadth/1a1a1-postfix-v1"
    assert main(["eval", "two_digit_70", "--envs", ids, "--held-out", "5", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 numbers: 1 environment" in text and "3 numbers: 2 environments" in text and "…" not in text
    data = json.loads(out.read_text())
    assert list(data["environments"]) == ids.split(",")
    assert data["environments"]["breadth/add-2x2-v1"]["total"] == 5
    assert data["summary"]["overall"]["environments"] == 3 and set(data["summary"]["by"]) >= {"form", "op"}


def test_eval_where_and_draw_choose_as_breadth_envs_does(tmp_path, capsys):
    """`--where` and `--draw N --draw-seed S` pick the same environments as `breadth envs --where --draw --seed`."""
    out = tmp_path / "scores.json"
    args = ["--where", "operands=2", "--draw", "3"]
    assert main(["eval", "two_digit_70", *args, "--draw-seed", "5", "--held-out", "2", "--json", str(out)]) == 0
    listed = tmp_path / "envs.json"
    assert main(["envs", *args, "--seed", "5", "--json", str(listed)]) == 0
    capsys.readouterr()
    assert list(json.loads(out.read_text())["environments"]) == [e["id"] for e in json.loads(listed.read_text())]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--envs", "breadth/five-digit-v1"], "no environment breadth/five-digit"),
        (["--envs", "breadth/add-2x2-v0"], "use breadth/add-2x2-v1"),
        (["--where", "op=mul"], "no environment at op=mul"),
        (["--where", "operands"], "--where takes DIMENSION=VALUE"),
        (["--draw", "5000"], "cannot draw 5000 environments"),
        (["--envs", "all", "--figure", "f"], "--figure draws the ten named environments' scores"),
    ],
)
def test_bad_environment_choices_are_one_line(args, says, capsys):
    """An unknown id, a removed version, coordinates with no environment, a draw too large, --figure: one line."""
    assert main(["eval", "two_digit_70", *args]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err


def test_the_benchmark_scores_200_distinct_test_splits():
    """bench/envs_bench.py's workload: 200 (seed, environment) test splits, every environment once on seed 0."""
    from bench.envs_bench import workload

    splits = workload(200)
    pairs = [(seed, name) for seed, names in splits for name in names]
    assert len(pairs) == len(set(pairs)) == 200
    assert sorted(splits[0][1]) == sorted(f.name for f in environments())
    assert env_id(environments()[0]) == "breadth/add-2x2-v1"
