"""Call forms: each registered form is posed, written, parsed and judged end to end; other forms' calls fail."""

from __future__ import annotations

import itertools

import pytest

from breadth.core.world.arithmetic.calculator import (
    DROPPED,
    FORMS,
    SYNTAX,
    Call,
    CallSyntax,
    FormError,
    Lie,
    form_named,
    register_form,
)
from breadth.core.world.arithmetic.operations import ADD, OPERATIONS, SUB
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.episode import MAX_LENGTH, End, Episode
from breadth.core.world.episodes.rollout import run_episodes
from breadth.core.world.episodes.verdict import Failure, judge
from breadth.core.world.text.transcript import Role, Segment, Transcript

KEPT = list(FORMS.values())
ALL = [*KEPT, *DROPPED]  # a form works end to end registered or not (the measurement plays the dropped ones too)
PROBLEMS = [Problem((23, 45)), Problem((3, 4, 5)), Problem((99, 99, 99, 99)), Problem((9, 4, 3), op="-")]


class Demonstrator:
    """Writes a fixed string of actions per episode, one character whenever the environment lets the model write."""

    def __init__(self, episodes: list[Episode], scripts: list[str]):
        self.episodes, self.scripts = episodes, scripts

    def step(self, chars: list[str]) -> list[str]:
        written = [len([r for r in ep.transcript.roles() if r is Role.ACTION]) for ep in self.episodes]
        return [s[n] if n < len(s) else "7" for s, n in zip(self.scripts, written, strict=True)]


def actions(problem: Problem, form: CallSyntax) -> str:
    """The demonstrator's own characters for `problem` in `form`: its calls and its answer."""
    return "".join(s.text for s in problem.demonstration(form).segments if s.role is Role.ACTION)


def play(problem: Problem, form: CallSyntax, script: str) -> Episode:
    """One episode of `problem` posed in `form`, the model's characters read from `script`."""
    episode = Episode(form.prompt(problem.operands, problem.operation), syntax=form)
    (played,) = run_episodes(Demonstrator([episode], [script]), [episode])
    return played


def test_the_plates_form_comes_first_and_writes_as_before():
    """The first form is the plate's: `23+45=` posed, `B23+45|` called, `68|` answered, byte for byte."""
    assert next(iter(FORMS.values())) is SYNTAX and form_named("infix") is SYNTAX
    problem = Problem((23, 45))
    assert SYNTAX.prompt(problem.operands, problem.operation) == problem.prompt == "23+45="
    assert problem.demonstration(SYNTAX).text == "23+45=B23+45|68|68|"
    assert play(problem, SYNTAX, actions(problem, SYNTAX)).transcript == problem.demonstration()


@pytest.mark.parametrize("form", ALL, ids=lambda f: f.name)
@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.prompt)
def test_a_demonstration_in_each_form_plays_back_and_is_judged_correct(form, problem):
    """A form's demonstrated calls, played in an episode posed in that form, rebuild its transcript and solve it."""
    episode = play(problem, form, actions(problem, form))
    prompt = form.prompt(problem.operands, problem.operation)
    assert episode.transcript == Transcript([Segment(Role.PROMPT, prompt), *problem.demonstration(form).segments[1:]])
    assert [c.body for c in episode.calls] == problem.expected_calls(form)
    assert all(c.result != form.malformed for c in episode.calls)
    assert judge(episode, problem).solved


@pytest.mark.parametrize("form", ALL, ids=lambda f: f.name)
@pytest.mark.parametrize("op", list(OPERATIONS))
def test_the_longest_demonstration_of_each_form_fits_the_context(form, op):
    """Four two-digit numbers (the largest running results) in any form fit the 64-character context."""
    problem = Problem((99, 10, 10, 10) if op == "-" else (99, 99, 99, 99), op=op)
    episode = play(problem, form, actions(problem, form))
    assert episode.end is End.ANSWERED and judge(episode, problem).solved
    assert len(episode.transcript.text) + 1 <= MAX_LENGTH  # and the start token


