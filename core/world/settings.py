"""Training and evaluation settings as dataclasses that check their own limits, importable without torch.

Every front end (the command line, the app's form, the engine session) builds settings through these
classes, so a value is accepted or refused the same way everywhere, with the same one-line message.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import ClassVar

from .episode import MAX_LENGTH

HELD_OUT = 30  # held-out sums per family, as on the plate
MAX_SEED = 2**32 - 1  # seeds are whole numbers from 0 to this


class SettingsError(ValueError):
    """A setting outside its limits or of the wrong kind; the message is one line for people."""


def _check_number(name: str, value: object, kind: type, low: float, high: float, open_low: bool = False) -> None:
    """Refuse `value` unless it is a `kind` (bool never counts) within [low, high] (or (low, high])."""
    words = name.replace("_", " ")
    ok_kind = isinstance(value, int) if kind is int else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_kind:
        what = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{words} must be {what}, not {value!r}")
    inside = (low < value if open_low else low <= value) and value <= high
    if not inside or (isinstance(value, float) and not math.isfinite(value)):
        lo = "above" if open_low else "from"
        raise SettingsError(f"{words} must be {lo} {low:g} to {high:g}, not {value!r}")


def _from_text(name: str, text: str, kind: type):
    """`text` read as `kind` (int or float), or SettingsError naming the setting."""
    text = text.strip()
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{name.replace('_', ' ')} must be {what}, not {text!r}") from None


class _Checked:
    """Limits per field, checked on construction; `from_text` and `from_dict` build from outside data."""

    LIMITS: ClassVar[dict[str, tuple[type, float, float, bool]]] = {}  # field -> (kind, low, high, low open)
    FLAGS: ClassVar[dict[str, str]] = {}  # field -> the name people type, where it differs

    def __post_init__(self) -> None:
        for name, (kind, low, high, open_low) in self.LIMITS.items():
            _check_number(self.FLAGS.get(name, name), getattr(self, name), kind, low, high, open_low)

    def to_dict(self) -> dict:
        """The fields as plain JSON values."""
        return asdict(self)

    @classmethod
    def from_text(cls, **texts: str):
        """Settings from text fields as typed by a person (unnamed fields keep their defaults)."""
        return cls(**{name: _from_text(name, text, cls.LIMITS[name][0]) for name, text in texts.items()})

    @classmethod
    def from_dict(cls, data: object):
        """Settings from JSON data (a checkpoint's metadata, a protocol command); unknown keys are refused."""
        if not isinstance(data, dict):
            raise SettingsError(f"settings must be a mapping, not {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in names)
        if unknown:
            raise SettingsError(f"unknown setting {unknown[0]!r}; known: {', '.join(sorted(names))}")
        return cls(**data)


@dataclass(frozen=True)
class FinetuneSettings(_Checked):
    """Fine-tuning hyper-parameters; the defaults are the recipe that gives the plate's pattern on every seed."""

    steps: int = 400  # optimiser steps
    lr: float = 1.5e-3  # constant AdamW learning rate
    batch_size: int = 8  # demonstrations per step, drawn without replacement each step
    dropout: float = 0.2  # dropout while fine-tuning: what makes copying two-digit numbers hold on every seed
    weight_decay: float = 0.0  # AdamW weight decay
    seed: int = 0  # seeds the demonstrations, the held-out sets, batch order and dropout

    LIMITS: ClassVar = {
        "steps": (int, 1, 100_000, False),
        "lr": (float, 0.0, 1.0, True),
        "batch_size": (int, 1, 1000, False),
        "dropout": (float, 0.0, 0.9, False),
        "weight_decay": (float, 0.0, 1.0, False),
        "seed": (int, 0, MAX_SEED, False),
    }


@dataclass(frozen=True)
class PretrainSettings(_Checked):
    """Pre-training hyper-parameters."""

    steps: int = 600  # optimiser steps
    lr: float = 2e-3  # peak learning rate
    warmup: int = 50  # linear warm-up steps, then cosine decay to lr/10 (a shorter run only warms up)
    batch_size: int = 64  # windows per step
    seed: int = 0  # seeds the worksheets, initial weights and batch order
    windows: str = "lines"  # "lines": every window starts at a line's start, as an episode does; "anywhere"

    LIMITS: ClassVar = {
        "steps": (int, 1, 100_000, False),
        "lr": (float, 0.0, 1.0, True),
        "warmup": (int, 0, 100_000, False),
        "batch_size": (int, 1, 4096, False),
        "seed": (int, 0, MAX_SEED, False),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.windows not in WINDOWS:
            raise SettingsError(f"windows must be {' or '.join(WINDOWS)}, not {self.windows!r}")

    @classmethod
    def from_text(cls, **texts: str) -> PretrainSettings:
        """Settings from text fields as typed by a person; `windows` is taken as typed."""
        windows = texts.pop("windows", cls.windows).strip()
        return cls(**{n: _from_text(n, t, cls.LIMITS[n][0]) for n, t in texts.items()}, windows=windows)


WINDOWS = ("lines", "anywhere")  # where pre-training windows start in the worksheet stream
POSITIONS = ("learned", "rope")  # position schemes: a learned table of absolute positions, or rotary


@dataclass(frozen=True)
class ModelShape(_Checked):
    """The shape of a model that pre-training creates (the fields of the learning layer's GPTConfig)."""

    n_layer: int = 3  # transformer blocks
    n_head: int = 4  # attention heads per block
    n_embd: int = 96  # residual stream width
    block_size: int = 64  # context in characters: holds the longest episode (core.world.episode.MAX_LENGTH)
    position: str = "learned"  # "learned" absolute positions or "rope" rotary embeddings

    LIMITS: ClassVar = {
        "n_layer": (int, 1, 48, False),
        "n_head": (int, 1, 64, False),
        "n_embd": (int, 1, 4096, False),
        "block_size": (int, MAX_LENGTH, 1024, False),  # an episode must fit in the context
    }
    FLAGS: ClassVar = {"n_layer": "layers", "n_head": "heads", "n_embd": "width", "block_size": "context"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n_embd % self.n_head:
            raise SettingsError(f"width {self.n_embd} is not a multiple of heads {self.n_head}")
        if self.position not in POSITIONS:
            raise SettingsError(f"position must be {' or '.join(POSITIONS)}, not {self.position!r}")

    @classmethod
    def from_text(cls, **texts: str) -> ModelShape:
        """A shape from text fields as typed by a person; `position` is taken as typed."""
        position = texts.pop("position", cls.position).strip()
        typed = {n: _from_text(cls.FLAGS[n], t, cls.LIMITS[n][0]) for n, t in texts.items()}
        return cls(**typed, position=position)


MAX_HELD_OUT = 100_000  # far above any family's size: `min(count, held-out pool)` is what is played


def held_out_count(value: object) -> int | None:
    """A held-out size checked: a whole number from 1 to MAX_HELD_OUT, or None for every held-out sum."""
    if value is None:
        return None
    _check_number("held_out", value, int, 1, MAX_HELD_OUT)
    return value  # type: ignore[return-value]


def held_out_from_text(text: str) -> int | None:
    """A held-out size typed by a person: a number, or `all`."""
    text = text.strip()
    if text == "all":
        return None
    return held_out_count(_from_text("held_out", text, int))
