"""Every study plan shipped in docs/studies is one `breadth study` accepts: it reads, and each of its steps is
checked by its command's own flags and plan, as the study does before any run; each plan has its page."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from breadth.core.cli.study import checked_args
from breadth.core.results.study import Study

STUDIES = sorted((Path(__file__).resolve().parent.parent / "docs" / "studies").glob("*.toml"))


def test_the_shipped_plans_are_found():
    """The glob below finds the plans the README and docs name (a moved folder would check nothing)."""
    assert {p.stem for p in STUDIES} >= {"transfer-2", "curve-3-folds", "curve-3-controls"}


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_a_shipped_plan_checks_as_breadth_study_checks_it_and_has_its_page(path, tmp_path):
    """Each step parses and plans (a flag renamed or a pool emptied since the plan was written fails here, not an
    hour into a study), and the plan's page, which says how it is read, sits beside it."""
    plan = Study.read(path)
    args = argparse.Namespace(file=path, workers=1, cluster=None, store=tmp_path / "store.sqlite")
    for step in plan.steps:
        step_args = checked_args(step, args)
        assert step_args.command == step.command
    assert path.with_suffix(".md").is_file()
