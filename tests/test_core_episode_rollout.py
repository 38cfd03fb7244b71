"""The tool loop: episodes driven by a scripted policy (no weights), the environment's replies, limits and verdicts."""

from __future__ import annotations

import random

import pytest

from breadth.core.world.arithmetic.calculator import OFF_BY_ONE, Lie
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.episode import MAX_CALLS, MAX_LENGTH, End, Episode, ToolCall
from breadth.core.world.episodes.rollout import rollout
from breadth.core.world.episodes.verdict import Failure, judge
from breadth.core.world.text.transcript import Role, Segment
from breadth.core.world.text.vocab import BOS, CHARS, PAD

WAIT = "*"  # what the scripted policy proposes while the environment is writing; never used if rollout is right


class ScriptedPolicy:
    """Plays a fixed action string per row, like a model that knows the protocol but not the sums.

    It follows what is fed back: the prompt runs to its `=`, and once the policy closes a call the
    environment's result runs to its `|`. Otherwise the character fed must be the policy's own last
    choice, and the next choice is the script's next character (then `filler` for ever).
    """

    def __init__(self, scripts: list[str], filler: str = "7"):
        self.scripts = scripts
        self.filler = filler
        self.pos = [0] * len(scripts)  # script characters consumed
        self.state = ["prompt"] * len(scripts)  # prompt, act, env or done
        self.in_call = [False] * len(scripts)
        self.last = [None] * len(scripts)
        self.fed: list[list[str]] = [[] for _ in scripts]  # every character fed, per row

    def step(self, chars: list[str]) -> list[str]:
        assert len(chars) == len(self.scripts), "one character per row"
        out = []
        for i, c in enumerate(chars):
            self.fed[i].append(c)
            if c == PAD:
                self.state[i] = "done"
            elif self.state[i] == "done":
                raise AssertionError(f"row {i} fed {c!r} after padding")
            elif self.state[i] == "prompt" and c == "=":
                self.state[i] = "act"
            elif self.state[i] == "env" and c == "|":
                self.state[i] = "act"
            elif self.state[i] == "act":
                assert c == self.last[i], f"row {i}: fed {c!r}, but the policy chose {self.last[i]!r}"
                self.pos[i] += 1
                if c == "B" and not self.in_call[i]:
                    self.in_call[i] = True
                elif c == "|" and self.in_call[i]:
                    self.in_call[i] = False
                    self.state[i] = "env"
            script = self.scripts[i]
            if self.state[i] == "act":
                choice = script[self.pos[i]] if self.pos[i] < len(script) else self.filler
            else:
                choice = WAIT
            self.last[i] = choice
            out.append(choice)
        return out


def play(prompts: list[str], scripts: list[str], **kw) -> tuple[list[Episode], list[list[tuple[Role, str]]]]:
    """Roll out scripted actions; also return, per episode, every (role, character) heard by on_char."""
    heard: list[list[tuple[Role, str]]] = [[] for _ in prompts]
    episodes = rollout(ScriptedPolicy(scripts, **kw), prompts, on_char=lambda i, r, c: heard[i].append((r, c)))
    return episodes, heard


def play_one(problem: Problem, script: str, **kw) -> Episode:
    """The episode of one scripted attempt at `problem`."""
    (ep,), _ = play([problem.prompt], [script], **kw)
    return ep


def actions_of(problem: Problem) -> str:
    """The demonstrator's own characters for `problem`."""
    return "".join(s.text for s in problem.demonstration().segments if s.role is Role.ACTION)


TWO = Problem((23, 45), "two_digit")
THREE = Problem((3, 4, 5), "three_digit")


def test_two_digit_segments_in_order():
    """For 23+45 the demonstrator's actions give prompt, call, tool result `68|`, answer, in that order."""
    ep = play_one(TWO, "B23+45|68|")
    assert ep.transcript.segments == [
        Segment(Role.PROMPT, "23+45="),
        Segment(Role.ACTION, "B23+45|"),
        Segment(Role.ENVIRONMENT, "68|"),
        Segment(Role.ACTION, "68|"),
    ]
    assert ep.end is End.ANSWERED and ep.answer == "68"
    assert ep.calls == [ToolCall("23+45", "68|")]


