"""A plain `pip install .` carries the default story: `breadth-tui --demo` has its acts outside the source tree."""

from __future__ import annotations

from test_install import SLOW, _run


@SLOW
def test_the_installed_package_tells_the_default_story(installed, tmp_path):
    """The default story is read from inside the installed package (package data), with all its acts."""
    out = _run(
        installed,
        "python",
        "-c",
        "from breadth.tui import story; s = story.default_story(); "
        "print(len(s.acts), len(s.probes), len(s.skipped)); print(story.__file__)",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    counts, where = out.stdout.strip().splitlines()
    assert counts == "8 8 0" and str(installed) in where
