"""Training and evaluation settings as dataclasses that check their own limits, importable without torch.

Every front end (the command line, the app's form, the engine session) builds settings through these
classes, so a value is accepted or refused the same way everywhere, with the same one-line message.
A setting is declared once, as a field made by `setting(...)`: its kind, limits, flag, short label,
help and whether a sweep may vary it travel with it (`Setting`), and the command line's flags, the
store, the report's columns, run titles and the app's form all read them from `settings()`. A new
setting is one field.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from breadth.core.world.episodes.episode import MAX_LENGTH

# The lowest learning rate a step can act on: AdamW moves each weight by about lr, and a float32 number near 0.02
# (the initial weights' scale) has neighbours 1.9e-9 away, so far below this a step leaves the weights as they were
# (measured on the shipped base, 3 fine-tune steps: at lr 1e-8 97.6% of the weights change, at 1e-10 7.4%, at
# 1e-20 none; one step in tests/test_settings_bounds.py).
MIN_LR = 1e-8
# The lowest sampling temperature: logits / temperature must stay a float32 number (below 3.4e38). At 1e-38 the
# shipped models' logits (at most 10.8 in magnitude) overflow to infinity and sampling fails; at 0.01 a logit 0.5
# ahead is e^50 times likelier, so sampling is greedy decoding but for near ties, and going lower buys nothing.
MIN_TEMPERATURE = 0.01
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
        raise SettingsError(f"{words} must be {lo} {_bound(low, kind)} to {_bound(high, kind)}, not {value!r}")


def _bound(limit: float, kind: type) -> str:
    """A limit as people read it: a whole number with thousands separators (4,294,967,295), a float as %g."""
    return f"{int(limit):,}" if kind is int else f"{limit:g}"


def _from_text(name: str, text: str, kind: type):
    """`text` read as `kind` (int or float), or SettingsError naming the setting."""
    text = text.strip()
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{name.replace('_', ' ')} must be {what}, not {text!r}") from None


@dataclass(frozen=True)
class Setting:
    """Everything about one setting, declared once on its field."""

    name: str  # the field's name: `batch_size`
    kind: type  # int or float (str for a choice)
    default: Any
    low: float = 0  # limits (numbers): low <= value <= high, or low < value with open_low
    high: float = 0
    open_low: bool = False
    flag: str = ""  # what people type: `batch-size` for --batch-size and in messages as `batch size`
    short: str = ""  # a short label for tables and run titles: `batch`
    help: str = ""  # what it sets, for --help and the form
    sweep: bool = False  # a sweep may vary it, stored runs are filtered by it, run titles name it when not default
    choices: tuple[str, ...] = ()  # the values a choice takes
    form: str | None = "advanced"  # where the app's train form shows it: "main", "advanced", or None (not shown)
    label: str = ""  # its label in the form (default: the short label)

    @property
    def words(self) -> str:
        """The setting's name in messages: `batch size`."""
        return self.flag.replace("-", " ")

    def check(self, value: object) -> None:
        """SettingsError (one line) unless `value` is within this setting's kind and limits."""
        if self.choices:
            if value not in self.choices:
                raise SettingsError(f"{self.words} must be {' or '.join(self.choices)}, not {value!r}")
            return
        _check_number(self.words, value, self.kind, self.low, self.high, self.open_low)

    def read(self, text: str) -> Any:
        """A value typed by a person (SettingsError naming the setting if it is not one)."""
        return text.strip() if self.choices else _from_text(self.words, text, self.kind)

    def show(self, value: object) -> str:
        """A value as tables and titles show it: `0.0015`, `400`."""
        return f"{value:g}" if isinstance(value, float) else str(value)


def swept(settings_class: type) -> tuple[Setting, ...]:
    """The settings of a class that a sweep may vary, and that stored runs are filtered and titled by."""
    return tuple(s for s in settings_class.settings() if s.sweep)


def setting(default: Any, low: float = 0, high: float = 0, **about: Any) -> Any:
    """A dataclass field that is a setting: its default, limits and everything else about it (see `Setting`)."""
    return field(default=default, metadata={"setting": (low, high, about)})


_DECLARED: dict[type, tuple[Setting, ...]] = {}  # a settings class -> its settings, read once


