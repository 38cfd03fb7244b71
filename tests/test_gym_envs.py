"""The Gymnasium interface: every environment by breadth's id, Gymnasium's own checker on a seeded draw, rewards and
failure kinds through `step`, seeded resets from each split."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from breadth.core.world import gym_envs
from breadth.core.world.environments.registry import (
    EnvError,
    draw,
    env_id,
    environment,
    every_environment,
    old_ids,
)
from breadth.core.world.text.transcript import Role

DRAWN = draw(12, 1)  # twelve environments by seed: a postfix one and mixed operations among them (pinned below)


def make(name: str, **kwargs) -> gym_envs.BreadthEnv:
    """The environment as `gymnasium.make` gives it, unwrapped."""
    return gymnasium.make(name, **kwargs).unwrapped


def actions(transcript) -> list[str]:
    """The model's segments of a transcript, in order: each call, then the answer."""
    return [s.text for s in transcript.segments if s.role is Role.ACTION]


def test_every_environment_is_registered_under_its_breadth_id():
    """Each of the registry's ids (and nothing else under breadth/ but the plate's two old ids) makes an environment
    of that id."""
    ours = sorted(k for k in gymnasium.registry if k.startswith("breadth/") and k not in old_ids())
    assert ours == sorted(env_id(f) for f in every_environment())
    assert sorted(k for k in gymnasium.registry if k in old_ids()) == sorted(old_ids())
    for name in ours:
        env = make(name)
        assert env.id == name and env.environment is environment(name)


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
    problem = environment("breadth/add-2x2-v1").held_out(0, 1)[0]
    call, _ = actions(problem.demonstration())
    reward, info = play("breadth/add-2x2-v1", [call, f"{problem.answer + 1}|"])
    assert (reward, info["verdict"], info["failure"]) == (0.0, "answer differs from tool", "answer differs from tool")
    reward, info = play("breadth/add-2x2-v1", [f"{problem.answer + 1}|"])
    assert (reward, info["failure"]) == (0.0, "no call")


def test_an_episode_ends_on_a_malformed_call_too_many_calls_or_its_length():
    """A malformed call ends the episode (`?|` appended); so do a fifth call and the end of the context."""
    env = make("breadth/add-2x2-v1")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("B2*3|")
    assert obs.endswith("B2*3|?|") and (reward, terminated, truncated) == (0.0, True, False)
    assert (info["end"], info["failure"]) == ("malformed call", "malformed call")
    reward, info = play("breadth/add-2x2-v1", ["B1+1|"] * 4 + ["B"])
    assert (info["end"], info["failure"]) == ("too_many_calls", "wrong number of calls")
    reward, info = play("breadth/add-2x2-v1", ["1" * 63])
    assert (info["end"], info["failure"]) == ("too_long", "unfinished")


def test_an_action_is_read_up_to_the_calculators_turn():
    """Characters after a closed call are not read (`unread`), and a segment may come in pieces."""
    env = make("breadth/add-2x2-v1")
    prompt, _ = env.reset(seed=0)
    obs, *_, info = env.step("B1+")
    assert obs == prompt + "B1+" and info["unread"] == ""
    obs, *_, info = env.step("2|99|")
    assert obs == prompt + "B1+2|3|" and info["unread"] == "99|"


def test_seeded_resets_repeat_and_draw_from_the_split_asked():
    """The same seed gives the same problem; each split's draws lie in that split; the test split is the default."""
    env = make("breadth/add-3x2-v1")
    family = env.environment
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
    env = make("breadth/add-2x2-v1")
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
    with pytest.raises(EnvError, match="use breadth/add-2x2-v1"):
        gym_envs.BreadthEnv("breadth/add-2x2-v0")


