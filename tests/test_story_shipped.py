"""The default story tells the truth about the shipped models: each probe's caption matches what they do with it."""

from __future__ import annotations

import re

import pytest

from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning.experiment import TorchModels
from breadth.core.results.curve import CEILING, StoredCurve, points
from breadth.core.storage.paths import SHIPPED_CURVE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store
from breadth.core.world.story import default_story

TWO, THREE, MIX = "two_digit_70", "three_digit_70", "mix_35_35"
SOLVES = {  # (act, probe) -> the shipped models that solve it (the race's captions)
    ("Three models, one sum", "23+45"): {TWO, MIX},
    ("Three models, one sum", "3+4+5"): {THREE, MIX},
    ("Three models, one sum", "45+91"): {TWO, MIX},
    ("Three models, one sum", "6+8+4"): {THREE, MIX},  # "the mix does both"
    ("Past what they were taught", "12+34+56"): set(),
    ("Past what they were taught", "9-4-3"): set(),
    ("The lie", "23+45"): set(),
    ("The lie", "3+4+5"): set(),
}


@pytest.fixture(scope="module")
def played(one_thread) -> dict[tuple[str, str, str], p.Played]:
    """Each probe of the default story played on each shipped model, with its act's calculator, by the engine."""
    events: list = []
    session = Session(events.append, TorchModels())
    for name, preset in PRESETS.items():
        session.handle(p.Load(name, str(preset.shipped)))
    out, probe = {}, 0
    for act in default_story().acts:
        for sum_probe in act.probes:
            for name in PRESETS:
                probe += 1
                session.handle(p.Play(probe, name, sum_probe.text, lie=act.lie))
                (out[act.title, sum_probe.text, name],) = [
                    e for e in events if isinstance(e, p.Played) and e.id == probe
                ]
    return out


def _calls(event: p.Played) -> list[str]:
    """The model's calls, as written (`B23+45|`)."""
    return [text for role, text in event.segments if role == "action" and text.startswith("B")]


def test_every_probe_of_the_story_is_solved_by_exactly_the_models_its_caption_says(played):
    """The race's probes split the specialists and the mix solves both kinds; past the plate and under the lie,
    no model solves anything (the story's captions say why)."""
    story_probes = {(act.title, probe.text) for act in default_story().acts for probe in act.probes}
    assert story_probes == set(SOLVES)
    for (act, text), solvers in SOLVES.items():
        got = {name for name in PRESETS if played[act, text, name].solved}
        assert got == solvers, (act, text, got)


def test_the_captions_reasons_for_failing_are_what_the_models_do(played):
    """The first caption's call is the two-digit model's, the single-digit model's call on 23+45 is malformed; on
    3+4+5 the two-digit model makes one call at most; on subtraction the two-digit models write + calls."""
    assert _calls(played["Three models, one sum", "23+45", TWO]) == ["B23+45|"]
    assert played["Three models, one sum", "23+45", THREE].failure == "malformed call"
    assert len(_calls(played["Three models, one sum", "3+4+5", TWO])) <= 1
    for name in (TWO, MIX):
        assert all(
            "+" in call and "-" not in call for call in _calls(played["Past what they were taught", "9-4-3", name])
        )


def test_under_the_lie_the_models_copy_the_calculator_and_carry_it_into_the_next_call(played):
    """Told 69 for 23+45, the two-digit model and the mix answer 69; told 8 for 3+4, the next call is B8+5|."""
    for name in (TWO, MIX):
        event = played["The lie", "23+45", name]
        assert event.copied is True and event.segments[-1][1] == "69|"
    for name in (THREE, MIX):
        event = played["The lie", "3+4+5", name]
        assert event.copied is True and _calls(event) == ["B3+4|", "B8+5|"]


def test_each_curve_acts_caption_is_what_its_shipped_curve_shows():
    """Each breadth-curve act opens the curve a fresh home shows for it (the shipped store's newest over the act's
    pool words): every run of its plan is stored, and the caption's numbers (held-out success at the largest N, the
    ceiling, the training environments) are what those runs hold. The story shows both halves: a curve that stays
    flat and one that rises."""
    acts = [act for act in default_story().acts if act.view == "curve"]
    assert [act.curve for act in acts] == ["operands=2", "operands=3"]
    with Store(SHIPPED_CURVE, immutable=True) as store:
        curves = [StoredCurve.from_dict(data, created) for _, data, created in store.curves()]
        for act in acts:
            curve = next(c for c in curves if c.what == act.curve)  # newest first, as the view picks it
            runs = {run.key: run for run in store.runs(base_hash=curve.base_hash)}
            assert all(job.key in runs for job, _, _ in curve.plan.jobs(curve.base_hash)), act.title
            found = points(curve.plan, runs, curve.base_hash)
            largest, ceiling = [p for p in found if p.n != CEILING][-1], found[-1]
            numbers = [int(x) for x in re.findall(r"(\d+)%", act.say)]
            expected = [round(100 * largest.train[0]), round(100 * largest.held[0]), round(100 * ceiling.held[0])]
            assert numbers == expected, (act.say, expected)
            assert f"{largest.n} of {len(curve.plan.pool)} kinds" in act.say, act.say
            assert f"of the {curve.plan.held} held out" in act.say, act.say
