"""Messages from the engine's reader to the app: one per engine event, each with its own handler.

Each message carries the protocol event it stands for (`breadth.core.engine.protocol`), so the fields are
defined once. None sets `can_replace`: every loss point and every character must arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from breadth.core.engine import protocol as p


@dataclass
class FromEngine(Message):
    """An event the engine sent, as a message to the app."""

    event: object


class EngineReady(FromEngine):
    """The engine has imported torch and waits for commands."""

    event: p.Ready


class ModelLoaded(FromEngine):
    """The engine holds a checkpoint under `event.key`."""

    event: p.Loaded


class TrainingStep(FromEngine):
    """One fine-tuning step of job `event.id`: its loss and time."""

    event: p.Step


class RunMeasured(FromEngine):
    """Job `event.id` measured its model before the first step (pass@G of a reward run)."""

    event: p.Measured


class RolloutsSampled(FromEngine):
    """Job `event.id` sampled a group of episodes at `event.step` (a reward run); `event.group` is plain data."""

    event: p.Rollouts


class EvaluationStarted(FromEngine):
    """Job `event.id` finished fine-tuning; the held-out evaluation runs."""

    event: p.Evaluating


class ModelTrained(FromEngine):
    """Job `event.id` is trained, scored and loaded; saved at `event.path`, or only in memory if that is ''."""

    event: p.Trained


class ModelSaved(FromEngine):
    """Save `event.id` wrote the model it named to `event.path`."""

    event: p.Saved


class TrainingStopped(FromEngine):
    """Job `event.id` stopped on request; nothing was kept."""

    event: p.Stopped


class CharStreamed(FromEngine):
    """One character of probe `event.id`'s episode, and who wrote it."""

    event: p.Char


class ProbeFinished(FromEngine):
    """Probe `event.id` ended with a verdict against the true sum."""

    event: p.Played


class CommandFailed(FromEngine):
    """A command failed (`event.what`); `event.message` says why in one line."""

    event: p.Failed


class TrainFailed(CommandFailed):
    """Training job `event.id` failed."""


class PlayFailed(CommandFailed):
    """Probe `event.id` failed: no verdict will come."""


class SaveFailed(CommandFailed):
    """Save `event.id` failed: the model is still only in the engine's memory."""


class ScoringFailed(CommandFailed):
    """Scoring job `event.id` (every environment's score of a model) failed or was replaced."""


FAILED_FOR: dict[str, type[CommandFailed]] = {
    "train": TrainFailed,
    "play": PlayFailed,
    "save": SaveFailed,
    "scoreenvironments": ScoringFailed,
}


class ModelUnloaded(FromEngine):
    """The engine let go of `event.key` (to bound its memory); it is loaded again when chosen."""

    event: p.Unloaded


class SnapshotKept(FromEngine):
    """Job `event.id` kept its weights at `event.step`; that step can be replayed (Play with `step`)."""

    event: p.Snapshot


class SnapshotScored(FromEngine):
    """The snapshot at `event.step` of `event.key` was scored on a few held-out sums of every family."""

    event: p.SnapshotScored


class EnvironmentsProgressed(FromEngine):
    """Scoring job `event.id` has scored `event.done` of `event.total` environments."""

    event: p.EnvironmentsProgress


class EnvironmentsScored(FromEngine):
    """Scoring job `event.id` scored a model on every environment it was asked for: `event.scores` is plain data."""

    event: p.EnvironmentsScored


FOR_EVENT: dict[type, type[FromEngine]] = {
    p.Ready: EngineReady,
    p.Loaded: ModelLoaded,
    p.Unloaded: ModelUnloaded,
    p.Step: TrainingStep,
    p.Measured: RunMeasured,
    p.Rollouts: RolloutsSampled,
    p.Evaluating: EvaluationStarted,
    p.Trained: ModelTrained,
    p.Stopped: TrainingStopped,
    p.Saved: ModelSaved,
    p.Char: CharStreamed,
    p.Played: ProbeFinished,
    p.Failed: CommandFailed,
    p.Snapshot: SnapshotKept,
    p.SnapshotScored: SnapshotScored,
    p.EnvironmentsProgress: EnvironmentsProgressed,
    p.EnvironmentsScored: EnvironmentsScored,
}  # protocol event type -> the message the reader posts for it


def for_event(event: object) -> FromEngine | None:
    """The message the reader posts for `event` (a failure by what failed), or None for an event no one hears."""
    if isinstance(event, p.Failed):
        return FAILED_FOR.get(event.what, CommandFailed)(event)
    kind = FOR_EVENT.get(type(event))
    return kind(event) if kind else None


@dataclass
class EngineDied(Message):
    """The engine process ended without being asked to."""

    exitcode: int | None
    last_words: str = ""  # last line of the engine's log


@dataclass
class StoreRead(Message):
    """The results store's runs, read in a worker (or why they could not be)."""

    entries: list
    error: str = ""
