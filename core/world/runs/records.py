"""Typed records of what a run did, read from JSON in one place: its record (`RunMeta`), how it trained in
lockstep, and what each optimiser step reports.

Checkpoint metadata and the engine's events carry these as JSON; `RunMeta.from_dict` is the only reader of a run's
record (its scores are read by `core.world.episodes.scores`), and it refuses data of the wrong shape with one line
(`MetadataError`), so no other module indexes a metadata dict by string.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from breadth.core.world.arithmetic.problem import canonical
from breadth.core.world.environments.mix import canonical_spec, spec_name
from breadth.core.world.episodes.scores import HeldOutScore, MetadataError, SampledGroup, whole_count
from breadth.core.world.runs.recipes import FINETUNE, RecipeError, recipe, recipe_of
from breadth.core.world.runs.settings import SettingsError, held_out_count, swept


@dataclass(frozen=True)
class StepStats:
    """What one optimiser step reports."""

    step: int  # 1-based step just taken
    steps: int  # steps planned
    loss: float  # training loss of this step's batch
    elapsed: float  # seconds since training started
    metrics: Mapping[str, float] = field(default_factory=dict)  # what else a recipe measures: reward, pass@G...
    group: SampledGroup | None = None  # one of the step's sampled groups (learning from reward), for a front end


OnStep = Callable[[StepStats], bool]  # return False to stop


class Diverged(ArithmeticError):
    """Training produced a loss that is not finite; nothing it made is kept."""


@dataclass(frozen=True)
class Lockstep:
    """How a run trained in lockstep (`core.learning.lockstep`): beside which runs and in which place. Its numbers
    depend a little on its group (batches padded to the group's widest, scoring batched), so a run's group is part
    of its record and of its store key: a lockstep run is never taken for a run trained alone, nor for one of
    another group."""

    group: tuple[str, ...]  # the group's runs by the keys they have trained alone, in the stacked order
    index: int  # this run's place in the group

    def to_dict(self) -> dict:
        return {"group": list(self.group), "index": self.index}

    @classmethod
    def from_dict(cls, data: object) -> Lockstep:
        """The lockstep marker stored as `data`; MetadataError (one line) for any other shape."""
        if not isinstance(data, dict) or set(data) != {"group", "index"}:
            raise MetadataError("lockstep must be a mapping of group and index")
        group, index = data["group"], data["index"]
        if (
            not isinstance(group, list)
            or not 1 <= len(group) <= MAX_GROUP
            or not all(isinstance(key, str) and 0 < len(key) <= 64 for key in group)
        ):
            raise MetadataError(f"lockstep group must be a list of 1 to {MAX_GROUP} run keys")
        if whole_count(index, "lockstep index") >= len(group):
            raise MetadataError(f"lockstep index {index} is outside its group of {len(group)}")
        return cls(tuple(group), index)


MAX_GROUP = 1024  # runs in one lockstep group: a stored group larger than this is not one breadth wrote


@dataclass(frozen=True)
class RunMeta:
    """What a checkpoint says about its model: how it was made and, for a fine-tune, how it scored."""

    recipe: str  # the name of the recipe that made it (`core.world.runs.recipes`): "finetune", "pretrain", ...
    # (stored under the key "kind", in checkpoints and stores alike: every file written before reads the same)
    settings: object | None = None  # an instance of its recipe's settings class
    mix: str | None = None  # a fine-tune's mix in `environment=count,...` form
    seed: int | None = None  # a fine-tune's seed (also in its settings)
    held_out: int | None = None  # held-out sums per environment it was scored on (None: all)
    scores: dict[str, HeldOutScore] = field(default_factory=dict)  # environment -> held-out score
    losses: tuple[float, ...] = ()  # training loss per step
    train_seconds: float = 0.0
    eval_seconds: float = 0.0
    completed: bool = True  # False if stopped before the planned steps
    base: str | None = None  # the checkpoint a fine-tune started from
    worksheet_accuracy: float | None = None  # a pre-trained model's share of worksheet sums right
    metrics: dict[str, tuple[float, ...]] = field(default_factory=dict)  # per metric, its value at every step
    before: dict[str, float] = field(default_factory=dict)  # measured before the first step (pass@G...)
    lockstep: Lockstep | None = None  # trained in lockstep beside other runs (None: alone, one run at a time)

    def __post_init__(self) -> None:
        """Environments by their names now: a mix or scores under an old name (`two_digit=70`, as stores, checkpoints
        and records written before hold them) read as its environment's (`add_2x2=70`), so runs of either spelling
        are one mix wherever runs are grouped or compared."""
        if self.mix is not None:
            object.__setattr__(self, "mix", canonical_spec(self.mix))
        if any(canonical(name) != name for name in self.scores):
            scores = {canonical(name): replace(s, environment=canonical(name)) for name, s in self.scores.items()}
            object.__setattr__(self, "scores", scores)

    @classmethod
    def of_run(cls, settings, mix, held_out: int | None, base, measured=(), **done) -> RunMeta:
        """The record of a run of `settings`' recipe on `mix` (a `Mix`) from `base`: its recipe, mix and seed read
        from them, each step's `measured` metrics kept as one column per metric measured at every step (an environment's
        reward, measured only at steps that drew its sums, streams live but is not kept); `done` holds the rest
        (scores, losses, seconds, completed, before). Every trainer and the tests' scripted engine make records
        here, so what they record cannot drift apart."""
        keys = [k for k in (measured[0] if measured else {}) if all(k in m for m in measured)]
        metrics = {k: tuple(m[k] for m in measured) for k in keys}
        made_by = recipe_of(settings).name
        return cls(made_by, settings, mix.spec(), settings.seed, held_out, base=str(base), metrics=metrics, **done)

    @property
    def mix_label(self) -> str:
        """`a2x2 35+a3x1 35`, `pre-trained only`, or `?` for a model of unknown origin."""
        return self.mix_name(codes=True)

    def mix_name(self, codes: bool = False) -> str:
        """Its mix in words (`mix 35+35`, `two-digit 70`: `Mix.words`) or, with `codes`, as `mix_label` says it."""
        if self.mix:
            return spec_name(self.mix, codes)
        return "pre-trained only" if self.recipe == "pretrain" else "?"

    @property
    def on_mix(self) -> bool:
        """True for a run of a recipe that trains on a mix (a fine-tune), False for a base."""
        return recipe(self.recipe).on_mix

    @property
    def settings_note(self) -> str:
        """Training settings that differ from the defaults, e.g. `lr 0.001 drop 0.1`, then `lockstep 8` for a run
        trained in a lockstep group of 8 ('' for none or a base)."""
        if not self.on_mix or self.settings is None:
            return ""
        note = settings_note(self.settings)
        return f"{note} lockstep {len(self.lockstep.group)}".strip() if self.lockstep is not None else note

    @property
    def seed_text(self) -> str:
        """The seed as a table shows it (`-` when there is none)."""
        return "-" if self.seed is None else str(self.seed)

    def to_dict(self) -> dict:
        """JSON form (the inverse of `from_dict`)."""
        out: dict = {"kind": self.recipe}  # the key every stored record has
        if self.settings is not None:
            out["settings"] = self.settings.to_dict()
        if self.on_mix:
            out |= {
                "mix": self.mix,
                "seed": self.seed,
                "held_out": self.held_out,
                "scores": {name: s.to_dict() for name, s in self.scores.items()},
                "eval_seconds": round(self.eval_seconds, 3),
                "completed": self.completed,
                "steps_taken": len(self.losses),
                "base": self.base,
            }
        if self.worksheet_accuracy is not None:
            out["worksheet_accuracy"] = self.worksheet_accuracy
        if self.metrics:  # only recipes that measure more than the loss: other records keep their old form
            out["metrics"] = {name: [round(x, 5) for x in values] for name, values in self.metrics.items()}
        if self.before:
            out["before"] = {name: round(x, 5) for name, x in self.before.items()}
        if self.lockstep is not None:  # only runs trained in lockstep: other records keep their old form
            out["lockstep"] = self.lockstep.to_dict()
        out |= {"train_seconds": round(self.train_seconds, 3), "losses": [round(x, 5) for x in self.losses]}
        return out

    @classmethod
    def from_dict(cls, data: object) -> RunMeta:
        """The record stored as `data`; MetadataError naming the first field of the wrong shape."""
        if not isinstance(data, dict):
            raise MetadataError(f"metadata must be a mapping, not {type(data).__name__}")
        try:
            made_by = recipe(data.get("kind", FINETUNE))
        except RecipeError as e:
            raise MetadataError(f"kind: {e}") from None
        settings = None
        if data.get("settings") is not None:
            try:
                settings = made_by.settings.from_dict(data["settings"])
            except SettingsError as e:
                raise MetadataError(f"settings: {e}") from None
        mix = data.get("mix")
        if mix is not None and not isinstance(mix, str):
            raise MetadataError(f"mix must be text such as add_2x2=70, not {type(mix).__name__}")
        seed = data.get("seed")
        if seed is not None:
            seed = whole_count(seed, "seed")
        try:
            held_out = held_out_count(data.get("held_out"))
        except SettingsError as e:
            raise MetadataError(str(e)) from None
        scores = data.get("scores") or {}
        if not isinstance(scores, dict):
            raise MetadataError(f"scores must be a mapping, not {type(scores).__name__}")
        losses = data.get("losses") or []
        if not isinstance(losses, list) or not all(_is_number(x) for x in losses):
            raise MetadataError("losses must be a list of numbers")
        base = data.get("base")
        if base is not None and not isinstance(base, str):
            raise MetadataError(f"base must be a path, not {type(base).__name__}")
        accuracy = data.get("worksheet_accuracy")
        if accuracy is not None and not (_is_number(accuracy) and 0 <= accuracy <= 1):
            raise MetadataError(f"worksheet_accuracy must be a number from 0 to 1, not {accuracy!r}")
        completed = data.get("completed", True)
        if not isinstance(completed, bool):
            raise MetadataError(f"completed must be true or false, not {completed!r}")
        metrics = data.get("metrics") or {}
        if not isinstance(metrics, dict) or not all(
            isinstance(v, list) and len(v) <= len(losses) and all(_is_number(x) for x in v) for v in metrics.values()
        ):
            raise MetadataError("metrics must map each name to a list of numbers, one per step")
        before = data.get("before") or {}
        if not isinstance(before, dict) or not all(_is_number(x) for x in before.values()):
            raise MetadataError("before must map each name to a number")
        lockstep = None if data.get("lockstep") is None else Lockstep.from_dict(data["lockstep"])
        return cls(
            made_by.name,
            settings,
            mix,
            seed,
            held_out,
            {str(name): HeldOutScore.from_dict(str(name), s) for name, s in scores.items()},
            tuple(float(x) for x in losses),
            _seconds(data, "train_seconds"),
            _seconds(data, "eval_seconds"),
            completed,
            base,
            accuracy,
            {str(name): tuple(float(x) for x in values) for name, values in metrics.items()},
            {str(name): float(x) for name, x in before.items()},
            lockstep,
        )


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _seconds(data: dict, key: str) -> float:
    x = data.get(key, 0.0)
    if not _is_number(x) or x < 0:
        raise MetadataError(f"{key} must be a number of seconds, not {x!r}")
    return float(x)


def settings_note(settings: object) -> str:
    """What sets a run apart from the plate's recipe at its defaults (the seed aside), e.g. `lr 0.001 drop 0.1`:
    the recipe's label first when it is not the plate's (`reward lr 0.001`); '' for none."""
    made_by = recipe_of(settings)
    changed = [
        f"{s.short} {s.show(getattr(settings, s.name))}"
        for s in swept(type(settings))
        if getattr(settings, s.name) != s.default
    ]
    return " ".join(([] if made_by.name == FINETUNE else [made_by.label]) + changed)
