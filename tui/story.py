"""A talk's story (`breadth-tui --demo`): acts of probes with the presenter's captions, read from a probes file.

A story is a list of acts. An act has a title, a caption, at most one view it opens (the procedure forming,
the matrix, the breadth curve, the transfer map), the calculator it plays with (honest, or a lie) and probes,
each with its own caption; an act that opens the procedure has moments instead: fine-tuning steps whose
snapshot it shows, each with its caption (it opens on the first). PageDown walks the story's steps: an act's
opening (if it has a title, a caption or a view), then each of its probes or moments, then the next act.

The probes file format (every directive is a `#` comment, so a plain list of sums is still a story of one
act with no title):

    # act: Three models race          a new act, with its title
    # say: Each was fine-tuned on...  a caption: the act's (before its first probe) or the probe's above it
    # view: matrix                    the act opens a view (procedure, matrix, curve, transfer) on its opening step
    # curve: operands=3               which breadth curve its curve view shows: the store's newest over this
                                      pool (the words `breadth curve` names it by); without it, the newest
    # lie: off by one                 the calculator of the act's probes: honest, off by one, or a number
    # step: 100                       a moment of a procedure act: the snapshot kept at fine-tuning step 100
    23+45                             a probe: any sum the playground can pose (core.world.environments.probe)
    3+4+5  # say: two calls           a caption on the probe's own line

Other comments are skipped; a line that is not a sum, an unknown view, a lie the calculator cannot tell
and a moment outside a procedure act are skipped and named (`line 3: ...`), so a typo never stops a talk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from importlib import resources

from breadth.core.world.arithmetic.calculator import Lie
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.episodes.verdict import Failure

VIEWS = ("procedure", "matrix", "curve", "transfer")  # what an act may open; which a front end can show is its own
HONEST = ("", "honest")  # the words for a calculator that tells the truth
MAX_SAY = 400  # characters of one caption
MAX_CURVE_WORDS = 200  # characters of a curve's pool words (as a stored curve keeps them)
MAX_PROBE_LINES = 500  # lines read from a probes file
DEFAULT_STORY = "default_story.txt"  # shipped beside this module
IN_PLAIN_WORDS = {  # a verdict's failure kind (core.world.episodes.verdict.Failure), said once to an audience, short
    # enough to share the line under the sum box with where the story is (`act 1 · probe 2 of 4 · "no call": ...`)
    Failure.UNFINISHED.value: "it never closed its answer",
    Failure.NO_CALL.value: "it answered without the calculator",
    Failure.MALFORMED_CALL.value: "a call the calculator cannot read",
    Failure.WRONG_CALL_COUNT.value: "too few or too many calls",
    Failure.WRONG_OPERANDS.value: "calls on the wrong numbers",
    Failure.ANSWER_DIFFERS.value: "not the reply it got",
}
MAX_STEP = 10**9  # the largest fine-tuning step a moment names
_DIRECTIVE = re.compile(r"#\s*(act|say|view|lie|curve|step)\s*:(.*)", re.IGNORECASE)
_INLINE_SAY = re.compile(r"#\s*say\s*:(.*)", re.IGNORECASE)


@dataclass(frozen=True)
class Probe:
    """A sum to race and the presenter's caption for it."""

    text: str  # as written in the file (an environment may be named first: `a3x2: 12+34+56`)
    say: str = ""


@dataclass(frozen=True)
class Moment:
    """A fine-tuning step whose snapshot a procedure act shows, and the presenter's caption for it."""

    step: int
    say: str = ""


@dataclass(frozen=True)
class Act:
    """A part of the talk: its title and caption, the view it opens, the calculator it uses, its probes."""

    title: str = ""
    say: str = ""
    view: str = ""  # one of VIEWS, or '' for the race alone
    lie: str = ""  # '' (honest), 'off by one' or a number: a `Lie` spec (core.world.arithmetic.calculator)
    curve: str = ""  # the pool words of the curve its curve view shows (`operands=3`); '' for the newest curve
    probes: tuple[Probe, ...] = ()
    moments: tuple[Moment, ...] = ()  # a procedure act's snapshots to show, in order

    @property
    def opens(self) -> bool:
        """True if the act has a step of its own before its probes: a title, a caption or a view to show."""
        return bool(self.title or self.say or self.view)


@dataclass(frozen=True)
class Step:
    """One press of PageDown: an act's opening (`probe` None) or one of its probes."""

    act: int  # index into the story's acts
    probe: int | None = None  # index into the act's probes
    moment: int | None = None  # index into the act's moments


