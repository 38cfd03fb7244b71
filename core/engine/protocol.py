"""Commands to the engine session and the events it answers with: small dataclasses, one JSON line each.

The UI process writes commands to the engine process's stdin (`breadth.core.engine.loop`), which answers with
events on its stdout. Messages cross as JSON, never pickle, so neither side can be made to run code
by what it reads. Both sides import this module; it needs neither torch nor Textual. A command
that starts work (Train, Probe) carries an `id` chosen by the UI, and every event about that work
carries the same `id`: one field name for every request.
"""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import get_args, get_origin, get_type_hints

from breadth.core.world.episodes.scores import HELD_OUT
from breadth.core.world.runs.recipes import FINETUNE

# commands: UI -> engine


@dataclass(frozen=True)
class Load:
    """Load the checkpoint at `path` under the name `key`."""

    key: str
    path: str


@dataclass(frozen=True)
class Train:
    """Train the base on `mix` by a recipe, evaluate, save under `out_dir` and load the result."""

    id: int  # the training job
    mix: str  # `environment=count,...`
    settings: dict  # the fields of the recipe's settings class
    base: str  # pre-trained checkpoint
    out_dir: str  # where the finished model is saved
    held_out: int | None = HELD_OUT  # held-out sums per environment for the automatic evaluation (None: all)
    snapshot_every: int = 25  # keep a copy of the weights every this many steps, and at 0 and the end (0: none)
    recipe: str = FINETUNE  # how it learns (`core.world.runs.recipes`): from demonstrations, by default


@dataclass(frozen=True)
class Stop:
    """Stop fine-tuning job `id`; the partly trained model is dropped."""

    id: int


@dataclass(frozen=True)
class Probe:
    """Play the sum `text` with the model loaded as `key`, streaming each character.

    A race is several Probes of one sum, one per model, each with its own `id`.
    """

    id: int  # the probe
    key: str
    text: str
    lie: str = ""  # the calculator lies: "" honest, "off by one" (every result + 1), or a number it always answers
    step: int | None = None  # play the snapshot kept at this fine-tuning step of `key`'s run (None: the model)


@dataclass(frozen=True)
class Save:
    """Save the model loaded as `key` to `path` (a new file; a model kept only in memory gets its file this way)."""

    id: int
    key: str
    path: str


@dataclass(frozen=True)
class ScoreEnvironments:
    """Score the model loaded as `key` on the test split of every environment named (all of them if none), a few
    environments at a time between other commands; it replaces a scoring still running (that one ends Failed)."""

    id: int  # the scoring job
    key: str
    names: list = field(default_factory=list)  # environment names (`core.world.environments.registry`); []: every one
    held_out: int = HELD_OUT  # test sums per environment


@dataclass(frozen=True)
class Quit:
    """End the engine's loop."""


# events: engine -> UI


@dataclass(frozen=True)
class Ready:
    """The engine has imported torch and waits for commands."""

    seconds: float  # time from process start to ready


@dataclass(frozen=True)
class Loaded:
    """A checkpoint is loaded and can be played."""

    key: str
    path: str
    meta: dict


@dataclass(frozen=True)
class Unloaded:
    """The engine let go of the model loaded as `key` (to bound its memory); Load it again to play it."""

    key: str


@dataclass(frozen=True)
class Step:
    """One fine-tuning step of job `id`."""

    id: int
    step: int
    steps: int
    loss: float
    elapsed: float
    metrics: dict = field(default_factory=dict)  # what else the recipe measured (learning from reward: reward, ...)


@dataclass(frozen=True)
class Measured:
    """Job `id` measured its model before the first step (learning from reward: pass@G, reward, ...)."""

    id: int
    metrics: dict  # metric key (`core.world.episodes.rewards.METRICS`) -> value


@dataclass(frozen=True)
class Rollouts:
    """One group of episodes job `id` sampled at `step` (learning from reward), sent at most ROLLOUTS_HZ a second."""

    id: int
    step: int
    group: dict  # `core.world.episodes.scores.SampledGroup.to_dict()`: plain segments (role, text), rewards, verdicts


@dataclass(frozen=True)
class Evaluating:
    """Fine-tuning of job `id` finished; the held-out evaluation is running."""

    id: int


@dataclass(frozen=True)
class Trained:
    """Job `id` is trained, evaluated, saved at `path` (or, if saving failed, '' and a note) and loaded as `key`.

    A note beside a path says what went wrong after the file was written (the run not recorded in the results
    store, and why): the model is kept either way.
    """

    id: int
    key: str
    path: str
    meta: dict  # the checkpoint's metadata: mix, seed, settings, scores, losses
    note: str = ""  # why the model is only in memory (path ''), e.g. a full disk, or why its run was not recorded


@dataclass(frozen=True)
class Stopped:
    """Job `id` stopped on request after `steps` steps; nothing was kept."""

    id: int
    steps: int


