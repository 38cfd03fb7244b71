"""The plate's three training mixes as Preset records: name, label, mix, published numbers, shipped model.

The shipped models are named anywhere a checkpoint is asked for: `checkpoint_path("two_digit_70")` is the
installed file, so `breadth play two_digit_70 23+45` works from any folder after a plain `pip install .`;
a file of that name in the folder comes first, as a typed path always does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from breadth.core.storage.files import user_path
from breadth.core.storage.header import CheckpointError
from breadth.core.storage.paths import shipped_checkpoint
from breadth.core.world.environments.mix import Mix


@dataclass(frozen=True)
class Preset:
    """One of the plate's mixes, with everything known about it in one place."""

    name: str  # command-line name and the shipped checkpoint's file name, e.g. `mix_35_35`
    label: str  # for people, in the environments' plain words: `three single digits 70`, `mix 35+35`
    mix: Mix
    plate: dict[str, int] = field(compare=False)  # the plate's published held-out success, % per environment

    @property
    def shipped(self) -> Path:
        """The shipped model: this mix fine-tuned from the shipped base, seed 0, default settings."""
        return shipped_checkpoint(self.name)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("two_digit_70", "two-digit sums 70", Mix.of(add_2x2=70), {"add_2x2": 100, "add_3x1": 0}),
        Preset("three_digit_70", "three single digits 70", Mix.of(add_3x1=70), {"add_2x2": 0, "add_3x1": 93}),
        Preset("mix_35_35", "mix 35+35", Mix.of(add_2x2=35, add_3x1=35), {"add_2x2": 30, "add_3x1": 83}),
    )
}
DEFAULT_PRESET = "mix_35_35"  # the app opens with this preset's shipped model


def preset_of(mix: Mix) -> Preset | None:
    """The preset with exactly this mix, if any."""
    return next((p for p in PRESETS.values() if p.mix == mix), None)


# the shipped models by name: the base the plate's fine-tunes start from, the pool's larger base, the plate's three
SHIPPED = ("base", "pool_base", *PRESETS)


class UnknownCheckpoint(CheckpointError):
    """Text that names neither a checkpoint file nor a shipped model; the message is one line with the names."""


def shipped_named(text: str) -> Path | None:
    """The shipped model called `text` (any case, `-` for `_`: `two-digit-70`), or None."""
    key = text.strip().lower().replace("-", "_").removesuffix(".safetensors")
    return shipped_checkpoint(key) if key in SHIPPED else None


def checkpoint_path(text: str) -> Path:
    """A checkpoint as a person names it: a file (`~` expanded), else a shipped model's name; UnknownCheckpoint
    (one line listing the shipped names) for text that is neither."""
    path = user_path(text)
    if path.exists() or path.is_symlink():
        return path
    shipped = shipped_named(text)
    if shipped is not None:
        return shipped
    names = ", ".join(SHIPPED)
    raise UnknownCheckpoint(f"{text}: no such checkpoint file, and no shipped model of that name ({names})")
