"""A plain (non-editable) `pip install .` works without the source tree: shipped models, `breadth`, the app."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLOW = pytest.mark.slow  # builds a wheel and installs it into a new virtual environment (about 10 s)


def _run(venv: Path, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def _shipped_two_digit(venv: Path, cwd: Path) -> Path:
    """Where the installed package keeps the shipped two-digit model."""
    script = "from breadth.core.storage.presets import PRESETS; print(PRESETS['two_digit_70'].shipped)"
    return Path(_run(venv, "python", "-c", script, cwd=cwd).stdout.strip())


@SLOW
def test_the_installed_package_carries_the_shipped_models(installed, tmp_path):
    """The shipped checkpoints (and the shipped results the matrix view falls back to) are found inside the
    installed package, not in the source tree."""
    out = _run(
        installed,
        "python",
        "-c",
        "from breadth.core.storage.presets import PRESETS; "
        "from breadth.core.storage.paths import BASE, SHIPPED_RESULTS; print(BASE); "
        "[print(p.shipped) for p in PRESETS.values()]; print(SHIPPED_RESULTS)",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    paths = [Path(line) for line in out.stdout.split()]
    assert len(paths) == 5
    for path in paths:
        assert path.is_file() and installed in path.parents and ROOT not in path.parents


@SLOW
def test_installed_breadth_plays_a_shipped_model(installed, tmp_path):
    """`breadth play <shipped two-digit model> 23+45` from the installed package solves it with one call."""
    where = _shipped_two_digit(installed, tmp_path)
    out = _run(installed, "breadth", "play", str(where), "23+45", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "23+45=B23+45|68|68|"
    assert "verdict: correct" in out.stdout


@SLOW
def test_installed_app_opens_on_the_shipped_mix_and_plays(installed, tmp_path):
    """The installed breadth-tui opens on the shipped mix model, starts its engine and plays a sum."""
    script = textwrap.dedent("""
        import asyncio, time
        from breadth.tui.app import BreadthApp

        async def main():
            app = BreadthApp()
            async with app.run_test(size=(80, 24)) as pilot:
                for ch in "23+45":
                    await pilot.press(ch)
                await pilot.press("enter")
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    views = list(app.playground.probes.values())
                    if views and views[0].state.verdict is not None and not views[0].state.pending:
                        break
                    await pilot.pause(0.1)
                print(app.current)
                print(app.entries[app.current].path)
                print(views[0].state.verdict.plain)

        asyncio.run(main())
    """)
    out = _run(installed, "python", "-c", script, cwd=tmp_path, env={"BREADTH_HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr
    current, path, verdict = out.stdout.strip().splitlines()[-3:]
    assert current == "shipped:mix_35_35" and installed in Path(path).parents
    assert verdict.startswith("✓") or verdict.startswith("✗")  # the real engine played it to a verdict


def test_every_package_folder_is_installed_under_the_breadth_namespace():
    """Every folder of core/, tui/, checkpoints/ and results/ holding an __init__.py is listed in pyproject.toml's
    packages (as breadth.<folder>), so a plain install is never missing one; nothing is installed as a top-level
    core or tui."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        "breadth." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("core", "tui", "checkpoints", "results")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert set(config["packages"]) == folders
    assert config["package-dir"] == {f"breadth.{top}": top for top in ("core", "tui", "checkpoints", "results")}


@SLOW
def test_installed_breadth_never_writes_into_the_installed_package(installed, tmp_path):
    """From a plain install, `envs --json` and `train --out` naming a shipped checkpoint in site-packages are
    refused in one line (exit 2) before any work, and the shipped checkpoint keeps its bytes."""
    where = _shipped_two_digit(installed, tmp_path)
    before = where.read_bytes()
    for argv in (["envs", "--json", where], ["train", "--mix", "two_digit=1", "--out", where]):
        out = _run(installed, "breadth", *map(str, argv), cwd=tmp_path)
        assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
        assert "installed breadth package" in out.stderr
    assert where.read_bytes() == before and installed in where.parents
