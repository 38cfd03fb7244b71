"""`python -m bench.story_shots OUT` creates its output folder (and its parents) instead of failing to write."""

from __future__ import annotations

from bench.story_shots import output_folder


def test_output_folder_is_created_with_its_parents(tmp_path):
    """A folder that does not exist yet, two levels deep, exists after output_folder; an existing one is kept."""
    out = output_folder([str(tmp_path / "out" / "story")])
    assert out == tmp_path / "out" / "story" and out.is_dir()
    (out / "kept.png").write_bytes(b"x")
    assert output_folder([str(out)]) == out and (out / "kept.png").exists()
