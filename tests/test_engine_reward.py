"""A reward run in the engine: pass@G before the first step, one sampled group at most twice a second as plain
segment data, and a Stop that ends the run within a step (before the first step too) without scoring it."""

from __future__ import annotations

import queue
import time

import pytest
from fake_engine import ScriptedModels, scripted_group

from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning.experiment import TorchModels
from breadth.core.storage.presets import checkpoint_path
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.scores import MAX_SAMPLES, MetadataError, SampledGroup
from breadth.core.world.text.transcript import Role

TWO = str(checkpoint_path("two_digit_70"))
TINY = {"steps": 3, "prompts": 2, "group": 2, "seed": 1}


def _train(session: Session, settings: dict, tmp_path, job: int = 1, mix: str = "add_3x1=4") -> None:
    session.handle(p.Train(job, mix, settings, TWO, str(tmp_path), held_out=2, recipe="reward"))


def test_a_sampled_group_crosses_as_json_and_bad_ones_are_refused_in_one_line():
    """Measured and Rollouts round-trip as JSON lines; a group of the wrong shape (a role no one has, a reward
    above 1, too many episodes, a segment that is not [role, text], an overlong episode) is a MetadataError."""
    group = scripted_group(Problem((3, 4, 5)), 2, 4)
    for event in (p.Measured(1, {"pass": 0.0}), p.Rollouts(1, 2, group.to_dict())):
        assert p.decode(p.encode(event)) == event
    assert SampledGroup.from_dict(p.decode(p.encode(p.Rollouts(1, 2, group.to_dict()))).group) == group
    good = group.to_dict()
    episode = good["episodes"][0]
    bad = [
        good | {"episodes": [episode | {"segments": [["sudo", "x"]]}]},
        good | {"episodes": [episode | {"reward": 2}]},
        good | {"episodes": [episode] * (MAX_SAMPLES + 1)},
        good | {"episodes": [episode | {"segments": [["action"]]}]},
        good | {"episodes": [episode | {"segments": [["action", "9" * 5000]]}]},
        good | {"prompt": 7},
        "not a group",
    ]
    for data in bad:
        with pytest.raises(MetadataError) as e:
            SampledGroup.from_dict(data)
        assert "\n" not in str(e.value)


def test_a_sampled_groups_json_keeps_the_keys_it_was_always_sent_under():
    """A sampled group's JSON names its environment under `family`, as the engine always sent it (issue 31 renamed
    only the attribute), and a group sent that way reads back with its environment."""
    group = scripted_group(Problem((3, 4, 5), "add_3x1"), 2, 4)
    data = group.to_dict()
    assert list(data) == ["prompt", "family", "episodes", "size"] and data["family"] == "add_3x1"
    assert SampledGroup.from_dict(data).environment == "add_3x1"


def test_a_reward_run_sends_pass_at_g_first_then_groups_at_most_twice_a_second(tmp_path):
    """Through the real session (scripted models): Measured before any Step, Steps with metrics, and Rollouts at
    most ROLLOUTS_HZ a second, the first at step 1, each a readable group; a demonstrations run sends neither."""
    events: list = []
    session = Session(events.append, ScriptedModels(), queue.Queue())
    start = time.monotonic()
    _train(session, {"steps": 40, "prompts": 2, "group": 2}, tmp_path)  # 40 steps of 0.05 s: about 2 s
    seconds = time.monotonic() - start
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Measured") < kinds.index("Step")
    rollouts = [e for e in events if isinstance(e, p.Rollouts)]
    assert rollouts[0].step == 1 and 2 <= len(rollouts) <= seconds * p.ROLLOUTS_HZ + 1
    groups = [SampledGroup.from_dict(e.group) for e in rollouts]
    assert all(g.prompt.endswith("=") and {s.role for e in g.episodes for s in e.segments} <= set(Role) for g in groups)
    assert groups[-1].episodes[0].reward == 1.0 and groups[-1].episodes[0].expected
    events.clear()
    session.handle(p.Train(2, "add_3x1=4", {"steps": 5}, TWO, str(tmp_path), held_out=2))
    assert not [e for e in events if isinstance(e, (p.Measured, p.Rollouts))]