@dataclass(frozen=True)
class Story:
    """The acts of a talk and the lines of its file that were skipped (`line 3: why`)."""

    acts: tuple[Act, ...] = ()
    skipped: tuple[str, ...] = field(default=())

    @property
    def probes(self) -> list[str]:
        """Every probe's sum, in order."""
        return [probe.text for act in self.acts for probe in act.probes]

    def steps(self) -> list[Step]:
        """What PageDown walks through, in order."""
        out = []
        for i, act in enumerate(self.acts):
            out += [Step(i)] if act.opens or not (act.probes or act.moments) else []
            out += [Step(i, j) for j in range(len(act.probes))]
            out += [Step(i, moment=j) for j in range(len(act.moments))]
        return out

    def showing(self, views: set[str] | frozenset[str]) -> Story:
        """The story without the acts whose view is not among `views` (a front end shows no act it cannot run)."""
        return replace(self, acts=tuple(act for act in self.acts if not act.view or act.view in views))


def read_story(text: str) -> Story:
    """The story in a probes file's text (see the module's docstring); at most MAX_PROBE_LINES lines are read."""
    acts: list[Act] = []
    skipped: list[str] = []
    act = Act()
    above = "act"  # what a caption is added to: the act, its last probe or its last moment

    def caption(add: str) -> None:
        """Add to the caption of what is above: the act's last probe or moment, else the act."""
        nonlocal act
        if above == "moment":
            last = act.moments[-1]
            act = replace(act, moments=(*act.moments[:-1], replace(last, say=_joined(last.say, add))))
        elif above == "probe":
            last = act.probes[-1]
            act = replace(act, probes=(*act.probes[:-1], replace(last, say=_joined(last.say, add))))
        else:
            act = replace(act, say=_joined(act.say, add))

    for number, line in enumerate(text.splitlines()[:MAX_PROBE_LINES], start=1):
        line = line.strip()
        directive = _DIRECTIVE.fullmatch(line)
        if directive:
            key, value = directive.group(1).lower(), " ".join(directive.group(2).split())
            if key == "act":
                if act != Act():
                    acts.append(act)
                act, above = Act(title=value), "act"
            elif key == "say":
                caption(value)
            elif key == "curve":
                act = replace(act, curve=value[:MAX_CURVE_WORDS])
            elif key == "step":
                why = _moment_refusal(act, value)
                if why:
                    skipped.append(f"line {number}: {why}")
                else:
                    act, above = replace(act, moments=(*act.moments, Moment(int(value)))), "moment"
            else:
                why = _view_refusal(value) if key == "view" else _lie_refusal(value)
                if why:
                    skipped.append(f"line {number}: {why}")
                else:
                    act = replace(act, **{key: "" if key == "lie" and value.lower() in HONEST else value.lower()})
            continue
        sum_text, _, comment = line.partition("#")
        sum_text = sum_text.strip()
        if not sum_text:
            continue
        try:
            parse_sum(sum_text)
        except SumError as e:
            skipped.append(f"line {number}: {e}")
            continue
        said = _INLINE_SAY.fullmatch("#" + comment) if comment else None
        act, above = replace(act, probes=(*act.probes, Probe(sum_text))), "probe"
        if said:
            caption(" ".join(said.group(1).split()))
    if act != Act():
        acts.append(act)
    return Story(tuple(acts), tuple(skipped))


def _joined(before: str, add: str) -> str:
    """Caption lines joined by a space, cut at MAX_SAY characters."""
    return " ".join(part for part in (before, add) if part)[:MAX_SAY]


def _view_refusal(value: str) -> str:
    """Why `value` is not a view an act can open, or ''."""
    if value.lower() in VIEWS:
        return ""
    return f"no view {value[:20]!r}: an act opens one of {', '.join(VIEWS)}"


def _moment_refusal(act: Act, value: str) -> str:
    """Why `value` is not a moment `act` can show, or ''."""
    if act.view != "procedure":
        return "a step is a moment of an act that opens the procedure (`# view: procedure` above it)"
    if not value.isascii() or not value.isdigit() or int(value) > MAX_STEP:
        return f"a step is a fine-tuning step: a whole number from 0 to {MAX_STEP:,}, not {value[:20]!r}"
    return ""


def _lie_refusal(value: str) -> str:
    """Why `value` is not a calculator an act can use, or ''."""
    if value.lower() in HONEST:
        return ""
    try:
        Lie.parse(value.lower())
    except ValueError as e:
        return f"{e}, or 'honest'"
    return ""


def default_story() -> Story:
    """The story `breadth-tui --demo` tells when no probes file is given (shipped as `default_story.txt`)."""
    return read_story(resources.files(__package__).joinpath(DEFAULT_STORY).read_text(encoding="utf-8"))
