"""Typed records of what a run did and scored, read from JSON in one place.

Checkpoint metadata and the engine's events carry these as JSON; `HeldOutScore.from_dict` and
`RunMeta.from_dict` are the only readers, and they refuse data of the wrong shape with one line
(`MetadataError`), so no other module indexes a metadata dict by string or computes a rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from breadth.core.world.environments.mix import spec_name
from breadth.core.world.runs.recipes import FINETUNE, RecipeError, recipe, recipe_of
from breadth.core.world.runs.settings import SettingsError, held_out_count, swept
from breadth.core.world.text.transcript import Role, Segment

EXAMPLES_KEPT = 3  # failed transcripts a score keeps per family and run (the first ones, in held-out order)
_EXAMPLE_CHARS = 200  # longest example text read back (episodes are at most the 64-character context)


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


class MetadataError(ValueError):
    """Run metadata of an unexpected shape; the message is one line for people."""


@dataclass(frozen=True)
class FailedEpisode:
    """An unsolved held-out episode kept with its family's score: why it failed and what was written."""

    failure: str  # a Failure value
    segments: tuple[Segment, ...]  # the transcript, by who wrote each part

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)

    def to_dict(self) -> dict:
        return {"failure": self.failure, "segments": [[s.role.value, s.text] for s in self.segments]}

    @classmethod
    def from_dict(cls, family: str, data: object) -> FailedEpisode:
        """The example stored as `data`; MetadataError if it has the wrong shape or is implausibly long."""
        where = f"a failed episode of {family}"
        if not isinstance(data, dict) or not isinstance(data.get("failure"), str):
            raise MetadataError(f"{where} must be a mapping with a failure kind")
        out = _segments(data.get("segments"), where)
        if sum(len(s.text) for s in out) > _EXAMPLE_CHARS or len(data["failure"]) > 40:
            raise MetadataError(f"{where} is longer than any episode")
        return cls(data["failure"], tuple(out))


def _segments(segments: object, where: str) -> list[Segment]:
    """Segments stored as [[role, text], ...]; MetadataError (one line naming `where`) for any other shape."""
    if not isinstance(segments, list):
        raise MetadataError(f"{where} must list its segments")
    out = []
    for seg in segments:
        if not (isinstance(seg, list) and len(seg) == 2 and all(isinstance(x, str) for x in seg)):
            raise MetadataError(f"{where}: a segment must be [role, text]")
        try:
            out.append(Segment(Role(seg[0]), seg[1]))
        except ValueError:
            raise MetadataError(f"{where}: no role {seg[0][:20]!r}") from None
    return out


MAX_SAMPLES = 16  # episodes of a sampled group a front end is sent (a group holds up to 64)
_SAMPLE_CHARS = 1_100  # longest sampled episode read back (the largest context is 1,024 characters)


@dataclass(frozen=True)
class SampledEpisode:
    """One episode a reward run sampled, as a front end shows it: who wrote what, its reward and its verdict."""

    segments: tuple[Segment, ...]  # the transcript, by who wrote each part
    reward: float  # 1 for a correct answer, 0 otherwise
    failure: str | None  # a Failure value when not correct
    expected: bool  # correct with exactly the expected calls (not by a coincidence such as a leading zero)

    def to_dict(self) -> dict:
        return {
            "segments": [[s.role.value, s.text] for s in self.segments],
            "reward": self.reward,
            "failure": self.failure,
            "expected": self.expected,
        }

    @classmethod
    def from_dict(cls, data: object) -> SampledEpisode:
        """The episode sent as `data`; MetadataError (one line) if it has the wrong shape or is too long."""
        where = "a sampled episode"
        if not isinstance(data, dict):
            raise MetadataError(f"{where} must be a mapping")
        segments = _segments(data.get("segments"), where)
        reward, failure, expected = data.get("reward"), data.get("failure"), data.get("expected")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not 0 <= reward <= 1:
            raise MetadataError(f"{where}: its reward must be a number from 0 to 1")
        if not (failure is None or (isinstance(failure, str) and len(failure) <= 40)) or not isinstance(expected, bool):
            raise MetadataError(f"{where}: its failure must be a kind or null, and expected true or false")
        if sum(len(s.text) for s in segments) > _SAMPLE_CHARS:
            raise MetadataError(f"{where} is longer than any episode")
        return cls(tuple(segments), float(reward), failure, expected)


@dataclass(frozen=True)
class SampledGroup:
    """The episodes a reward run sampled for one prompt at one step (at most MAX_SAMPLES of them)."""

    prompt: str  # the sum as posed: `3+4+5=`
    family: str  # the family holding it
    episodes: tuple[SampledEpisode, ...]
    size: int  # episodes in the whole group (G), at least as many as shown

    def to_dict(self) -> dict:
        return {
            "prompt": self.prompt,
            "family": self.family,
            "episodes": [e.to_dict() for e in self.episodes],
            "size": self.size,
        }

    @classmethod
    def from_dict(cls, data: object) -> SampledGroup:
        """The group sent as `data`; MetadataError (one line) if it has the wrong shape or too many episodes."""
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("prompt"), str)
            or not isinstance(data.get("family"), str)
        ):
            raise MetadataError("a sampled group must be a mapping with its prompt and family")
        if len(data["prompt"]) > _SAMPLE_CHARS or len(data["family"]) > 80:
            raise MetadataError("a sampled group's prompt or family is longer than any")
        episodes = data.get("episodes")
        if not isinstance(episodes, list) or not 0 < len(episodes) <= MAX_SAMPLES:
            raise MetadataError(f"a sampled group must list 1 to {MAX_SAMPLES} episodes")
        size = data.get("size", len(episodes))
        if isinstance(size, bool) or not isinstance(size, int) or size < len(episodes):
            raise MetadataError("a sampled group's size must be a whole number, at least its episodes shown")
        return cls(data["prompt"], data["family"], tuple(SampledEpisode.from_dict(e) for e in episodes), size)