def test_the_reward_trainer_reports_one_of_its_groups_with_every_step(one_thread):
    """from_reward attaches the step's first sampled group to each step's report: G episodes of one training prompt,
    each with its reward and verdict, written by the prompt, the model and the calculator."""
    from breadth.core.learning import checkpoint
    from breadth.core.learning.reward import from_reward
    from breadth.core.world.environments.mix import Mix
    from breadth.core.world.runs.settings import RewardSettings

    model, _ = checkpoint.load(TWO)
    reports = []
    from_reward(model, Mix.parse("add_3x1=4"), RewardSettings(**TINY), lambda s: reports.append(s) or True)
    assert [s.step for s in reports] == [1, 2, 3]
    for stats in reports:
        group = stats.group
        assert len(group.episodes) == group.size == TINY["group"] and group.environment == "add_3x1"
        assert all(e.segments[0].role is Role.PROMPT and e.segments[0].text == group.prompt for e in group.episodes)
        assert all(e.reward in (0.0, 1.0) and (e.failure is None) == (e.reward == 1.0) for e in group.episodes)
        assert SampledGroup.from_dict(group.to_dict()) == group


def test_stop_during_a_reward_run_ends_it_at_the_next_step_without_scoring_it(one_thread, tmp_path, monkeypatch):
    """A Stop waiting in the inbox ends the run at the next step with Stopped, and the stopped run is not scored
    on the held-out sums (it was: a second or more before Stopped, with the default held-out size)."""
    scored = []
    monkeypatch.setattr("breadth.core.learning.experiment.evaluate", lambda *a, **k: scored.append(a) or ({}, None))
    events: list = []
    inbox: queue.Queue = queue.Queue()

    def emit(event) -> None:
        events.append(event)
        if isinstance(event, p.Step) and event.step == 2:
            inbox.put(p.Stop(1))

    _train(Session(emit, TorchModels(), inbox), TINY | {"steps": 50}, tmp_path)
    assert [type(e).__name__ for e in events][-1] == "Stopped" and events[-1].steps == 2
    assert not scored


def test_stop_before_the_first_step_of_a_reward_run_is_heard_after_pass_at_g(one_thread, tmp_path):
    """A Stop sent with the Train is heard once pass@G is measured: Stopped at step 0, no step taken (it used to
    wait for the first step)."""
    events: list = []
    inbox: queue.Queue = queue.Queue()
    inbox.put(p.Stop(1))
    _train(Session(events.append, TorchModels(), inbox), TINY | {"steps": 50}, tmp_path)
    assert [type(e).__name__ for e in events] == ["Measured", "Stopped"] and events[-1].steps == 0


@pytest.mark.parametrize("recipe", ["reward", "finetune"])
def test_the_scripted_engines_records_have_the_real_engines_shape(tmp_path, monkeypatch, recipe):
    """A run trained through the session by the tests' scripted models records what the real models record: the
    same fields, the same recipe, mix, seed, held-out size and base, the same metric columns and the same things
    measured before the first step (the scripted record had no metrics and no pass@G; it built its record apart)."""
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "store.sqlite"))
    settings = TINY if recipe == "reward" else {"steps": 3, "seed": 1}
    records = []
    for models in (TorchModels(), ScriptedModels()):
        events: list = []
        folder = tmp_path / type(models).__name__
        session = Session(events.append, models, queue.Queue())
        session.handle(p.Train(1, "add_3x1=4", settings, TWO, str(folder), held_out=2, recipe=recipe))
        (trained,) = [e for e in events if isinstance(e, p.Trained)]
        records.append(trained.meta)
    real, scripted = records
    assert real.keys() == scripted.keys()
    for name in ("kind", "mix", "seed", "held_out", "base", "completed", "settings"):
        assert real[name] == scripted[name], name
    assert real.get("metrics", {}).keys() == scripted.get("metrics", {}).keys()
    assert real.get("before", {}).keys() == scripted.get("before", {}).keys()
    if recipe == "reward":  # so the two comparisons above compare something
        assert real["metrics"] and real["before"]
