"""The transfer matrix by dimension: rows scored on more environments than fit a column each (a breadth curve's) pool
them into own and held-out means by operand count, operation and call form, and `breadth matrix` prints them so at 80
columns; the registered families alone keep a column each."""

from __future__ import annotations

from rich.console import Console

from breadth.core.cli.tables import matrix_table
from breadth.core.results.matrix import columns, stored_rows
from breadth.core.results.matrix_dimensions import DimensionColumn, dimension_columns, per_seed, pooled
from breadth.core.results.report import summarise
from breadth.core.storage.store import StoredRun, run_key
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings

# generated environments, as a breadth curve scores them: two and three numbers, both operations, both forms
CURVE_POOL = (
    "2a1", "1a2", "2s1", "2a1_postfix", "1a2_postfix", "2s1_postfix", "2s2_postfix", "1a1_postfix",
    "1a1a1_postfix", "1a1a1a1_postfix", "2s1a1", "2a2_postfix",
)  # fmt: skip


def _run(mix: str, seed: int, solved: dict[str, int]) -> StoredRun:
    """A stored run of `mix` scored on the environments of `solved` only (100 sums each), as a curve's runs are."""
    settings = FinetuneSettings(seed=seed)
    scores = {n: HeldOutScore(n, k, 100, {"no call": 100 - k} if k < 100 else {}) for n, k in solved.items()}
    run = RunMeta("finetune", settings, mix, seed, 100, scores, (1.0,), 5.0, 0.1)
    return StoredRun(run_key(mix, settings, 100, "b", tuple(solved)), run, "b", "curve")


def _printed(table, width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the console
    console.print(table)
    return console.export_text()


def test_a_row_pools_its_own_and_its_held_out_environments_each_once_by_dimension():
    """Trained on 2s1 (90, 100 over two seeds) and held out from 2a1 (10, 30), 2s1a1 (0, 0) and 2s2_postfix (20, 20):
    own 95, held out 13; 2 numbers 20, 3 numbers 0; + 20, - 20, mixed 0; infix 10, postfix 20; per seed 10 and 17."""
    runs = [
        _run("2s1=30", seed, {"2s1": a, "2a1": b, "2s1a1": 0, "2s2_postfix": 20})
        for seed, a, b in ((0, 90, 10), (1, 100, 30))
    ]
    (row,) = stored_rows(summarise(runs))
    dims = dimension_columns([row])
    assert [c.key for c in dims] == [
        "own",
        "held out",
        "operands=2",
        "operands=3",
        "op=+",
        "op=-",
        "op=mixed",
        "form=infix",
        "form=postfix",
    ]
    means = {c.key: round(100 * pooled(row, c).mean) for c in dims}
    assert means == {
        "own": 95,
        "held out": 13,
        "operands=2": 20,
        "operands=3": 0,
        "op=+": 20,
        "op=-": 20,
        "op=mixed": 0,
        "form=infix": 10,
        "form=postfix": 20,
    }
    held = DimensionColumn("held out")
    assert pooled(row, held).environments == 3 and (pooled(row, held).solved, pooled(row, held).total) == (80, 600)
    assert {s: round(100 * r) for s, r in per_seed(row, held).items()} == {0: 10, 1: 17}
    assert pooled(row, DimensionColumn("operands", "4")) is None  # nothing of this row there


def test_the_matrix_of_many_environments_prints_pooled_by_dimension_whole_at_80_columns():
    """Rows scored on twelve generated environments (and the ten named families' columns beside them) do not fit a
    column each at 80 columns: the table pools them (own with `*`, then held out by numbers, op and form), says so
    in its caption, and no line passes the 80th column nor any cell is cut."""
    solved = {n: 5 * i for i, n in enumerate(CURVE_POOL)}
    runs = [
        _run(f"{trained}=30", seed, {**solved, trained: 100})
        for trained in ("2s1", "2a1_postfix", "1a1a1a1_postfix")
        for seed in (0, 1)
    ]
    rows = stored_rows(summarise(runs))
    assert len(columns(rows)) == len(REGISTERED) + len(CURVE_POOL)
    text = _printed(matrix_table(rows, "held-out success; * trained on", 80))
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("trained on"))
    header = " ".join(lines[at - 1 : at + 1])
    for word in ("held out", "numbers", "op", "form", "own", "all", "mixed", "postfix"):
        assert word in header, word
    assert "12 environments, more than fit a column each" in " ".join(text.split())
    line = next(line for line in lines if line.startswith("2s1 30"))
    cells = line.split()
    held = [v for n, v in solved.items() if n != "2s1"]
    assert cells[2:5] == ["2", "*100", f"{sum(held) / len(held):.0f}"]  # seeds, own, then every held-out one


def test_the_named_families_and_a_few_generated_ones_keep_a_column_each():
    """The ten named families keep a column each at 60 columns too (the matrix as it always was, never pooled), and
    a row scored on one generated environment beside them adds its column while that fits 80 columns."""
    named = [_run("add_2x2=70", 0, {n: 50 for n in REGISTERED})]
    text = _printed(matrix_table(stored_rows(summarise(named)), "m", 60), 60)
    assert "add" in text and "s2x2" in text and "held out" not in text and "own" not in text
    runs = [*named, _run("2a1=30", 0, {"2a1": 100, "add_2x2": 40})]
    text = _printed(matrix_table(stored_rows(summarise(runs)), "m", 80))
    assert "2a1" in text and "held out" not in text and "*100" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
