"""A talk's story read from a probes file: acts, captions, views and lies; a plain list of sums is still one act."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from breadth.core.world.environments.probe import parse_sum
from breadth.tui.story import IN_PLAIN_WORDS, VIEWS, Act, Moment, Probe, Step, default_story, read_story

CAPTION_WIDTH = 78  # the caption line's cells at 80 columns (a cell of padding each side)
CODE = re.compile(r"\b[as]\d+x\d+\b|\b(two|three)_digit\b|\bmix_\d")  # `a2x2`, `s3x1`, `two_digit`, `mix_35_35`


def caption_lines(text: str) -> int:
    """Lines `text` takes in the caption line at 80 columns, wrapped at words as the screen wraps it."""
    return len(Text(text).wrap(Console(width=CAPTION_WIDTH), CAPTION_WIDTH))


def test_a_plain_list_of_sums_is_one_untitled_act_and_each_pagedown_is_a_probe():
    """An old probes file (sums and comments only) reads as one act with no opening step: PageDown plays its sums."""
    story = read_story("# the plate\n23+45\n\n3+4+5   # two calls\n9-4-3\n")
    assert story.acts == (Act(probes=(Probe("23+45"), Probe("3+4+5"), Probe("9-4-3"))),)
    assert story.steps() == [Step(0, 0), Step(0, 1), Step(0, 2)] and story.probes == ["23+45", "3+4+5", "9-4-3"]


def test_act_headers_captions_views_and_lies_are_read_in_place():
    """`# say:` captions what is above it (the act before its first probe, else the probe); inline `# say:` too."""
    story = read_story(
        "# act: The race\n# say: three models\n# say: one sum\n23+45\n# say: one call\n3+4+5  # say: two calls\n"
        "# act: The lie\n# lie: Off by one\n23+45\n# act: The matrix\n# VIEW: Matrix\n# say: rows and columns\n"
    )
    race, lie, matrix = story.acts
    assert race == Act(
        "The race", "three models one sum", probes=(Probe("23+45", "one call"), Probe("3+4+5", "two calls"))
    )
    assert lie == Act("The lie", lie="off by one", probes=(Probe("23+45"),))
    assert matrix == Act("The matrix", "rows and columns", view="matrix")
    assert story.steps() == [Step(0), Step(0, 0), Step(0, 1), Step(1), Step(1, 0), Step(2)]
    assert story.skipped == ()


def test_a_number_lie_and_honest_are_calculators_an_act_can_use():
    """`# lie: 7` always answers 7; `# lie: honest` is the truthful calculator (no lie)."""
    story = read_story("# act: a\n# lie: 7\n1+2\n# act: b\n# lie: honest\n1+2\n")
    assert [act.lie for act in story.acts] == ["7", ""]


def test_an_unknown_view_a_bad_lie_and_a_bad_sum_are_skipped_and_named_by_line():
    """A typo never stops a talk: the line is skipped with its number and why, the rest of the story stays."""
    story = read_story("# act: x\n# view: curvy\n# lie: maybe\n2++3\n23+45\n")
    assert story.acts == (Act("x", probes=(Probe("23+45"),)),)
    assert story.skipped[0] == "line 2: no view 'curvy': an act opens one of procedure, matrix, curve, transfer"
    assert story.skipped[1].startswith("line 3: a lie is 'off by one' or a number") and "'honest'" in story.skipped[1]
    assert story.skipped[2].startswith("line 4: ") and len(story.skipped) == 3


def test_acts_whose_view_a_front_end_cannot_show_are_left_out():
    """`showing` keeps acts with no view or a view the front end has, so an act that cannot run never shows."""
    story = read_story("# act: race\n23+45\n# act: curve\n# view: curve\n# act: matrix\n# view: matrix\n")
    assert [act.title for act in story.showing(frozenset({"matrix"})).acts] == ["race", "matrix"]


def test_an_act_names_its_curve_by_the_pools_words():
    """`# curve: operands=3` picks the curve an act's curve view shows, as typed (spaces squeezed); an act without
    it shows the newest curve."""
    text = "# act: flat\n# view: curve\n# curve:  operands=2,  base x.safetensors\n# act: any\n# view: curve\n"
    story = read_story(text)
    assert [(act.view, act.curve) for act in story.acts] == [
        ("curve", "operands=2, base x.safetensors"),
        ("curve", ""),
    ]
    assert story.skipped == ()


def test_the_default_story_walks_the_plate_and_every_caption_fits_two_lines_at_80_columns():
    """The shipped story reads cleanly: the race, past what they were taught, the lie, the procedure, the matrix,
    the curve where breadth stops and the one where it carries, the transfer map; every probe poses, has a caption,
    and each caption fits the caption line at 80x24."""
    story = default_story()
    assert story.skipped == ()
    assert [(act.view, act.lie) for act in story.acts] == [
        ("", ""),
        ("", ""),
        ("", "off by one"),
        ("procedure", ""),
        ("matrix", ""),
        ("curve", ""),
        ("curve", ""),
        ("transfer", ""),
    ]
    assert {act.view for act in story.acts} - {""} == set(VIEWS)
    for act in story.acts:
        assert act.title and act.say and caption_lines(f"act 8 of 8: {act.title}  {act.say}") <= 2, act.title
        for probe in act.probes:
            parse_sum(probe.text)
            assert probe.say and caption_lines(probe.say) <= 2, probe.text
        for moment in act.moments:  # shown with the act's title, as an opening is
            assert moment.say and caption_lines(f"act 8 of 8: {act.title}  {moment.say}") <= 2, moment.step
    assert [len(act.moments) for act in story.acts if act.view == "procedure"] == [3]  # calls, a wrong answer, solved


def test_the_default_story_explains_its_jargon_where_it_first_appears():
    """The call syntax and `malformed call` are said in plain words where they first show, and the first probe says
    which model failed; the matrix's rows, columns and stars are said, then what to conclude from them."""
    story = default_story()
    first = story.acts[0].probes[0].say
    assert "B23+45|" in first and "call to the calculator" in first and '"malformed call"' in first
    assert "3 singles model fails" in first
    assert story.acts[1].probes[0].say.startswith("Three two-digit numbers.")
    matrix = next(act for act in story.acts if act.view == "matrix").say
    assert "A row per model, a column per kind of sum, * where it trained." in matrix
    assert "no model solves more than" in matrix  # the reading, checked against the store in test_story_shipped


