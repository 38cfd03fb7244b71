"""`python -m bench.lockstep_bench --paired N` covers a mix of postfix environments beside the plate's infix mixes,
its lockstep side trained and scored together as a lockstep sweep does (`train_lockstep`), the plate's runs one
group as before; scores saved before the postfix mix was added, or under the environments' old names, still load."""

from __future__ import annotations

import json

import pytest

from bench import lockstep_bench as bench
from breadth.core.world.arithmetic.problem import first_name
from breadth.core.world.environments.registry import by_name
from breadth.core.world.episodes.scores import HeldOutScore


def _fake_scores(mix, seed: int, side: str) -> dict[str, float]:
    """A score per environment that tells mix, seed and side apart: (10 + seed) % alone, 20 points more together."""
    return {f: 10.0 + seed + (20 if side == "lockstep" else 0) for f in mix.environments}


@pytest.fixture
def fakes(monkeypatch):
    """No training: today's runs score `_fake_scores`, lockstep groups are recorded and score it too."""
    groups: list[list[tuple[str, int, tuple[str, ...] | None]]] = []

    def train_lockstep(jobs, held_out):
        assert held_out == bench.PAIRED_HELD_OUT
        groups.append([(job.mix.spec(), job.settings.seed, job.environments) for job in jobs])
        out = []
        for job in jobs:
            (mix,) = [m for m in bench.PAIRED if m.mix == job.mix]
            rates = _fake_scores(mix, job.settings.seed, "lockstep")
            scores = {f: HeldOutScore(f, int(2 * r), 200) for f, r in rates.items()}
            out.append((None, type("Record", (), {"scores": scores})()))
        return out

    monkeypatch.setattr(bench, "train_lockstep", train_lockstep)
    monkeypatch.setattr(bench, "_alone", lambda base, mix, seed: _fake_scores(mix, seed, "today"))
    monkeypatch.setattr(bench.checkpoint, "load", lambda path: (None, None))
    return groups


def test_the_paired_mixes_include_postfix_environments_scored_in_their_own_form():
    """Beside the plate's three infix mixes, one mix trains on postfix environments and is scored on them."""
    plate = [m for m in bench.PAIRED if m.group == "the plate"]
    assert [m.environments for m in plate] == [("add_2x2", "add_3x1")] * 3
    (postfix,) = [m for m in bench.PAIRED if m.group != "the plate"]
    trained = [name for name, _ in postfix.mix.counts]
    assert trained and {by_name(n).at.value("form") for n in trained} == {"postfix"}
    assert set(trained) <= set(postfix.environments)


def test_lockstep_trains_the_plate_as_one_group_and_the_postfix_mix_as_another(fakes, capsys):
    """--paired 2: the plate's 6 runs one group (mix by mix, seeds in order, as before), the postfix mix's 2 seeds
    another, each job scored on its mix's environments; the table has a row per mix and environment and a line of
    all pairs per group."""
    assert bench.main(["--paired", "2"]) == 0
    plate = [(m.mix.spec(), s, m.environments) for m in bench.PAIRED if m.group == "the plate" for s in (0, 1)]
    postfix = [(m.mix.spec(), s, m.environments) for m in bench.PAIRED if m.group != "the plate" for s in (0, 1)]
    assert fakes == [plate, postfix]
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " difference " in line]
    assert len(rows) == 3 * 2 + 3 and all("difference  +20.0 ±  0.0" in row for row in rows), out
    assert any(line.split()[:4] == ["postfix", "35+35", "2s2_postfix", "today"] for line in rows), out
    assert "the plate, one lockstep group (" in out and "all 12 pairs:  +20.0 ±  0.0" in out, out
    assert "the postfix mix, one lockstep group (postfix 35+35): all 6 pairs:  +20.0 ±  0.0" in out, out


def test_sides_saved_before_the_postfix_mix_train_only_what_they_lack(fakes, tmp_path, capsys):
    """A --load of both sides saved with the plate's mixes only: today trains the postfix mix's 2 runs, lockstep
    only the postfix group (the plate's group is not trained again), and the table covers all four mixes."""
    old = {side: {} for side in ("today", "lockstep")}
    for mix in [m for m in bench.PAIRED if m.group == "the plate"]:
        for seed in (0, 1):
            old["today"][f"{mix.name}/{seed}"] = _fake_scores(mix, seed, "today")
            old["lockstep"][f"{mix.name}/{seed}"] = _fake_scores(mix, seed, "lockstep")
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps(old))
    assert bench.main(["--paired", "2", "--load", str(saved), "--save", str(tmp_path / "new.json")]) == 0
    assert [[seed for _, seed, _ in group] for group in fakes] == [[0, 1]]  # the postfix group alone
    out = capsys.readouterr().out
    assert "today: 2 runs trained" in out and "lockstep: 2 runs trained" in out, out
    assert len([line for line in out.splitlines() if " difference " in line]) == 9, out
    assert set(json.loads((tmp_path / "new.json").read_text())["today"]) == set(old["today"]) | {
        "postfix_35_35/0",
        "postfix_35_35/1",
    }


def test_sides_saved_under_the_old_environment_names_still_load(fakes, tmp_path, capsys):
    """A --load of both sides saved when the plate's environments were `two_digit` and `three_digit`: nothing is
    trained again and the table reads each score under the environment's old name."""
    old = {side: {} for side in ("today", "lockstep")}
    for mix in bench.PAIRED:
        for seed in (0, 1):
            for side in old:
                scores = _fake_scores(mix, seed, side)
                old[side][f"{mix.name}/{seed}"] = {first_name(f): r for f, r in scores.items()}
    assert "two_digit" in old["today"]["mix_35_35/0"] and "three_digit" in old["today"]["mix_35_35/0"]
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps(old))
    assert bench.main(["--paired", "2", "--load", str(saved)]) == 0
    assert fakes == []  # every run was loaded
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " difference " in line]
    assert len(rows) == 9 and all("difference  +20.0 ±  0.0" in row for row in rows), out