@dataclass(frozen=True)
class Char:
    """One character of probe `id`'s episode, and who wrote it (a `core.world.text.transcript.Role` value).

    For the model's own characters, `p` is the probability the model gave the character it wrote and `top` its
    four likeliest characters (the chosen one, then three alternatives) as [[char, probability], ...] (None and
    [] for a model that gives none); `lied` marks a character of a calculator result that a lying calculator
    corrupted.
    """

    id: int
    role: str
    char: str
    p: float | None = None
    top: list = field(default_factory=list)
    lied: bool = False


@dataclass(frozen=True)
class ProbeFinished:
    """Probe `id` ended: the verdict against the true sum."""

    id: int
    answer: int  # the true sum
    environment: str  # the environment holding the sum, '' if none
    solved: bool
    failure: str | None  # a core.world.episodes.verdict.Failure value when not solved
    segments: list = field(default_factory=list)  # [(role, text), ...] of the whole episode
    copied: bool | None = None  # under a lying calculator: the answer is the tool's (wrong) last result; else None


@dataclass(frozen=True)
class Snapshot:
    """Job `id` kept a copy of its weights at `step` (0: before the first step); Probe with `step` replays it."""

    id: int
    step: int


@dataclass(frozen=True)
class SnapshotScored:
    """The snapshot at `step` of the model loaded as `key` scored on a few held-out sums of every environment."""

    key: str
    step: int
    scores: dict  # environment -> HeldOutScore.to_dict()


@dataclass(frozen=True)
class EnvironmentsProgress:
    """Scoring job `id` has scored `done` of its `total` environments, `seconds` after it was asked for."""

    id: int
    done: int
    total: int
    seconds: float


@dataclass(frozen=True)
class EnvironmentsScored:
    """Scoring job `id` scored the model loaded as `key` on `held_out` test sums of seed `seed` per environment."""

    id: int
    key: str
    seed: int
    held_out: int
    scores: dict  # environment name -> HeldOutScore.to_dict() (without failed transcripts)
    seconds: float  # from the command to the last score, waits for other commands included
    busy: float  # of which spent scoring


@dataclass(frozen=True)
class Saved:
    """Save `id` wrote the model to `path`."""

    id: int
    path: str


@dataclass(frozen=True)
class Failed:
    """A command failed; `message` is one line for people."""

    what: str  # the command's name in lower case ("load", "train", "probe", "save"), or "protocol"
    message: str
    id: int | None = None  # the training job or probe it concerns


_TYPES = {
    cls.__name__: cls
    for cls in (
        *(Load, Train, Stop, Probe, Save, ScoreEnvironments, Quit),  # commands
        *(Ready, Loaded, Unloaded, Step, Evaluating, Trained, Stopped, Char, ProbeFinished, Saved, Failed),  # events
        *(Snapshot, SnapshotScored, Measured, Rollouts, EnvironmentsProgress, EnvironmentsScored),
    )
}


ROLLOUTS_HZ = 2  # sampled groups sent per second at most (each step samples one batch of groups)
MAX_COMMAND = 65_536  # characters in a command line (the UI's commands are a few hundred)
MAX_EVENT = 8_000_000  # characters in an event line (a finished run's metadata carries its loss curve)


class ProtocolError(ValueError):
    """A line that is not a known message; the message is one line."""


def encode(message) -> str:
    """One JSON line (without the newline) for a command or event."""
    return json.dumps({"type": type(message).__name__, **asdict(message)})


def decode(line: str, max_length: int = MAX_EVENT):
    """The command or event a JSON line holds, every field of its declared type; ProtocolError otherwise."""
    if len(line) > max_length:
        raise ProtocolError(f"a line of {len(line):,} characters, more than the {max_length:,} allowed")
    try:
        data = json.loads(line)
    except RecursionError:
        raise ProtocolError("a line nested too deeply") from None
    except ValueError as e:
        raise ProtocolError(f"not JSON: {line[:60]!r} ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str) or data["type"] not in _TYPES:
        raise ProtocolError(f"not a protocol message: {line[:60]!r}")
    cls = _TYPES[data.pop("type")]
    hints = get_type_hints(cls)
    for f in fields(cls):
        if f.name in data:
            if not _is(data[f.name], hints[f.name]):
                raise ProtocolError(f"{cls.__name__}.{f.name}: {type(data[f.name]).__name__} is not {hints[f.name]}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ProtocolError(f"{cls.__name__} without its {f.name}")
    return cls(**{k: v for k, v in data.items() if k in hints})


def _is(value: object, kind: object) -> bool:
    """True if a JSON value fits a field's type (bool is never a number)."""
    if isinstance(kind, types.UnionType):
        return any(_is(value, k) for k in get_args(kind))
    kind = get_origin(kind) or kind
    if kind is type(None):
        return value is None
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)