def test_the_default_storys_first_caption_introduces_three_models_by_the_names_the_captions_use():
    """Act 1 opens on three models, each named as the later captions name it and with what it learned (it read as
    one model trained on everything)."""
    opening = default_story().acts[0].say
    assert opening.startswith("The two-digit model learned 70 two-digit sums, the 3 singles model 70 of three")
    assert "the mix 35 of each" in opening and "One model" not in opening


def test_the_default_storys_captions_name_each_model_as_its_lane_does():
    """One name per model: every `the ... model` of a caption is a shipped model's lane title without its count
    (`two-digit 70` is the two-digit model, `3 singles 70` the 3 singles model; it said "single-digit model"), and
    the mix's lane is `mix`, the captions' "the mix"."""
    from breadth.core.storage.presets import PRESETS

    lanes = [preset.mix.words().rsplit(" ", 1)[0] for preset in PRESETS.values()]
    assert lanes == ["two-digit", "3 singles", "mix"]
    story = default_story()
    said = [act.say for act in story.acts] + [probe.say for act in story.acts for probe in act.probes]
    said += [moment.say for act in story.acts for moment in act.moments]
    named = {m.group(1) for text in said for m in re.finditer(r"\b[Tt]he ([\w-]+(?: [\w-]+)?) model\b", text)}
    assert named == {"two-digit", "3 singles"}  # both specialists named, each as its lane
    assert all(name in lanes for name in named) and any("the mix" in text for text in said)


def test_no_caption_of_the_default_story_speaks_in_coordinate_codes():
    """A lay audience reads words: no act title or caption holds a family's code (`a2x2`) or a model's file name."""
    story = default_story()
    said = [act.title for act in story.acts] + [act.say for act in story.acts]
    said += [probe.say for act in story.acts for probe in act.probes]
    said += [moment.say for act in story.acts for moment in act.moments]
    assert [text for text in said if CODE.search(text)] == []


def test_a_procedure_act_reads_its_moments_with_their_captions():
    """`# step: N` in an act that opens the procedure is a moment (a snapshot to show) captioned by the `# say:` under
    it; PageDown walks the opening, then each moment. A step elsewhere, or not a whole number, is skipped by line."""
    story = read_story(
        "# act: forming\n# view: procedure\n# say: the run\n# step: 80\n# say: calls\n# step: 240\n"
        "# act: race\n# step: 5\n# act: again\n# view: procedure\n# step: soon\n# step: -3\n"
    )
    forming, race, again = story.acts
    assert forming == Act("forming", "the run", view="procedure", moments=(Moment(80, "calls"), Moment(240)))
    assert race == Act("race") and again == Act("again", view="procedure")
    assert story.steps()[:3] == [Step(0), Step(0, moment=0), Step(0, moment=1)]
    assert [line.split(":")[0] for line in story.skipped] == ["line 8", "line 11", "line 12"]
    assert "act that opens the procedure" in story.skipped[0] and "whole number" in story.skipped[1]


def test_a_failure_kinds_plain_words_fit_beside_the_storys_place_at_80_columns():
    """Under the sum box a failure kind's plain words follow where the story is (`act 7 · probe 4 of 4 · `), and
    the whole fits the line at 80 columns (76 cells inside the playground's border and padding)."""
    for kind, words in IN_PLAIN_WORDS.items():
        line = f'act 7 · probe 4 of 4 · "{kind}": {words}'
        assert len(line) <= 76, line


def test_read_story_reads_at_most_its_line_limit():
    """A file of very many lines is read only up to MAX_PROBE_LINES lines (the rest is never parsed)."""
    story = read_story("1+1\n" * 10_000)
    assert len(story.probes) == 500 and story.skipped == ()


def test_the_story_pictures_are_taken_at_each_acts_telling_step():
    """`bench.story_shots` presses PageDown a fixed number of times per picture: each lands on the act its name
    says (the procedure at its second moment, the right call with a wrong answer; the views on their openings)."""
    from bench.story_shots import SHOTS

    story = default_story()
    steps = story.steps()
    landed = {name: steps[presses - 1] for presses, name in SHOTS.items()}
    view = {name: story.acts[step.act].view for name, step in landed.items()}
    assert landed["story-4-procedure"] == Step(3, moment=1) and view["story-4-procedure"] == "procedure"
    assert [view[name] for name in ("story-5-matrix", "story-6-curve", "story-7-curve-rises")] == [
        "matrix",
        "curve",
        "curve",
    ]
    assert all(landed[name].probe is None for name in ("story-5-matrix", "story-6-curve", "story-7-curve-rises"))
    assert landed["story-3-lie"] == Step(2, 0) and landed["story-1-mix-does-both"] == Step(0, 3)
