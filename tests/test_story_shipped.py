"""The default story tells the truth about the shipped models: each probe's caption matches what they do with it."""

from __future__ import annotations

import re

import pytest

from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning.experiment import TorchModels
from breadth.core.results.breadth_curve import CEILING, StoredCurve
from breadth.core.results.curve_points import points
from breadth.core.results.transfer_map import StoredMap
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE, SHIPPED_CURVE, SHIPPED_MAP, SHIPPED_RESULTS
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.store import Store
from breadth.core.world.episodes.verdict import Failure
from breadth.tui.screens.matrix_view import rows_of
from breadth.tui.screens.procedure_view import probes, saved_run
from breadth.tui.story import default_story
from breadth.tui.widgets.race import verdict_text

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
def played(one_thread) -> dict[tuple[str, str, str], p.ProbeFinished]:
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
                session.handle(p.Probe(probe, name, sum_probe.text, lie=act.lie))
                (out[act.title, sum_probe.text, name],) = [
                    e for e in events if isinstance(e, p.ProbeFinished) and e.id == probe
                ]
    return out


def _calls(event: p.ProbeFinished) -> list[str]:
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
    """The first caption's call is the two-digit model's, the 3 singles model's call on 23+45 is malformed; on
    3+4+5 the two-digit model makes one call at most; on subtraction the two-digit models write + calls."""
    assert _calls(played["Three models, one sum", "23+45", TWO]) == ["B23+45|"]
    assert played["Three models, one sum", "23+45", THREE].failure == "malformed call"
    assert len(_calls(played["Three models, one sum", "3+4+5", TWO])) <= 1
    for name in (TWO, MIX):
        assert all(
            "+" in call and "-" not in call for call in _calls(played["Past what they were taught", "9-4-3", name])
        )


def test_under_the_lie_the_models_copy_the_calculator_and_carry_it_into_the_next_call(played):
    """Told 69 for 23+45, the two-digit model and the mix answer 69; told 8 for 3+4, the next call is B8+5|: the
    procedure on what the calculator told, so the verdict is the copy alone. The two-digit model copies too, after a
    call the procedure does not make, and its verdict says both."""
    for name in (TWO, MIX):
        event = played["The lie", "23+45", name]
        assert event.copied is True and event.segments[-1][1] == "69|"
        assert verdict_text(event.solved, event.failure, event.copied).plain == "✗ copied the tool's lie"
    for name in (THREE, MIX):
        event = played["The lie", "3+4+5", name]
        assert event.copied is True and _calls(event) == ["B3+4|", "B8+5|"]
        assert event.failure == Failure.ANSWER_DIFFERS.value  # its calls were right, on what it was told
    event = played["The lie", "3+4+5", TWO]
    assert event.copied is True and len(_calls(event)) == 1
    both = verdict_text(event.solved, event.failure, event.copied).plain
    assert both == "✗ wrong number of calls, and copied the tool's lie"
    assert "after a wrong call" in _say("The lie", "3+4+5")


def test_each_caption_that_says_a_model_fails_is_what_that_model_does(played):
    """`The 3 singles model fails` (and the like) in a probe's caption: that model did not solve the probe; the
    first probe says which model failed, and the race's last probe names the first beat, checked by what the
    specialists do: each fails the other's sums, and the mix solves both kinds."""
    names = {"two-digit model": TWO, "3 singles model": THREE}
    for act in default_story().acts:
        for probe in act.probes:
            for words, name in names.items():
                if f"{words} fails" in probe.say:
                    assert not played[act.title, probe.text, name].solved, (probe.text, words)
    assert "3 singles model fails" in _say("Three models, one sum", "23+45")
    assert _say("Three models, one sum", "6+8+4").startswith("Narrow training does not transfer:")
    race = [probe.text for probe in default_story().acts[0].probes]
    add_2x2, single = ["23+45", "45+91"], ["3+4+5", "6+8+4"]
    assert sorted(race) == sorted(add_2x2 + single)
    assert not any(played["Three models, one sum", text, THREE].solved for text in add_2x2)
    assert not any(played["Three models, one sum", text, TWO].solved for text in single)
    assert all(played["Three models, one sum", text, MIX].solved for text in race)


def _say(act: str, text: str) -> str:
    """The caption of probe `text` in act `act` of the default story."""
    (said,) = [p.say for a in default_story().acts if a.title == act for p in a.probes if p.text == text]
    return said


