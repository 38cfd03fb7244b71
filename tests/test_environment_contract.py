"""The contract every environment keeps, checked on each of them (registered and generated): its demonstrations
play back through the real episode and are judged correct, its three splits never meet, its episodes fit the
context, its problems repeat from seed and index, and its id finds it. A new environment is checked without a
line of test."""

from __future__ import annotations

import pytest

from breadth.core.world.arithmetic.coordinates import ENV_DIMENSIONS, Coordinates
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED, Environment
from breadth.core.world.environments.orders import numpy_order, plate_order
from breadth.core.world.environments.registry import MIN_SUMS, draw, env_id, environment, every_environment, generated
from breadth.core.world.environments.task import Task
from breadth.core.world.episodes.episode import MAX_LENGTH, Episode
from breadth.core.world.episodes.verdict import judge
from breadth.core.world.text.transcript import Role

ALL = every_environment()  # the grid and the three-digit environments alike


def replay(problem: Problem) -> Episode:
    """The problem's demonstration played through the real environment: the prompt and tool results forced, the
    demonstrator's characters acted."""
    episode = Episode(problem.prompt, syntax=problem.syntax)
    actions = "".join(s.text for s in problem.demonstration().segments if s.role is Role.ACTION)
    for char in actions:
        while episode.next_forced() is not None:
            pass
        episode.act(char)
    return episode


def test_the_registry_spans_four_dimensions_with_at_least_150_environments():
    """At least 150 valid environments, each with its own versioned id, on at least four named dimensions that
    each take more than one value."""
    assert len(ALL) >= 150 and len({env_id(f) for f in ALL}) == len(ALL)
    assert len(ENV_DIMENSIONS) >= 4
    for d in ENV_DIMENSIONS:
        assert len({f.at.value(d) for f in ALL}) > 1, d


@pytest.mark.parametrize("family", ALL, ids=lambda f: f.name)
def test_every_environment_keeps_the_contract(family):
    """Valid demonstrations, disjoint splits, episodes inside the context, reproducible problems, a working id."""
    assert family.size() >= MIN_SUMS and family.at.longest_episode() <= MAX_LENGTH
    demos = family.demonstrations(0, family.demo_pool)
    test = family.held_out(0, 200)
    valid = family.validation(0, 200)
    sums = [p.operands for p in demos + test + valid]
    assert len(set(sums)) == len(sums), "the splits meet, or a split repeats a sum"
    assert all(family.contains(s) for s in sums)
    for problem in demos[:20] + test[:5] + valid[:5]:
        episode = replay(problem)
        assert judge(episode, problem).solved, episode.transcript.text
        assert len(episode.transcript.text) + 1 <= MAX_LENGTH
    assert [p.operands for p in family.held_out(0, 30)] == [p.operands for p in test[:30]]
    assert environment(env_id(family)) is family


def test_a_generated_environment_repeats_when_made_again():
    """The same coordinates make the same environment: the same name and, seed by seed, the same problems."""
    family = draw(1, seed=5, pool=list(generated().values()))[0]
    at = Coordinates(**vars(family.at))
    again = Environment(family.name, family.short, family.words, family.description, at, ordering=family.ordering)
    for seed in (0, 3):
        assert [again.problem(seed, i) for i in range(60)] == [family.problem(seed, i) for i in range(60)]


def test_generated_names_read_as_their_sums():
    """`2a1s2` is a two-digit, a single digit and a two-digit number, added then subtracted, in the plate's form."""
    family = generated()["2a1s2"]
    assert family.at.layout == (2, 1, 2) and family.op == "+-" and family.at.form == "infix"
    problem = family.problem(0, 0)
    a, b, c = problem.operands
    assert problem.prompt == f"{a}+{b}-{c}=" and problem.answer == a + b - c >= 0
    assert env_id(family) == "breadth/2a1s2-v1"


def test_registered_and_generated_environments_are_tasks_ordered_by_their_data():
    """Every environment satisfies the Task protocol; a registered one's orders are the plate's (Python's random), a
    generated one's numpy's: an ordering it is given, not a subclass."""
    assert all(isinstance(f, Task) for f in ALL)
    assert {type(f) for f in ALL} == {Environment}
    assert all(f.ordering is plate_order for f in REGISTERED.values())
    assert all(f.ordering is numpy_order for f in generated().values())
