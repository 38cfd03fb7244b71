"""The RL report, read from run records: the choice of learning rate and group (`bench.rl_report.choose`) and the
curve under reward (`bench.rl_report.experiment4`)."""

from __future__ import annotations

import json

import pytest

from bench import rl_report
from bench.rl_experiments import CHOOSE_LRS, CHOOSE_SEEDS, KNOWN, TARGET


def test_the_choice_names_the_best_second_grid_cell_and_says_environments(tmp_path, capsys):
    """The second grid's (lr, group 8) with the best mean validation success of the two environments is chosen, and
    the line saying so speaks of environments, the word the app, the CLI and docs/reward.md use (never families)."""
    for i, lr in enumerate(CHOOSE_LRS):
        for s in CHOOSE_SEEDS:
            best = lr == CHOOSE_LRS[1]
            record = {"validation": {TARGET: 0.9 if best else 0.1 * i, KNOWN: 0.8 if best else 0.2}}
            (tmp_path / f"choose2-lr{lr:g}-g8-s{s}.json").write_text(json.dumps(record))
    assert rl_report.choose(tmp_path) == (CHOOSE_LRS[1], 8)
    out = capsys.readouterr().out
    chosen = [line for line in out.splitlines() if line.startswith("chosen:")]
    says = "reward on both environments: the best mean of their validation success"
    assert chosen == [f"chosen: lr {CHOOSE_LRS[1]:g}, group 8 ({says})"]
    assert "famil" not in out


@pytest.mark.parametrize(
    ("prefix", "demos", "on", "row"),
    [
        ("c15", 15, "two", "8 15 79 [62-97] 5 [0-11] 79 [53-100] 6 [0-15] +1 [-4, +7] 1 of 15"),
        ("t30", 30, "three", "32 15 65 [52-78] 42 [31-54] 66 [52-80] 43 [34-52] +1 [-3, +4] 11 of 15"),
    ],
)
def test_the_curve_under_reward_reprints_from_the_committed_records(tmp_path, capsys, prefix, demos, on, row):
    """Experiment 4's table, read from the run records in results/rl-experiments.tar.xz (stored under the names the
    runs were made with, two_digit for add_2x2), re-prints docs/reward.md's rows (N=8 of the two-number curve at 15
    demonstrations, N=32 of the three-number one at 30): intervals over the 3 splits (the unit `breadth curve`
    takes), reward's held-out gain paired run by run, and the pairs above half their own ceiling."""
    import tarfile
    from pathlib import Path

    with tarfile.open(Path(__file__).parents[1] / "results" / "rl-experiments.tar.xz") as tar:
        chosen = [m for m in tar.getmembers() if f"/{prefix}" in m.name]
        tar.extractall(tmp_path, members=chosen, filter="data")
    folder = next(tmp_path.iterdir())
    rl_report.experiment4(folder, range(5), tmp_path / "figures", demos, on)
    rows = [" ".join(line.replace("│", " ").split()) for line in capsys.readouterr().out.splitlines()]
    assert row in rows
    assert (tmp_path / "figures" / f"rl-4-curve-under-reward-{'' if on == 'two' else on + '-'}{demos}.png").exists()


def test_the_three_number_curve_under_reward_warm_starts_from_the_readme_curves_runs():
    """`curve --on three` (issue 34) asks whether reward widens what breadth of demonstrations opened, so its warm
    starts are the README curve's runs (`breadth curve --where operands=3 --held 8`): the same held-out sets, the same
    training environments and steps at N=8 and 32 and the ceiling; then reward on those environments' sums."""
    from bench.rl_experiments import curve_tasks
    from breadth.core.cli.curve import curve_plan
    from breadth.core.cli.parser import build_parser
    from breadth.core.results.breadth_curve import CEILING

    args = build_parser().parse_args("curve --where operands=3 --held 8 --n 8,32 --seeds 0-1".split())
    readme = curve_plan(args)
    want = {}
    for job, split, n in readme.jobs("x"):
        tag = f"c{split}-n{n if n != CEILING else 'ceil'}-s{job.seed}"
        want[tag] = (job.cell.mix.spec(), job.settings.steps, readme.split(split)[0])
    tasks = {t["name"]: t for t in curve_tasks(3e-4, 8, range(2), 30, "three")}
    assert len(tasks) == 2 * len(want) == 2 * 3 * 3 * 2  # warm start and reward, 3 splits x (8, 32, ceiling) x 2
    for tag, (mix, steps, held) in want.items():
        warm, rl = tasks[f"t30warm-{tag}"], tasks[f"t30rl-{tag}"]
        assert (warm["kind"], warm["mix"], warm["settings"]["steps"], warm["held"]) == ("finetune", mix, steps, held)
        assert (rl["kind"], rl["start"], rl["held"]) == ("reward", f"t30warm-{tag}", held)
        trained = {name.split("=")[0] for name in mix.split(",")}
        assert {name.split("=")[0] for name in rl["mix"].split(",")} == trained  # reward on what was demonstrated
