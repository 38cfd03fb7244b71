"""The RL report's choice of learning rate and group, read from run records (`bench.rl_report.choose`)."""

from __future__ import annotations

import json

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


def test_the_curve_under_reward_reprints_from_the_committed_records(tmp_path, capsys):
    """Experiment 4's table, read from the run records in results/rl-experiments.tar.xz (stored under the names the
    runs were made with, two_digit for add_2x2), re-prints docs/reward.md's row for N=8 at 15 demonstrations."""
    import tarfile
    from pathlib import Path

    with tarfile.open(Path(__file__).parents[1] / "results" / "rl-experiments.tar.xz") as tar:
        tar.extractall(tmp_path, members=[m for m in tar.getmembers() if "/c15" in m.name], filter="data")
    folder = next(tmp_path.iterdir())
    rl_report.experiment4(folder, range(5), tmp_path / "figures", 15)
    rows = [" ".join(line.replace("│", " ").split()) for line in capsys.readouterr().out.splitlines()]
    assert "8 15 79 [74-85] 5 [2-7] 79 [71-87] 6 [3-9] 1 of 15" in rows