@pytest.mark.parametrize("asked, written", list(itertools.permutations(ALL, 2)), ids=lambda f: f.name)
def test_a_call_written_in_another_form_is_malformed(asked, written):
    """A call in another form never gets a result: `?|` where both open calls alike (else `?|` or no call at all)."""
    problem = Problem((23, 45))
    call = written.write(written.body(23, ADD, 45))
    episode = play(problem, asked, call + "0" + asked.close)  # the call, then an answer that copies nothing
    assert all(c.result == asked.malformed for c in episode.calls)
    failure = judge(episode, problem).failure
    if written.open == asked.open:
        assert len(episode.calls) == 1 and failure is Failure.MALFORMED_CALL
    else:  # `B+(23,45)|` in the parenthesised form: `B+` is answer text, `(23,45)` a malformed call
        assert failure is (Failure.MALFORMED_CALL if episode.calls else Failure.NO_CALL)


@pytest.mark.parametrize("form", ALL, ids=lambda f: f.name)
def test_each_form_parses_its_own_binary_calls_only(form):
    """A form parses every `a op b` it writes back to the call; three numbers in one call stay malformed."""
    for a, b, op in itertools.product(range(0, 120, 7), range(0, 120, 11), (ADD, SUB)):
        assert form.parse(form.body(a, op, b)) == Call(a, op, b)
        assert form.calculate(form.body(a, op, b)) == f"{op.apply(a, b)}{form.close}"
    assert form.calculate(form.lay_out((3, 4, 5), ADD)) == form.malformed  # binary on purpose, in every form
    assert form.calculate(form.body(1234, ADD, 1)) == form.malformed  # operands of at most three digits
    assert form.calculate(form.body(3, ADD, 4).replace("+", "*")) == form.malformed  # no `*` operation
    assert Lie.parse("off by one").tell(form.body(23, ADD, 45), form) == f"69{form.close}"


@pytest.mark.parametrize("form", ALL, ids=lambda f: f.name)
def test_every_prompt_says_its_form(form):
    """No two forms pose a sum alike, so the prompt alone tells a model which form this environment wants."""
    for problem in PROBLEMS:
        posed = {f.name: f.prompt(problem.operands, problem.operation) for f in ALL}
        assert list(posed.values()).count(posed[form.name]) == 1


def test_an_unknown_form_is_refused_in_one_line_naming_the_forms():
    """`form_named` refuses a name no form has with one line that lists the forms; case and spaces do not matter."""
    assert form_named(" INFIX ") is SYNTAX
    for name in ("prefix", "call", "", "x" * 500, None):  # `call` was measured and dropped
        with pytest.raises(FormError) as e:
            form_named(name)
        assert "\n" not in str(e.value) and ", ".join(FORMS) in str(e.value) and len(str(e.value)) < 200


@pytest.mark.parametrize(
    "fields, why",
    [
        ({"name": "infix"}, "already registered"),
        ({"name": "again"}, "as 'infix' does"),
        ({"name": "twice", "sep": "{op}", "tail": "{op}"}, "written once"),
        ({"name": "none", "sep": ","}, "written once"),
        ({"name": "letters", "lead": "add(", "sep": ",", "tail": "{op})"}, "outside the vocabulary"),
        ({"name": "digit", "open": "1"}, "a digit"),
        ({"name": "answers", "open": "|"}, "not on the answer's"),
        ({"name": "newline", "open": "\n"}, "outside the vocabulary"),
        ({"name": "early", "open": "(", "call_close": ")", "lead": "{op}(", "sep": ",", "tail": ")"}, "close early"),
    ],
    ids=lambda x: x["name"] if isinstance(x, dict) else "",
)
def test_a_form_that_cannot_work_is_refused(fields, why):
    """A taken name, a form that writes as another does, an operator written twice or never, a character outside the
    vocabulary (or the start of a line) or a digit as a delimiter, a call that opens as an answer closes or that
    writes its own closing character, is refused in one line."""
    with pytest.raises(FormError, match=why) as e:
        register_form(CallSyntax(**fields))
    assert "\n" not in str(e.value)
    assert list(FORMS.values()) == KEPT  # nothing refused was registered