@dataclass(frozen=True)
class HeldOutScore:
    """A family's held-out result: solved of total, and how many unsolved episodes failed each way."""

    family: str
    solved: int
    total: int
    failures: dict[str, int] = field(default_factory=dict)  # failure kind (a Failure value) -> count
    examples: tuple[FailedEpisode, ...] = ()  # the first few unsolved episodes (EXAMPLES_KEPT), if kept

    @property
    def rate(self) -> float:
        """Share solved, 0..1 (0 when nothing was scored)."""
        return self.solved / self.total if self.total else 0.0

    def percent(self) -> str:
        """`90%`, or `-` when nothing was scored."""
        return f"{100 * self.rate:.0f}%" if self.total else "-"

    def to_dict(self) -> dict:
        """JSON form, failures most frequent first."""
        kinds = dict(sorted(self.failures.items(), key=lambda kv: -kv[1]))
        out: dict = {"solved": self.solved, "total": self.total, "failures": kinds}
        if self.examples:
            out["examples"] = [e.to_dict() for e in self.examples]
        return out

    @classmethod
    def from_dict(cls, family: str, data: object) -> HeldOutScore:
        """The score stored as `data` for `family`; MetadataError if it has the wrong shape."""
        if not isinstance(data, dict):
            raise MetadataError(f"score of {family} must be a mapping, not {type(data).__name__}")
        solved, total = _count(data.get("solved"), f"{family} solved"), _count(data.get("total"), f"{family} total")
        if solved > total:
            raise MetadataError(f"{family}: solved {solved} is more than total {total}")
        failures = data.get("failures", {})
        if not isinstance(failures, dict):
            raise MetadataError(f"failures of {family} must be a mapping")
        examples = data.get("examples", [])
        if not isinstance(examples, list) or len(examples) > EXAMPLES_KEPT:
            raise MetadataError(f"examples of {family} must be a list of at most {EXAMPLES_KEPT}")
        kinds = {str(k): _count(v, f"{family} failure count") for k, v in failures.items()}
        return cls(family, solved, total, kinds, tuple(FailedEpisode.from_dict(family, e) for e in examples))


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
        if _count(index, "lockstep index") >= len(group):
            raise MetadataError(f"lockstep index {index} is outside its group of {len(group)}")
        return cls(tuple(group), index)


MAX_GROUP = 1024  # runs in one lockstep group: a stored group larger than this is not one breadth wrote


@dataclass(frozen=True)
class RunMeta:
    """What a checkpoint says about its model: how it was made and, for a fine-tune, how it scored."""

    kind: str  # the recipe that made it (`core.world.runs.recipes`): "finetune", "pretrain", ...
    settings: object | None = None  # an instance of its recipe's settings class
    mix: str | None = None  # a fine-tune's mix in `family=count,...` form
    seed: int | None = None  # a fine-tune's seed (also in its settings)
    held_out: int | None = None  # held-out sums per family it was scored on (None: all)
    scores: dict[str, HeldOutScore] = field(default_factory=dict)  # family -> held-out score
    losses: tuple[float, ...] = ()  # training loss per step
    train_seconds: float = 0.0
    eval_seconds: float = 0.0
    completed: bool = True  # False if stopped before the planned steps
    base: str | None = None  # the checkpoint a fine-tune started from
    worksheet_accuracy: float | None = None  # a pre-trained model's share of worksheet sums right
    metrics: dict[str, tuple[float, ...]] = field(default_factory=dict)  # per metric, its value at every step
    before: dict[str, float] = field(default_factory=dict)  # measured before the first step (pass@G...)
    lockstep: Lockstep | None = None  # trained in lockstep beside other runs (None: alone, one run at a time)

    @property
    def mix_label(self) -> str:
        """`a2x2 35+a3x1 35`, `pre-trained only`, or `?` for a model of unknown origin."""
        return self.mix_name(codes=True)

    def mix_name(self, codes: bool = False) -> str:
        """Its mix in words (`mix 35+35`, `two-digit 70`: `Mix.words`) or, with `codes`, as `mix_label` says it."""
        if self.mix:
            return spec_name(self.mix, codes)
        return "pre-trained only" if self.kind == "pretrain" else "?"

    @property
    def on_mix(self) -> bool:
        """True for a run of a recipe that trains on a mix (a fine-tune), False for a base."""
        return recipe(self.kind).on_mix

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
        out: dict = {"kind": self.kind}
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
        kind, settings = made_by.name, None
        if data.get("settings") is not None:
            try:
                settings = made_by.settings.from_dict(data["settings"])
            except SettingsError as e:
                raise MetadataError(f"settings: {e}") from None
        mix = data.get("mix")
        if mix is not None and not isinstance(mix, str):
            raise MetadataError(f"mix must be text such as two_digit=70, not {type(mix).__name__}")
        seed = data.get("seed")
        if seed is not None:
            seed = _count(seed, "seed")
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
            kind,
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


def _count(x: object, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 0:
        raise MetadataError(f"{what} must be a whole number from 0, not {x!r}")
    return x


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
