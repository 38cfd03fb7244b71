"""One model on one projector slide: its held-out scores per family and its loss curve, from its record alone,
drawn by the CLI (`breadth eval CHECKPOINT --figure PATH`) as well as by the app."""

from __future__ import annotations

import re
import struct

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.results.figures import SLIDE, SLIDE_DPI, model_figure
from breadth.core.storage.header import read_metadata
from breadth.core.storage.paths import shipped_checkpoint
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (AssertionError if it is not a PNG)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def font_sizes(svg: str) -> list[float]:
    """Every font size in an SVG whose text is kept as text (matplotlib writes points as px at 72 dpi)."""
    return [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]


def test_model_figure_is_a_projector_slide_with_large_type(tmp_path):
    """The shipped mix model's slide is a 1920x1080 PNG and an SVG, every text in it 16 pt or larger,
    naming the model and every family in the app's words (`mix 35+35`, `3 singles`: the long labels squeezed the bars
    and ran the subtitle into the loss's title), and its loss curve."""
    run = read_metadata(shipped_checkpoint("mix_35_35"))
    written = model_figure(run, tmp_path / "mix")
    assert written == [tmp_path / "mix.png", tmp_path / "mix.svg"]
    assert png_size(written[0].read_bytes()) == (SLIDE[0] * SLIDE_DPI, SLIDE[1] * SLIDE_DPI) == (1920, 1080)
    svg = written[1].read_text()
    sizes = font_sizes(svg)
    assert sizes and min(sizes) >= 16
    plain = ("two-digit", "3 singles", "3 two-digit minus")
    for text in ("mix 35+35, seed 0", *plain, "fine-tuning loss"):
        assert text in svg
    assert "other environments: mean 1%" in svg  # the mean outside its mix, as the score panel gives it


def test_model_figure_of_a_model_never_scored_nor_trained_says_so(tmp_path):
    """A record with no scores and no losses still makes a slide that says what is missing, not an error."""
    written = model_figure(RunMeta("finetune", mix="two_digit=5"), tmp_path / "empty", name="nothing yet")
    svg = written[1].read_text()
    assert "not evaluated on held-out sums" in svg and "no training curve kept" in svg and "nothing yet" in svg


def test_model_figure_keeps_a_family_it_does_not_know(tmp_path):
    """Scores of a family this version does not define (an older checkpoint's) still show, under their name."""
    run = RunMeta("finetune", mix="two_digit=5", scores={"gone_family": HeldOutScore("gone_family", 3, 10)})
    assert "gone_family" in model_figure(run, tmp_path / "old")[1].read_text()


@pytest.mark.slow
def test_eval_figure_draws_the_fresh_scores(capsys, tmp_path):
    """`breadth eval CHECKPOINT --held-out 2 --figure PATH` scores the model and writes PATH.png and PATH.svg."""
    out = tmp_path / "slide"
    assert main(["eval", str(shipped_checkpoint("mix_35_35")), "--held-out", "2", "--figure", str(out)]) == 0
    printed = capsys.readouterr().out.replace("\n", "")
    assert f"wrote {out}.png" in printed and f"wrote {out}.svg" in printed
    assert png_size(out.with_suffix(".png").read_bytes()) == (1920, 1080)
    assert "held-out sums (2 per environment" in out.with_suffix(".svg").read_text()


def test_eval_figure_under_a_file_is_one_line_before_evaluating(capsys, tmp_path):
    """A --figure path that cannot be written (under a regular file) is refused in one line with status 2."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["eval", str(shipped_checkpoint("mix_35_35")), "--figure", str(blocker / "slide")]) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert err == f"error: cannot write {blocker}/slide.png: a part of the path is not a folder"


def test_drawing_a_figure_twice_writes_the_same_bytes(tmp_path):
    """A figure drawn again (as re-running a README command does) is byte for byte the same PNG and SVG: no date,
    no software version, no random SVG ids."""
    from breadth.core.results.figures import matrix_figure
    from breadth.core.results.matrix import stored_rows
    from breadth.core.results.report import summarise
    from breadth.core.storage.paths import SHIPPED_RESULTS
    from breadth.core.storage.store import Store

    with Store(SHIPPED_RESULTS, immutable=True) as store:
        rows = stored_rows(summarise(store.runs()))[:6]
    first, second = matrix_figure(rows, tmp_path / "m1"), matrix_figure(rows, tmp_path / "m2")
    assert [p.suffix for p in first] == [".png", ".svg"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert b"<dc:date>" not in first[1].read_bytes()
    run = read_metadata(shipped_checkpoint("mix_35_35"))
    one, two = model_figure(run, tmp_path / "s1"), model_figure(run, tmp_path / "s2")
    assert [p.read_bytes() for p in one] == [p.read_bytes() for p in two]
