"""Scoring keeps a few failed transcripts per family; they survive metadata and the store; hostile ones are refused."""

from __future__ import annotations

import pytest
from fake_engine import ScriptedPolicy, demonstrator

from breadth.core.results.report import summarise
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.scores import EXAMPLES_KEPT, HeldOutScore, MetadataError
from breadth.core.world.episodes.scoring import play, tally
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.transcript import Role


def odd_first_skips_the_call(operands: tuple[int, ...]) -> str:
    """Right procedure when the first operand is even; otherwise a wrong answer written without calling."""
    return demonstrator(operands) if operands[0] % 2 == 0 else f"{sum(operands) + 1}|"


def _scores(seed: int = 0) -> tuple[list, dict[str, HeldOutScore]]:
    problems = REGISTERED["add_2x2"].held_out(seed, 30) + REGISTERED["add_3x1"].held_out(seed, 30)
    scored = play(lambda n: ScriptedPolicy(odd_first_skips_the_call, n), problems)
    return scored, tally(scored, ["add_2x2", "add_3x1"])


def test_a_score_keeps_its_first_failed_transcripts_with_who_wrote_what():
    """The first EXAMPLES_KEPT unsolved episodes of each family, in held-out order, with their failure kind."""
    scored, scores = _scores()
    for name, score in scores.items():
        failed = [s for s in scored if s.problem.environment == name and not s.verdict.solved]
        assert score.total - score.solved == len(failed) >= EXAMPLES_KEPT
        assert [e.text for e in score.examples] == [s.episode.transcript.text for s in failed[:EXAMPLES_KEPT]]
        assert all(e.failure == "no call" for e in score.examples)
        first = score.examples[0]
        assert [seg.role for seg in first.segments] == [Role.PROMPT, Role.ACTION]  # no call: nothing appended


def test_a_run_with_no_failures_keeps_no_examples():
    """A family solved on every sum keeps nothing, and its JSON form has no examples key."""
    problems = REGISTERED["add_2x2"].held_out(0, 10)
    score = tally(play(lambda n: ScriptedPolicy(demonstrator, n), problems), ["add_2x2"])["add_2x2"]
    assert score.solved == 10 and score.examples == () and "examples" not in score.to_dict()


def test_kept_transcripts_survive_metadata_and_the_store(tmp_path):
    """Round trip through JSON and the results store; a summary over seeds takes them seeds in turn."""
    with Store(tmp_path / "s.sqlite") as store:
        for seed in (0, 1):
            _, scores = _scores(seed)
            run = RunMeta("finetune", FinetuneSettings(seed=seed), "add_2x2=70", seed, 30, scores, (1.0,), 1.0, 1.0)
            assert RunMeta.from_dict(run.to_dict()) == run
            key = run_key("add_2x2=70", FinetuneSettings(seed=seed), 30, "h", ["add_2x2", "add_3x1"])
            store.add(StoredRun(key, run, "h", "sweep"))
        (cell,) = summarise(store.runs())
    examples = cell.environments["add_2x2"].examples
    assert [seed for seed, _ in examples] == [0, 1] * EXAMPLES_KEPT
    assert examples[0][1] == _scores(0)[1]["add_2x2"].examples[0]


@pytest.mark.parametrize(
    "examples, says",
    [
        ([{"failure": "no call", "segments": [["prompt", "1+2="]]}] * (EXAMPLES_KEPT + 1), "at most"),
        ([{"failure": "no call", "segments": [["wizard", "1+2="]]}], "no role"),
        ([{"failure": "no call", "segments": [["prompt", "9" * 500]]}], "longer than any episode"),
        ([{"failure": "no call", "segments": "1+2="}], "segments"),
        (["1+2=3|"], "mapping"),
    ],
)
def test_hostile_kept_transcripts_are_refused_in_one_line(examples, says):
    """Metadata a user hands over with too many, unknown-role or huge examples is refused, never trusted."""
    with pytest.raises(MetadataError) as e:
        HeldOutScore.from_dict("add_2x2", {"solved": 0, "total": 1, "failures": {}, "examples": examples})
    assert says in str(e.value) and "\n" not in str(e.value)
