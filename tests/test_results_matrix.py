"""The transfer matrix's breadth curve: success on held-out families against how many environments a row trained on."""

from __future__ import annotations

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.grid import GridError
from breadth.core.results.matrix import TRAINED, MatrixError, breadth_points, matrix, parse_environments
from breadth.core.results.report import summarise
from breadth.core.storage.store import StoredRun, run_key
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _run(mix: str, seed: int, solved: dict[str, int]) -> StoredRun:
    """A run of `mix` on `seed` scoring `solved` of 100 per family (0 for the rest)."""
    settings = FinetuneSettings(seed=seed)
    scores = {name: HeldOutScore(name, solved.get(name, 0), 100) for name in REGISTERED}
    run = RunMeta("finetune", settings, mix, seed, 100, scores, (1.0,), 1.0, 0.1)
    return StoredRun(run_key(mix, settings, 100, "h"), run, "h", "sweep")


def test_the_breadth_curve_gives_each_row_its_environments_and_held_out_success_over_seeds():
    """Per row: environments and demonstrations trained on, each held-out family's mean over seeds with its
    interval, and the mean over the row's own families taken seed by seed."""
    runs = [
        _run("add_2x2=72", 0, {"add_2x2": 100, "add_3x2": 0}),
        _run("add_2x2=72", 1, {"add_2x2": 90, "add_3x2": 2}),
        _run("add_2x2=36,add_3x1=36", 0, {"add_2x2": 60, "add_3x1": 80, "add_3x2": 10}),
        _run("add_2x2=36,add_3x1=36", 1, {"add_2x2": 70, "add_3x1": 100, "add_3x2": 20}),
    ]
    rows = matrix(summarise(runs), ["add_2x2=72", "add_2x2=36,add_3x1=36"])
    points = {(p.mix, p.environment): p for p in breadth_points(rows, ["add_3x2"])}
    one, two = points[("add_2x2=72", "add_3x2")], points[("add_2x2=36,add_3x1=36", "add_3x2")]
    assert (one.environments, one.demonstrations, two.environments, two.demonstrations) == (1, 72, 2, 72)
    assert one.mean == pytest.approx(0.01) and two.mean == pytest.approx(0.15)
    assert two.low < 0.15 < two.high
    own = points[("add_2x2=36,add_3x1=36", TRAINED)]
    assert own.mean == pytest.approx(((0.6 + 0.8) / 2 + (0.7 + 1.0) / 2) / 2)
    with pytest.raises(MatrixError, match="trained on by some row: add_2x2"):
        breadth_points(rows, ["add_2x2"])


def test_curve_families_are_named_by_name_or_short_label():
    """`a3x2,sub_3x2` names two families; an unknown one is one line listing the short labels; one family named
    twice, by either name, is one line too (it was quietly dropped)."""
    assert parse_environments("a3x2, sub_3x2") == ["add_3x2", "sub_3x2"]
    with pytest.raises(GridError, match="--curve: add_3x2 appears twice"):
        parse_environments("a3x2, sub_3x2,add_3x2")
    with pytest.raises(MatrixError, match="no environment 'zz'; name one of a2x2, a3x1"):
        parse_environments("a3x2,zz")


def test_a_curve_over_a_trained_family_is_refused_before_anything_runs(tmp_path, capsys):
    """`breadth matrix --curve` naming a family a row trains on is one line and exit 2, with nothing stored."""
    store = tmp_path / "s.sqlite"
    argv = ["matrix", "--mix", "add_2x2=3", "--curve", "2d", "--seeds", "0", "--store", str(store)]
    assert main(argv) == USAGE_ERROR
    err = capsys.readouterr().err
    assert "not held out: add_2x2" in err and err.count("\n") == 1 and not store.exists()