def test_three_digit_segments_in_order():
    """For 3+4+5 two calls come out as prompt/action/environment/action/environment/action."""
    ep = play_one(THREE, "B3+4|B7+5|12|")
    assert [(s.role.value, s.text) for s in ep.transcript.segments] == [
        ("prompt", "3+4+5="),
        ("action", "B3+4|"),
        ("environment", "7|"),
        ("action", "B7+5|"),
        ("environment", "12|"),
        ("action", "12|"),
    ]
    assert ep.calls == [ToolCall("3+4", "7|"), ToolCall("7+5", "12|")]
    assert ep.answer == "12"


@pytest.mark.parametrize("operands", [(23, 45), (3, 4, 5), (99, 99), (0, 0, 0), (10, 90), (9, 9, 9)])
def test_demonstrator_actions_rebuild_the_demonstration(operands):
    """Playing a demonstration's actions in the live loop yields exactly the demonstration transcript."""
    problem = Problem(operands)
    ep = play_one(problem, actions_of(problem))
    assert ep.transcript == problem.demonstration()
    assert judge(ep, problem).solved


def test_environment_result_follows_the_closing_bar_at_once():
    """The calculator's result enters the transcript right after the model's `|` closes a call."""
    _, (heard,) = play([TWO.prompt], ["B23+45|68|"])
    text = "".join(c for _, c in heard)
    close = text.index("B23+45|") + len("B23+45|") - 1
    assert heard[close] == (Role.ACTION, "|")
    assert heard[close + 1 : close + 4] == [(Role.ENVIRONMENT, "6"), (Role.ENVIRONMENT, "8"), (Role.ENVIRONMENT, "|")]
    assert heard[close + 4] == (Role.ACTION, "6")


def test_on_char_hears_every_character_with_its_role():
    """on_char reports each character as it enters the transcript, with the role that wrote it."""
    episodes, heard = play([TWO.prompt, THREE.prompt], ["B23+45|68|", "B3+4|B7+5|12|"])
    for ep, h in zip(episodes, heard, strict=True):
        assert "".join(c for _, c in h) == ep.transcript.text
        assert [r for r, _ in h] == ep.transcript.roles()


def test_subtraction_call_gets_a_negative_result():
    """A call `7-9` gets the environment's `-2|` appended."""
    ep = play_one(Problem((1, 1)), "B7-9|2|")
    assert ep.calls == [ToolCall("7-9", "-2|")]
    assert ep.transcript.segments[2] == Segment(Role.ENVIRONMENT, "-2|")


def test_three_operand_call_gets_the_error_marker():
    """A two-digit-style single call `B3+4+5|` on 3+4+5 gets `?|` from the binary calculator."""
    ep = play_one(THREE, "B3+4+5|12|")
    assert ep.calls == [ToolCall("3+4+5", "?|")]
    assert [(s.role, s.text) for s in ep.transcript.segments] == [
        (Role.PROMPT, "3+4+5="),
        (Role.ACTION, "B3+4+5|"),
        (Role.ENVIRONMENT, "?|"),
        (Role.ACTION, "12|"),
    ]
    assert ep.answer == "12"


def test_answer_is_only_what_follows_the_last_tool_result():
    """Characters written before a call are not part of the final answer."""
    ep = play_one(TWO, "5B23+45|68|")
    assert ep.answer == "68"


def test_never_closing_the_answer_ends_too_long():
    """A model that never closes its answer ends `too_long` at the context length, with no answer."""
    ep = play_one(TWO, "B23+45|68", filler="8")
    assert ep.end is End.TOO_LONG
    assert ep.answer is None
    assert len(ep.transcript.text) == MAX_LENGTH - 1  # the start token fills the first position
    assert ep.transcript.text == "23+45=B23+45|68|68" + "8" * (MAX_LENGTH - 1 - len("23+45=B23+45|68|68"))