def test_the_procedure_acts_moments_show_what_their_captions_say(one_thread):
    """Replayed on the shipped mix's snapshots as the procedure view replays them: no calls before the first moment
    (step 0 is babble), then calls on the wrong numbers (B74+34| for 63+77); at the second the right call and reply
    with a wrong answer, the three single digits solved; at the third both trained kinds solved and the kind it
    never saw (5+2) a malformed call."""
    (act,) = [act for act in default_story().acts if act.view == "procedure"]
    events: list = []
    session = Session(events.append, TorchModels())
    shipped = str(PRESETS[MIX].shipped)
    session.handle(p.Load(MIX, shipped))
    run = saved_run(MIX, MIX, shipped, read_header(shipped).run)
    lines = {problem.environment: problem for problem in probes(run.seed) if problem.environment in run.environments}
    played, ids = {}, iter(range(1, 1000))
    for step in run.kept:
        for family, problem in lines.items():
            probe = next(ids)
            session.handle(p.Probe(probe, MIX, problem.prompt.removesuffix("="), step=step))
            (played[step, family],) = [e for e in events if isinstance(e, p.ProbeFinished) and e.id == probe]
    first, wrong_answer, solved = (moment.step for moment in act.moments)
    assert [m.step for m in act.moments] == [80, 240, 320] and run.kept[:2] == [0, first]
    assert not any(_calls(played[0, family]) for family in lines)  # before the first moment: no calls at all
    two, three, never = "add_2x2", "add_3x1", "add_2x1"
    assert set(lines) == {two, three, never} and lines[two].prompt == "63+77=" and lines[never].prompt == "5+2="
    assert played[first, two].failure == Failure.WRONG_OPERANDS.value and _calls(played[first, two]) == ["B74+34|"]
    assert played[first, three].failure == Failure.WRONG_OPERANDS.value
    event = played[wrong_answer, two]
    assert event.failure == Failure.ANSWER_DIFFERS.value and _calls(event) == ["B63+77|"]
    assert [text for _, text in event.segments[-2:]] == ["140|", "150|"] and played[wrong_answer, three].solved
    assert played[solved, two].solved and played[solved, three].solved
    assert played[solved, never].failure == Failure.MALFORMED_CALL.value
    says = [moment.say for moment in act.moments]
    assert "B74+34| for 63+77" in says[0] and "B63+77|" in says[1] and "140" in says[1] and "150" in says[1]
    assert "(5+2)" in says[2] and "malformed call" in says[2]


def test_the_matrix_acts_reading_is_what_the_shipped_matrix_holds():
    """`no model solves more than 19% of a kind it never saw`: the largest held-out cell (not starred) of the
    matrix a fresh home shows (the shipped results), rounded as the table shows it."""
    (act,) = [act for act in default_story().acts if act.view == "matrix"]
    with Store(SHIPPED_RESULTS, immutable=True) as store:
        rows = rows_of(store.runs(base_hash=weights_hash(BASE)))
    unseen = [f.mean for row in rows for name, f in row.cells.items() if name not in row.trained and f.total]
    assert len(rows) == 27 and len(unseen) > 100
    (said,) = [int(n) for n in re.findall(r"more than (\d+)% of a kind it never saw", act.say)]
    assert said == round(100 * max(unseen)), (said, max(unseen))


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


def test_the_transfer_acts_caption_is_what_the_shipped_map_shows():
    """The transfer act opens the map a fresh home shows (the shipped store's newest): every run of its cells is
    stored, every cell the caption quotes is learned (training environments and ceiling over half), and its numbers
    are that map's: postfix subtraction held out after all the rest, after the infix subtractions alone (form), after
    the postfix additions alone (op), then the ceiling, in that order."""
    (act,) = [act for act in default_story().acts if act.view == "transfer"]
    with Store(SHIPPED_MAP, immutable=True) as store:
        (stored,) = [StoredMap.from_dict(data, created) for _, data, created in store.maps()]
        runs = {run.key: run for run in store.runs(base_hash=stored.base_hash)}
    readings = {(c.design, c.vary): r for c, r in stored.readings(runs)}
    postfix_sub = ("form=postfix", "op=sub")
    quoted = [readings[postfix_sub, vary] for vary in ((), ("form",), ("op",))]
    assert all(r is not None and r.learned for r in quoted)
    expected = [round(100 * r.held[0]) for r in quoted] + [round(100 * quoted[0].ceiling[0])]
    assert [int(x) for x in re.findall(r"(\d+)%", act.say)] == expected, (act.say, expected)
    assert (
        "Postfix subtraction held out" in act.say and "after infix minus" in act.say and "after postfix plus" in act.say
    )


def test_the_talks_three_beats_come_in_order_each_as_the_shipped_models_and_stores_show(played):
    """The arc a listener must not miss, in order: narrow training does not transfer (said at the race's end, where
    each specialist fails the other's sums), then where breadth stops (a curve whose held-out success stays under
    10% however many kinds of two-number sums are trained on), then where breadth along one dimension carries (held
    out, three-number sums climb from under 5% to at least half their ceiling as the kinds trained on grow)."""
    acts = default_story().acts
    narrow = next(i for i, act in enumerate(acts) for probe in act.probes if "does not transfer" in probe.say)
    stops = next(i for i, act in enumerate(acts) if act.view == "curve" and "stops" in act.title)
    carries = next(i for i, act in enumerate(acts) if act.view == "curve" and "carries" in act.title)
    assert narrow < stops < carries
    assert (
        not played["Three models, one sum", "3+4+5", TWO].solved
        and not played["Three models, one sum", "23+45", THREE].solved
    )
    with Store(SHIPPED_CURVE, immutable=True) as store:
        curves = [StoredCurve.from_dict(data, created) for _, data, created in store.curves()]
        held = {}
        for act in (acts[stops], acts[carries]):
            curve = next(c for c in curves if c.what == act.curve)
            runs = {run.key: run for run in store.runs(base_hash=curve.base_hash)}
            found = points(curve.plan, runs, curve.base_hash)
            held[act.title] = ([p.held[0] for p in found if p.n != CEILING], found[-1].held[0])
    flat, ceiling = held[acts[stops].title]
    assert max(flat) < 0.10 and ceiling > 0.5, (flat, ceiling)
    rising, ceiling = held[acts[carries].title]
    assert rising[0] < 0.05 and rising[-1] >= ceiling / 2, (rising, ceiling)
