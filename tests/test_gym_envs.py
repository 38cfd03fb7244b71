"""The Gymnasium interface: every environment by breadth's id, Gymnasium's own checker on a seeded draw, rewards and
failure kinds through `step`, seeded resets from each split."""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from breadth.core.world import gym_envs
from breadth.core.world.environments import EnvError, draw, env_id, environment, environments
from breadth.core.world.transcript import Role

DRAWN = draw(12, 1)  # twelve environments by seed: a postfix one and mixed operations among them (pinned below)


def make(name: str, **kwargs) -> gym_envs.BreadthEnv:
    """The environment as `gymnasium.make` gives it, unwrapped."""
    return gymnasium.make(name, **kwargs).unwrapped


def actions(transcript) -> list[str]:
    """The model's segments of a transcript, in order: each call, then the answer."""
    return [s.text for s in transcript.segments if s.role is Role.ACTION]


def test_every_environment_is_registered_under_its_breadth_id():
    """Each of the registry's ids (and nothing else under breadth/) makes an environment of that id."""
    ours = sorted(k for k in gymnasium.registry if k.startswith("breadth/"))
    assert ours == sorted(env_id(f) for f in environments())
    for name in ours:
        env = make(name)
        assert env.id == name and env.family is environment(name)


def test_the_drawn_sample_covers_a_postfix_form_and_mixed_operations():
    """The seeded draw that check_env runs on holds at least one postfix and one mixed-operation environment."""
    assert len(DRAWN) == 12
    assert any(f.at.form == "postfix" for f in DRAWN)
    assert any(len(set(f.at.op)) > 1 for f in DRAWN)


@pytest.mark.parametrize("family", DRAWN, ids=lambda f: f.name)
def test_gymnasiums_checker_passes_without_a_warning(family):
    """gymnasium.utils.env_checker.check_env passes, every warning taken as a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make(env_id(family)))


@pytest.mark.parametrize("family", DRAWN, ids=lambda f: f.name)
def test_a_demonstration_played_through_step_gets_reward_1(family):
    """The demonstration's own segments, one action each, end with reward 1, `correct`, the same transcript."""
    env = make(env_id(family))
    obs, info = env.reset(seed=0, options={"split": "demonstrations", "index": 3})
    problem = family.problem(0, 3)
    demonstration = problem.demonstration()
    assert obs == problem.prompt and info["split"] == "demonstrations"
    *calls, answer = actions(demonstration)
    for call in calls:
        obs, reward, terminated, truncated, info = env.step(call)
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert obs.endswith(call + problem.syntax.calculate(call[1:-1]))  # the calculator's result appended
    obs, reward, terminated, truncated, info = env.step(answer)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["verdict"] == "correct" and info["failure"] is None and info["answer"] == problem.answer
    assert obs == demonstration.text


def play(name: str, steps: list[str]) -> tuple[float, dict]:
    """Reset on the first test problem of seed 0, take these steps, return the last reward and info."""
    env = make(name)
    env.reset(seed=0, options={"index": 0})
    for action in steps:
        _, reward, terminated, _, info = env.step(action)
    assert terminated
    return reward, info


def test_a_wrong_answer_gets_0_and_its_failure_kind():
    """Right calls and a wrong copy: reward 0, `answer differs from tool`; a wrong answer with no call: `no call`."""
    problem = environment("breadth/two-digit-v1").held_out(0, 1)[0]
    call, _ = actions(problem.demonstration())
    reward, info = play("breadth/two-digit-v1", [call, f"{problem.answer + 1}|"])
    assert (reward, info["verdict"], info["failure"]) == (0.0, "answer differs from tool", "answer differs from tool")
    reward, info = play("breadth/two-digit-v1", [f"{problem.answer + 1}|"])
    assert (reward, info["failure"]) == (0.0, "no call")


def test_an_episode_ends_on_a_malformed_call_too_many_calls_or_its_length():
    """A malformed call ends the episode (`?|` appended); so do a fifth call and the end of the context."""
    env = make("breadth/two-digit-v1")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("B2*3|")
    assert obs.endswith("B2*3|?|") and (reward, terminated, truncated) == (0.0, True, False)
    assert (info["end"], info["failure"]) == ("malformed call", "malformed call")
    reward, info = play("breadth/two-digit-v1", ["B1+1|"] * 4 + ["B"])
    assert (info["end"], info["failure"]) == ("too_many_calls", "wrong number of calls")
    reward, info = play("breadth/two-digit-v1", ["1" * 63])
    assert (info["end"], info["failure"]) == ("too_long", "unfinished")


def test_an_action_is_read_up_to_the_calculators_turn():
    """Characters after a closed call are not read (`unread`), and a segment may come in pieces."""
    env = make("breadth/two-digit-v1")
    prompt, _ = env.reset(seed=0)
    obs, *_, info = env.step("B1+")
    assert obs == prompt + "B1+" and info["unread"] == ""
    obs, *_, info = env.step("2|99|")
    assert obs == prompt + "B1+2|3|" and info["unread"] == "99|"


def test_seeded_resets_repeat_and_draw_from_the_split_asked():
    """The same seed gives the same problem; each split's draws lie in that split; the test split is the default."""
    env = make("breadth/add-3x2-v1")
    family = env.family
    assert env.reset(seed=5) == env.reset(seed=5)
    validation = {p.prompt for p in family.validation(0, None)}
    demonstrations = {p.prompt for p in family.demonstrations(0, family.demo_pool)}
    tests = {p.prompt for p in family.held_out(0, 1_000)}
    for seed in range(20):
        assert env.reset(seed=seed, options={"split": "validation"})[0] in validation
        assert env.reset(seed=seed, options={"split": "demonstrations"})[0] in demonstrations
    assert env.reset(seed=0, options={"index": 7})[0] == family.held_out(0, 8)[7].prompt
    assert sum(env.reset(seed=s)[0] in tests for s in range(200)) > 0  # the test split (of 9,800) by default


def test_bad_input_is_refused_in_one_line():
    """An unknown split, option, index or action, a step after the end, a removed version: one-line errors."""
    env = make("breadth/two-digit-v1")
    with pytest.raises(ValueError, match="no split 'train'"):
        env.reset(options={"split": "train"})
    with pytest.raises(ValueError, match="unknown reset option 'level'"):
        env.reset(options={"level": 3})
    with pytest.raises(ValueError, match="holds problems 0 to"):
        env.reset(options={"index": 10**6})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="an action is 1 to 63 characters"):
        env.step("B2x3|")
    env.step("5|")
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("5|")
    with pytest.raises(EnvError, match="use breadth/two-digit-v1"):
        gym_envs.BreadthEnv("breadth/two-digit-v0")


def test_render_ansi_is_the_transcript():
    """render_mode='ansi' renders the transcript so far."""
    env = make("breadth/two-digit-v1", render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