def test_render_ansi_is_the_transcript():
    """render_mode='ansi' renders the transcript so far."""
    env = make("breadth/add-2x2-v1", render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs


@pytest.fixture
def writes_nothing(tmp_path, monkeypatch, private_home):
    """The test runs in an empty folder; afterwards neither it nor breadth's home holds a file."""
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == [] and list(private_home.iterdir()) == []


def _one_line(error: BaseException, says: str) -> None:
    """A ValueError or TypeError whose message is one line holding `says`."""
    assert isinstance(error, ValueError | TypeError), repr(error)
    assert "\n" not in str(error) and says in str(error), str(error)


ODD_MAKE = [
    ({"split_seed": "x"}, "split_seed is a whole number from 0 to 4,294,967,295 (breadth's --seed), not 'x'"),
    ({"split_seed": -1}, "split_seed is a whole number from 0 to 4,294,967,295"),
    ({"split_seed": 2**40}, "not 1099511627776"),
    ({"split_seed": True}, "not True"),
    ({"split_seed": 1.5}, "not 1.5"),
    ({"split_seed": None}, "not None"),
    ({"render_mode": 3}, "render_mode is None or one of ['ansi'], not 3"),
    ({"render_mode": ["ansi"]}, "not ['ansi']"),
    ({"render_mode": "human"}, "not 'human'"),
    ({"env": 3}, "an environment id is text such as breadth/add-2x2-v1, not 3"),
    ({"env": None}, "not None"),
    ({"colour": 1}, "'breadth/add-2x2-v1' takes split_seed and render_mode, not 'colour'"),
]


@pytest.mark.parametrize("kwargs, says", ODD_MAKE, ids=[" ".join(repr(k).split()) for k, _ in ODD_MAKE])
def test_an_odd_argument_to_make_is_one_line(kwargs, says, writes_nothing):
    """Each odd keyword of `gymnasium.make` is a one-line ValueError or TypeError saying what is taken: a split seed
    that is not a seed was taken as one, and a render mode or an id that is not text was an AttributeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning before the error
        with pytest.raises(Exception) as refused:
            gymnasium.make("breadth/add-2x2-v1", **kwargs).reset(seed=0)
    _one_line(refused.value, says)


ODD_RESET = [
    ({"options": "split=test"}, "reset's options are a dict such as {'split': 'validation'}, not 'split=test'"),
    ({"options": 5}, "not 5"),
    ({"options": [("split", "test")]}, "not [('split', 'test')]"),
    ({"options": np.zeros((3, 3))}, "not array([[0., 0., 0.], [0., 0., 0.], [0.,…"),
    ({"options": {"split": []}}, "no split []; the splits are test, validation, demonstrations"),
    ({"options": {"split": None}}, "no split None"),
    ({"options": {1: 2}}, "unknown reset option 1; the options are split and index"),
    ({"options": {"index": True}}, "holds problems 0 to 7699, not True"),
    ({"options": {"index": 2.0}}, "holds problems 0 to 7699, not 2.0"),
    ({"seed": "x"}, "seed is None or a whole number from 0, not 'x'"),
    ({"seed": -1}, "not -1"),
    ({"seed": 1.5}, "not 1.5"),
    ({"seed": True}, "not True"),
]


@pytest.mark.parametrize("kwargs, says", ODD_RESET, ids=[" ".join(repr(k).split()) for k, _ in ODD_RESET])
def test_an_odd_argument_to_reset_is_one_line(kwargs, says, writes_nothing):
    """Options that are not a dict, a split that is not text, an index or a seed that is a bool, a float or negative:
    one line each (they were a cryptic `dict()` error, an unhashable-type TypeError, Gymnasium's own error type, or
    accepted)."""
    env = gymnasium.make("breadth/add-2x2-v1")
    with pytest.raises(Exception) as refused:
        env.reset(**{"seed": 0, **kwargs})
    _one_line(refused.value, says)


@pytest.mark.parametrize(
    "action", [3, None, b"5|", "", "5" * 64, "5|\x00", "é", ["5|"], "\x1b[31m", np.array(["5|"])], ids=repr
)
def test_an_odd_action_is_one_line(action, writes_nothing):
    """An action of the wrong type, length or characters is a one-line ValueError quoting it escaped and cut."""
    env = gymnasium.make("breadth/add-2x2-v1")
    env.reset(seed=0)
    with pytest.raises(ValueError) as refused:
        env.step(action)
    _one_line(refused.value, "an action is 1 to 63 characters of")
    assert "\x1b" not in str(refused.value) and len(str(refused.value)) < 120


def test_a_refused_reset_or_step_leaves_the_environment_usable(writes_nothing):
    """After a first reset that is refused, a good reset and steps play on (Gymnasium's passive checker, on by
    default, failed the first good step with "TypeError: cannot unpack non-iterable NoneType object")."""
    env = gymnasium.make("breadth/add-2x2-v1")
    with pytest.raises(ValueError, match="no split 'train'"):
        env.reset(seed=0, options={"split": "train"})
    prompt, _ = env.reset(seed=0, options={"index": 0})
    with pytest.raises(ValueError, match="an action is"):
        env.step("x")
    obs, reward, terminated, truncated, info = env.step("5|")
    assert obs == prompt + "5|" and terminated and info["failure"] == "no call"


def test_numpy_integers_and_strings_are_taken_as_their_python_values(writes_nothing):
    """A split seed, an index or a reset seed that is a numpy integer, and an action that is a numpy string, act as
    the Python values they hold (an index of np.int64(7) was refused as not a number of the split)."""
    as_numpy = gymnasium.make("breadth/add-3x2-v1", split_seed=np.int64(3))
    as_python = gymnasium.make("breadth/add-3x2-v1", split_seed=3)
    assert as_numpy.reset(seed=0, options={"index": np.int64(7)}) == as_python.reset(seed=0, options={"index": 7})
    assert as_numpy.reset(seed=np.int64(5)) == as_python.reset(seed=5)
    assert as_numpy.step(np.str_("5|"))[0] == as_python.step("5|")[0]


def test_ansi_list_still_collects_every_render():
    """render_mode='ansi_list' gives the list of ansi renders, as Gymnasium's RenderCollection does."""
    env = gymnasium.make("breadth/add-2x2-v1", render_mode="ansi_list")
    obs, _ = env.reset(seed=0)
    after, *_ = env.step("B1+")
    assert env.render() == [obs, after]