class _Checked:
    """Settings whose fields are declared with `setting(...)`, checked on construction; `from_text` and
    `from_dict` build them from outside data."""

    @classmethod
    def settings(cls) -> tuple[Setting, ...]:
        """Every setting of the class, in field order, with everything declared about it."""
        if cls not in _DECLARED:
            kinds = {"int": int, "float": float, "str": str}
            out = []
            for f in fields(cls):
                low, high, about = f.metadata["setting"]
                flag = about.get("flag", f.name.replace("_", "-"))
                kind = kinds[f.type] if isinstance(f.type, str) else f.type
                short = about.get("short", flag)
                out.append(
                    Setting(
                        f.name, kind, f.default, low, high, **{"label": short, **about, "short": short, "flag": flag}
                    )
                )
            _DECLARED[cls] = tuple(out)
        return _DECLARED[cls]

    @classmethod
    def setting(cls, name: str) -> Setting:
        """The setting called `name` (a field name)."""
        return next(s for s in cls.settings() if s.name == name)

    def __post_init__(self) -> None:
        for s in self.settings():
            s.check(getattr(self, s.name))

    def to_dict(self) -> dict:
        """The fields as plain JSON values."""
        return asdict(self)

    @classmethod
    def from_text(cls, **texts: str):
        """Settings from text fields as typed by a person (unnamed fields keep their defaults)."""
        return cls(**{name: cls.setting(name).read(text) for name, text in texts.items()})

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

    steps: int = setting(400, 1, 100_000, help="optimiser steps", sweep=True, form="main")
    lr: float = setting(1.5e-3, MIN_LR, 1.0, help="AdamW learning rate (the peak with --warmup)", sweep=True)
    batch_size: int = setting(8, 1, 1000, short="batch", help="demonstrations per step", sweep=True)
    # dropout while fine-tuning: what makes copying two-digit numbers hold on every seed; kept units are scaled
    # by 1 / (1 - dropout), at most 10 here (near 1 they would be scaled towards infinity)
    dropout: float = setting(0.2, 0.0, 0.9, short="drop", label="dropout", help="dropout", sweep=True)
    # each step scales the weights by 1 - lr x weight decay, which stays from 0 to 1 with both at most 1
    weight_decay: float = setting(0.0, 0.0, 1.0, short="wd", help="AdamW weight decay", sweep=True, form=None)
    seed: int = setting(
        0, 0, MAX_SEED, help="seeds demonstrations, held-out sets, batch order and dropout", form="main"
    )
    # the learning rate's schedule: 0 keeps it at `lr` every step (the plate's); above 0 it rises linearly to `lr`
    # over this many steps, then falls by a cosine to 0 at the last step (the pool's recipe: what kept many
    # environments learned at once, issue 34, docs/environments.md)
    warmup: int = setting(
        0, 0, 100_000, help="warm-up steps, then a cosine decay to 0 (0: a constant rate)", sweep=True, form=None
    )

    def rate(self, step: int) -> float:
        """The learning rate at `step` (from 1): `lr`, or on the warm-up and cosine schedule when `warmup` is set."""
        if not self.warmup:
            return self.lr
        if step <= self.warmup:
            return self.lr * step / self.warmup
        return self.lr * 0.5 * (1 + math.cos(math.pi * (step - self.warmup) / max(1, self.steps - self.warmup)))

    def to_dict(self) -> dict:
        """The fields as plain JSON values; `warmup` only when it is set, so every run and checkpoint made at a
        constant rate (all of them before the schedule existed) keeps the key and metadata it had."""
        out = super().to_dict()
        if not self.warmup:
            del out["warmup"]
        return out


@dataclass(frozen=True)
class RewardSettings(_Checked):
    """Learning from reward (nanochat's RL recipe): groups of sampled episodes per prompt, reward 1 when correct."""

    steps: int = setting(200, 1, 2000, help="optimiser steps", sweep=True, form="main")
    lr: float = setting(
        1e-4, MIN_LR, 1.0, help="AdamW learning rate at the first step, decaying linearly to 0", sweep=True
    )
    prompts: int = setting(16, 1, 256, help="training prompts per step (a group of episodes each)", sweep=True)
    group: int = setting(
        8, 2, 64, flag="group-size", short="group", help="episodes sampled per prompt (the G of pass@G)", sweep=True
    )
    temperature: float = setting(1.0, MIN_TEMPERATURE, 5.0, short="temp", help="sampling temperature", sweep=True)
    seed: int = setting(0, 0, MAX_SEED, help="seeds the prompts, the sampling and the held-out sets", form="main")

    def __post_init__(self) -> None:
        if type(self.group) is int and self.group == 1:  # the generic limit message would not say why
            raise SettingsError("group size must be at least 2: a lone episode has no group mean to be compared with")
        super().__post_init__()
        if self.prompts * self.group > 4096:
            raise SettingsError(f"{self.prompts} prompts x {self.group} episodes is more than 4096 episodes a step")


@dataclass(frozen=True)
class PretrainSettings(_Checked):
    """Pre-training hyper-parameters."""

    steps: int = setting(600, 1, 100_000, help="optimiser steps")
    lr: float = setting(2e-3, MIN_LR, 1.0, help="peak AdamW learning rate")
    warmup: int = setting(50, 0, 100_000, help="warm-up steps before the cosine decay to lr/10")
    batch_size: int = setting(64, 1, 4096, help="worksheet windows per step")
    seed: int = setting(0, 0, MAX_SEED, help="seeds the worksheets, initial weights and batch order")
    windows: str = setting(
        "lines",
        choices=("lines", "anywhere"),
        help="where training windows start: at a line's start, as episodes do, or anywhere",
    )


@dataclass(frozen=True)
class ModelShape(_Checked):
    """The shape of a model that pre-training creates (the fields of the learning layer's GPTConfig)."""

    n_layer: int = setting(3, 1, 48, flag="layers", help="transformer blocks")
    n_head: int = setting(4, 1, 64, flag="heads", help="attention heads per block")
    n_embd: int = setting(96, 1, 4096, flag="width", help="residual stream width")
    # context in characters: holds the longest episode (core.world.episodes.episode.MAX_LENGTH)
    block_size: int = setting(MAX_LENGTH, MAX_LENGTH, 1024, flag="context", help="context in characters")
    position: str = setting("learned", choices=("learned", "rope"), help="position scheme: a learned table or rotary")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n_embd % self.n_head:
            raise SettingsError(f"width {self.n_embd} is not a multiple of heads {self.n_head}")


POSITIONS = ModelShape.setting("position").choices  # a learned table of absolute positions, or rotary


MAX_HELD_OUT = 100_000  # far above any environment's size: `min(count, held-out pool)` is what is played


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