def test_rollout_respects_a_shorter_max_length():
    """rollout's max_length bounds the episode, start token included."""
    (ep,), _ = play(["1+1="], ["2"], filler="2")
    assert len(ep.transcript.text) == MAX_LENGTH - 1  # the default
    episodes = rollout(ScriptedPolicy(["2"], filler="2"), ["1+1="], max_length=10)
    assert episodes[0].end is End.TOO_LONG and len(episodes[0].transcript.text) == 9


def test_exactly_max_calls_calls_are_allowed():
    """An episode may make MAX_CALLS calls and still answer."""
    ep = play_one(Problem((1, 1)), "B|" * MAX_CALLS + "2|")
    assert ep.end is End.ANSWERED and ep.answer == "2"
    assert len(ep.calls) == MAX_CALLS


def test_opening_one_call_too_many_ends_the_episode():
    """Opening call number MAX_CALLS + 1 ends the episode `too_many_calls` before the call is run."""
    ep = play_one(Problem((1, 1)), "B|" * MAX_CALLS + "B1+1|2|")
    assert ep.end is End.TOO_MANY_CALLS
    assert len(ep.calls) == MAX_CALLS
    assert ep.answer is None
    assert ep.transcript.text.endswith("?|B")
    assert judge(ep, Problem((1, 1))).failure is Failure.WRONG_CALL_COUNT


def test_rows_of_different_prompt_lengths_play_as_if_alone():
    """A batch mixing prompt lengths gives every row the episode it would get alone."""
    problems = [TWO, THREE, Problem((1, 2)), Problem((99, 99)), Problem((999, 999))]
    scripts = [actions_of(p) for p in problems]
    scripts[2] = "B1+2|3"  # never closes: runs to the end while the others finish
    episodes, _ = play([p.prompt for p in problems], scripts)
    for p, s, ep in zip(problems, scripts, episodes, strict=True):
        alone = play_one(p, s)
        assert ep.transcript == alone.transcript and ep.end is alone.end and ep.calls == alone.calls
    assert [ep.end for ep in episodes] == [End.ANSWERED, End.ANSWERED, End.TOO_LONG, End.ANSWERED, End.ANSWERED]
    assert all(judge(ep, p).solved for ep, p in zip(episodes, problems, strict=True) if ep.end is End.ANSWERED)


def test_policy_sees_start_token_first_and_padding_after_the_end():
    """The policy is fed the start token first, then one character per position, and padding once a row is done."""
    policy = ScriptedPolicy(["B23+45|68|", "B1+2|3"], filler="3")
    episodes = rollout(policy, [TWO.prompt, "1+2="])
    short, long_ = policy.fed
    assert short[0] == long_[0] == BOS
    text = episodes[0].transcript.text
    fed = "".join(short[1:])
    assert fed == text + PAD * (len(fed) - len(text))  # its own text, then padding while the other row runs
    assert len(fed) > len(text)
    assert "".join(long_[1:]) == episodes[1].transcript.text[:-1]  # the last row's final choice is never fed
    assert len(long_) == MAX_LENGTH - 1


@pytest.mark.parametrize("seed", range(6))
def test_episode_never_raises_on_any_vocabulary_sequence(seed):
    """Feeding any characters of the vocabulary (padding and newline included) never raises and always ends."""
    rng = random.Random(seed)
    alphabet = CHARS + "B|B|"  # more calls and closes than uniform
    for _ in range(300):
        ep = Episode(rng.choice(["23+45=", "3+4+5=", "1+1=", ""]))
        steps = 0
        while not ep.done:
            if ep.next_forced() is None:
                ep.act(rng.choice(alphabet))
            steps += 1
            assert steps <= MAX_LENGTH
        assert len(ep.transcript.text) <= MAX_LENGTH - 1
        assert len(ep.calls) <= MAX_CALLS
        assert (ep.answer is not None) == (ep.end is End.ANSWERED)
        ep.transcript.render()  # everything written is in the vocabulary
        judge(ep, Problem((23, 45)))


