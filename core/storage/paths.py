"""Where breadth's files live: the shipped checkpoints (package data) and the user's data folder.

The shipped checkpoints are found through `importlib.resources`, so a plain `pip install .` works
without the source tree. Nothing is ever written into the installed package: models made by the
user go to the user's data folder (`platformdirs`, e.g. `~/.local/share/breadth`) or where they say.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from platformdirs import user_data_path


def shipped_checkpoint(name: str) -> Path:
    """The shipped checkpoint `name` (`base`, `mix_35_35`, ...), inside the installed `checkpoints` package."""
    return Path(str(files("breadth.checkpoints").joinpath(f"{name}.safetensors")))


BASE = shipped_checkpoint("base")  # the shipped pre-trained model every fine-tune starts from


LOG_LIMIT = 1_000_000  # bytes a log in the user's folder (app.log, engine.log) keeps: past this it starts afresh


def data_dir() -> Path:
    """The user's breadth folder: `BREADTH_HOME`, else the platform's user data folder."""
    home = os.environ.get("BREADTH_HOME")
    return Path(home) if home else user_data_path("breadth", appauthor=False)


def runs_dir() -> Path:
    """Where models trained in the app are saved as soon as they finish: `BREADTH_RUNS`, else `data_dir()/runs`."""
    runs = os.environ.get("BREADTH_RUNS")
    return Path(runs) if runs else data_dir() / "runs"


def default_base_out() -> Path:
    """Where `breadth pretrain` writes when not told: the user's folder, never the installed package."""
    return data_dir() / "base.safetensors"
