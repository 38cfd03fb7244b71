"""The typed transcript: segments merge by role, and the loss mask counts only the model's own actions."""

from __future__ import annotations

import pytest

from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.text.transcript import Role, Segment, Transcript
from breadth.core.world.text.vocab import BOS, CHARS, decode, encode


def counted(transcript: Transcript) -> str:
    """The characters whose prediction is trained on, in order."""
    _, targets = transcript.training_pair()
    return "".join(CHARS[t] for t in targets if t != -1)


def counted_after(transcript: Transcript) -> list[tuple[str, str]]:
    """(input character, target character) for every counted prediction."""
    inputs, targets = transcript.training_pair()
    return [(CHARS[x], CHARS[t]) for x, t in zip(inputs, targets, strict=True) if t != -1]


def test_two_digit_demonstration_text():
    """A two-digit demonstration reads prompt, call, tool result, answer, as on the plate."""
    t = Problem((23, 45), "two_digit").demonstration()
    assert [(s.role, s.text) for s in t.segments] == [
        (Role.PROMPT, "23+45="),
        (Role.ACTION, "B23+45|"),
        (Role.ENVIRONMENT, "68|"),
        (Role.ACTION, "68|"),
    ]


def test_two_digit_mask_counts_only_actions():
    """For 23+45 the counted targets spell the model's `B23+45|68|`, never the prompt or the tool's `68|`."""
    t = Problem((23, 45), "two_digit").demonstration()
    assert counted(t) == "B23+45|68|"


def test_three_digit_mask_counts_only_actions():
    """For 3+4+5 the counted targets spell both calls and the answer, without the tool's `7|` and `12|`."""
    t = Problem((3, 4, 5), "three_digit").demonstration()
    assert t.text == "3+4+5=B3+4|7|B7+5|12|12|"
    assert counted(t) == "B3+4|B7+5|12|"


def test_prediction_at_equals_sign_counts():
    """The prediction made at the prompt's `=` (the call's opening `B`) is trained on."""
    pairs = counted_after(Problem((23, 45), "two_digit").demonstration())
    assert pairs[0] == ("=", "B")


def test_prediction_after_environment_close_counts():
    """The prediction made at the environment's closing `|` (the answer's first digit) is trained on."""
    t = Problem((3, 4, 5), "three_digit").demonstration()
    pairs = counted_after(t)
    # inputs that are the tool result's closing `|`: after `7|` comes `B`, after `12|` comes `1`
    inputs, targets = t.training_pair()
    roles = [Role.PROMPT] + t.roles()  # role of every input position (start token is prompt)
    env_closes = [
        i for i, (x, r) in enumerate(zip(inputs, roles[:-1], strict=True)) if r is Role.ENVIRONMENT and CHARS[x] == "|"
    ]
    assert len(env_closes) == 2
    assert [CHARS[targets[i]] for i in env_closes] == ["B", "1"]
    assert ("|", "B") in pairs and ("|", "1") in pairs


def test_no_prediction_of_prompt_or_environment_counts():
    """Every target that the prompt or the environment wrote is -1, and every target the model wrote is not."""
    for problem in [Problem((23, 45), "two_digit"), Problem((9, 9, 9), "three_digit"), Problem((7, 0, 8, 1))]:
        t = problem.demonstration()
        _, targets = t.training_pair()
        roles = t.roles()  # role of each target: target i is text character i
        assert len(targets) == len(roles)
        for target, role, char in zip(targets, roles, t.text, strict=True):
            if role is Role.ACTION:
                assert CHARS[target] == char
            else:
                assert target == -1


def test_render_starts_with_start_token_and_matches_text():
    """Rendering puts the start-of-line token first, marked not written by the model, then the text."""
    t = Problem((23, 45), "two_digit").demonstration()
    ids, is_action = t.render()
    assert ids == encode(BOS + t.text)
    assert decode(ids) == BOS + t.text
    assert is_action[0] is False
    assert len(is_action) == len(ids)
    assert "".join(c for c, a in zip(BOS + t.text, is_action, strict=True) if a) == "B23+45|68|"


def test_training_pair_is_shifted_by_one():
    """Inputs are the rendered ids without the last, targets (where counted) are the ids without the first."""
    t = Problem((3, 4, 5), "three_digit").demonstration()
    ids, _ = t.render()
    inputs, targets = t.training_pair()
    assert inputs == ids[:-1]
    assert len(targets) == len(ids) - 1
    assert all(tg == -1 or tg == i for tg, i in zip(targets, ids[1:], strict=True))


def test_add_merges_adjacent_text_of_one_role():
    """Adding text of the same role as the last segment extends it instead of starting a new one."""
    t = Transcript()
    t.add(Role.PROMPT, "2")
    t.add(Role.PROMPT, "3=")
    t.add(Role.ACTION, "B")
    t.add(Role.ACTION, "2|")
    t.add(Role.ENVIRONMENT, "2|")
    t.add(Role.ACTION, "2")
    assert t.segments == [
        Segment(Role.PROMPT, "23="),
        Segment(Role.ACTION, "B2|"),
        Segment(Role.ENVIRONMENT, "2|"),
        Segment(Role.ACTION, "2"),
    ]


def test_add_ignores_empty_text():
    """Adding empty text changes nothing: no empty segment, no split of a running segment."""
    t = Transcript()
    t.add(Role.PROMPT, "")
    assert t.segments == []
    t.add(Role.ACTION, "B1")
    t.add(Role.ENVIRONMENT, "")
    t.add(Role.ACTION, "+1|")
    assert t.segments == [Segment(Role.ACTION, "B1+1|")]


def test_of_builds_the_same_transcript_as_add():
    """Transcript.of with (role, text) pairs equals adding them one by one, merging included."""
    parts = [(Role.PROMPT, "1+"), (Role.PROMPT, "2="), (Role.ACTION, "3|")]
    t = Transcript()
    for role, text in parts:
        t.add(role, text)
    assert Transcript.of(*parts) == t
    assert len(t.segments) == 2


@pytest.mark.parametrize("operands", [(23, 45), (3, 4, 5), (99, 99), (0, 0, 0), (12, 3, 45, 6)])
def test_roles_align_with_text(operands):
    """roles() gives exactly one role per character of text, each the role of the segment holding it."""
    t = Problem(operands).demonstration()
    roles = t.roles()
    assert len(roles) == len(t.text)
    rebuilt = Transcript()
    for role, char in zip(roles, t.text, strict=True):
        rebuilt.add(role, char)
    assert rebuilt == t


def test_segment_is_immutable():
    """A segment cannot be edited in place, so a transcript only changes through add."""
    s = Segment(Role.ACTION, "B")
    with pytest.raises(AttributeError):
        s.text = "X"  # type: ignore[misc]


@pytest.mark.parametrize("name", list(REGISTERED))
def test_carries_loss_marks_exactly_the_characters_training_pair_trains_on(name):
    """Per character of a demonstration, carries_loss() is True exactly where training_pair() has a target."""
    for problem in REGISTERED[name].demonstrations(0, 5):
        t = problem.demonstration()
        _, targets = t.training_pair()
        marks = t.carries_loss()
        assert len(marks) == len(t.text) == len(targets)
        assert marks == [target != -1 for target in targets]
        assert "".join(c for c, m in zip(t.text, marks, strict=True) if m) == counted(t)
        assert not any(marks[: len(problem.prompt)])  # the prompt never carries loss