class RandomPolicy:
    """Chooses uniformly among every vocabulary character, padding and newline included."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def step(self, chars: list[str]) -> list[str]:
        return [self.rng.choice(CHARS + "B|") for _ in chars]


def test_rollout_never_raises_on_random_choices():
    """Batched rollouts of a policy choosing random characters end every episode without raising."""
    prompts = [Problem(p).prompt for p in [(23, 45), (3, 4, 5), (1, 1), (999, 999), (1, 2, 3, 4)]] * 20
    for seed in range(5):
        episodes = rollout(RandomPolicy(seed), prompts)
        assert all(ep.done for ep in episodes)
        assert all(len(ep.transcript.text) <= MAX_LENGTH - 1 for ep in episodes)
        assert all(ep.transcript.text.startswith(p) for ep, p in zip(episodes, prompts, strict=True))


def test_acting_after_the_end_changes_nothing():
    """Once an episode has ended, further characters and forced reads are ignored."""
    ep = play_one(TWO, "B23+45|68|")
    before = (ep.transcript.text, list(ep.calls), ep.end)
    ep.act("B")
    ep.act("|")
    assert ep.next_forced() is None
    assert (ep.transcript.text, ep.calls, ep.end) == before


@pytest.mark.parametrize(
    "problem, script, failure",
    [
        (TWO, "67|", Failure.NO_CALL),
        (TWO, "B23+45+|69|", Failure.MALFORMED_CALL),
        (THREE, "B3+4+5|9|", Failure.MALFORMED_CALL),
        (THREE, "B3+4|7|", Failure.WRONG_CALL_COUNT),  # a two-digit procedure on a three-digit sum
        (TWO, "B2+3|B5+4|B9+5|14|", Failure.WRONG_CALL_COUNT),  # a three-digit procedure on a two-digit sum
        (TWO, "B23+54|77|", Failure.WRONG_OPERANDS),
        (THREE, "B3+5|B8+4|13|", Failure.WRONG_OPERANDS),
        (TWO, "B23+45|86|", Failure.ANSWER_DIFFERS),
        (THREE, "B3+4|B7+5|7|", Failure.ANSWER_DIFFERS),
        (TWO, "B23+45|68", Failure.UNFINISHED),
        (TWO, "B|B|B|B|B|", Failure.WRONG_CALL_COUNT),
    ],
)
def test_verdict_names_the_failure(problem, script, failure):
    """Each scripted way of getting a sum wrong gets its own failure kind."""
    verdict = judge(play_one(problem, script), problem)
    assert not verdict.solved
    assert verdict.failure is failure
    assert verdict.describe() == failure.value


@pytest.mark.parametrize("problem, script", [(TWO, "B23+45|68|"), (THREE, "B3+4|B7+5|12|")])
def test_verdict_solved(problem, script):
    """Following the procedure and copying the tool's last result is judged correct."""
    verdict = judge(play_one(problem, script), problem)
    assert verdict.solved and verdict.failure is None and verdict.describe() == "correct"


def test_right_answer_without_a_call_counts_as_solved():
    """Success is the final answer equalling the sum, as on the plate, even without calling the tool."""
    assert judge(play_one(TWO, "68|"), TWO).solved


def _lied(problem: Problem, script: str) -> Episode:
    """The episode of `script` (the model's characters only) at `problem` with a calculator off by one."""
    ep = Episode(problem.prompt, lie=Lie.parse(OFF_BY_ONE))
    while ep.next_forced() is not None:
        pass
    for char in script:
        ep.act(char)
        while ep.next_forced() is not None:
            pass
    return ep


@pytest.mark.parametrize(
    "script, failure",
    [
        ("B3+4|B8+5|14|", Failure.ANSWER_DIFFERS),  # the procedure on what it was told (8), the lie copied
        ("B3+4|B7+5|13|", Failure.WRONG_OPERANDS),  # told 8, it called on 7: not the procedure on the tool's result
        ("B34+45|80|", Failure.WRONG_CALL_COUNT),  # the two-digit model's one call
    ],
)
def test_under_a_lie_the_procedure_is_judged_on_what_the_calculator_told(script, failure):
    """Told 8 for 3+4, the procedure's next call is 8+5: a model that makes it has made the right calls (its answer
    is the copy, not a wrong operand); one that calls on the true 7 did not use the tool's result."""
    ep = _lied(THREE, script)
    assert ep.end is End.ANSWERED and judge(ep, THREE).failure is failure
