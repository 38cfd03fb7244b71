"""Demo mode's probes: the default story, a probes file whose bad lines are skipped and named, refusals in one line."""

from __future__ import annotations

import os

import pytest

from breadth.core.world.environments.probe import parse_sum
from breadth.tui.__main__ import USAGE_ERROR, demo_probes, main
from breadth.tui.story import default_story


def test_the_default_probes_are_all_sums_the_playground_can_pose():
    """Every probe of the default story parses, and they show one call, two calls, and an environment no plate mix
    has; without --probes the default story is told."""
    families = [parse_sum(text).environment for text in default_story().probes]
    assert {"add_2x2", "add_3x1", "add_3x2", "sub_3x1"} <= set(families)
    assert demo_probes(None) == default_story()


def test_a_probes_file_keeps_its_sums_in_order_and_names_the_lines_it_skips(tmp_path):
    """Blank lines and comments are skipped silently; a line that is not a sum is skipped with its number and why."""
    path = tmp_path / "talk.txt"
    path.write_text("# the plate\n23+45\n\n3+4+5   # two calls\n2++3\na3x2: 12+34+5\n9-4-3\n")
    story = demo_probes(str(path))
    probes, skipped = story.probes, story.skipped
    assert probes == ["23+45", "3+4+5", "9-4-3"]
    assert skipped[0].startswith("line 5: ") and skipped[1].startswith("line 6: 5 is outside a3x2's range")
    assert all("\n" not in line for line in skipped)


@pytest.mark.parametrize(
    "content, says",
    [
        (None, "no such file"),
        (b"", "the file is empty"),
        (b"abc\n", "line 1:"),
        (b"\xff\xfe23+45\n", "not UTF-8"),
        (b"1+1\n" * 20_000, "more than the 64,000"),
    ],
    ids=["missing", "empty", "all-bad", "binary", "huge"],
)
def test_a_probes_file_with_nothing_to_show_is_one_line_and_exit_2(tmp_path, capsys, content, says):
    """A missing, empty, all-bad, binary or huge probes file stops `breadth-tui --demo` before the app starts."""
    path = tmp_path / "probes.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as e:
        main(["--demo", "--probes", str(path)])
    assert e.value.code == USAGE_ERROR
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_fifo_or_probes_without_demo_is_refused(tmp_path, capsys):
    """A FIFO is never opened for a blocking read, and --probes without --demo is one line."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit):
        main(["--demo", "--probes", str(fifo)])
    assert "not a regular file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--probes", str(fifo)])
    assert e.value.code == USAGE_ERROR and "--probes goes with --demo" in capsys.readouterr().err
