"""`breadth rl`: learn from reward from the base or any checkpoint, saying first whether reward has anything to work on.

Before the first step it samples a group per training prompt and prints pass@G (near zero: almost no group
holds a correct episode, so almost no step carries a gradient); during the run, every `--every` steps, the
step's loss and metrics (`core.world.episodes.rewards.METRICS`); after it, pass@G again, the held-out scores of every
environment and where the checkpoint went. The run is kept in the results store like any other.
"""

from __future__ import annotations

import time

from breadth.core.cli.commands import console, record_run
from breadth.core.cli.tables import scores_table
from breadth.core.storage.header import read_header
from breadth.core.storage.paths import BASE
from breadth.core.storage.snapshot_file import keep_every
from breadth.core.storage.store import Store
from breadth.core.world.environments.environment import short_label
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.rewards import METRICS, NEAR_ZERO, metric_label
from breadth.core.world.runs.records import Diverged, StepStats
from breadth.core.world.runs.settings import RewardSettings, held_out_from_text
from breadth.core.world.text.shown import shown

LEGEND = (
    "expected: correct with the expected calls; no call: answered without calling; calls, chars: calls and the "
    "model's own characters per episode"
)


def settings_of(args) -> RewardSettings:
    """The reward settings the flags give (defaults for flags not given); SettingsError in one line."""
    given = {s.name: getattr(args, s.name) for s in RewardSettings.settings() if getattr(args, s.name) is not None}
    return RewardSettings.from_text(**given)


def columns(found: dict[str, float], group: int) -> list[tuple[str, str]]:
    """The step line's columns: (label, key) for step, loss, every metric measured (`METRICS` first, then each
    environment's reward by its short label) and the seconds so far."""
    keys = [m.key for m in METRICS if m.key in found] + [k for k in found if k not in {m.key for m in METRICS}]
    labels = [metric_label(k, group) for k in keys]
    labels = [short_label(x.removeprefix("reward ")) if x.startswith("reward ") else x for x in labels]
    return [("step", "step"), ("loss", "loss"), *zip(labels, keys, strict=True), ("s", "elapsed")]


def header_line(cols: list[tuple[str, str]]) -> str:
    """The labels of the step lines' columns, each right-aligned over its values."""
    return " ".join(label.rjust(_width(label, key)) for label, key in cols)


def step_line(cols: list[tuple[str, str]], stats: StepStats) -> str:
    """One step's values under `header_line`: `   20 +0.0012   0.125   0.500 ...`."""
    values = {"step": str(stats.step), "loss": f"{stats.loss:+.4f}", "elapsed": f"{stats.elapsed:.1f}"}
    for _, key in cols:
        if key in stats.metrics:
            values[key] = f"{stats.metrics[key]:.1f}" if key == "chars" else f"{stats.metrics[key]:.3f}"
    return " ".join(values.get(key, "-").rjust(_width(label, key)) for label, key in cols)


def _width(label: str, key: str) -> int:
    return max(len(label), {"step": 5, "loss": 7, "elapsed": 5}.get(key, 5))


def pass_line(found: dict[str, float], settings: RewardSettings, prompts: int, when: str) -> str:
    """pass@G on the training prompts, said plainly, with a warning when it is near zero."""
    share = found["pass"]
    line = (
        f"{when}: pass@{settings.group} at temperature {settings.temperature:g} on the {prompts} training prompts "
        f"{100 * share:.1f}% (mean reward {found['reward']:.3f}, with the expected calls {found['expected']:.3f})"
    )
    if when == "before training" and share < NEAR_ZERO:
        line += (
            "; near zero: almost no group holds a correct episode, so reward has next to nothing to reinforce"
            if share > 0
            else "; zero: no group holds a correct episode, so reward has nothing to reinforce"
        )
    return line


def rl(args) -> int:
    """Learn from reward on a mix, evaluate, save, record."""
    from breadth.core.learning import checkpoint, snapshots
    from breadth.core.learning.experiment import train_run
    from breadth.core.learning.reward import before_training

    mix = Mix.parse(args.mix)
    settings = settings_of(args)
    held_out = held_out_from_text(args.held_out)
    start = args.start or BASE
    read_header(start)  # a bad checkpoint (another vocabulary, a corrupt file) is refused before anything runs
    Store(args.store).close()  # a store that cannot be used: refused before training, not after
    prompts = len(mix.demonstrations(settings.seed))
    console.print(
        f"learning from reward on {mix.label()} from {shown(start)}: {settings.steps} steps of {settings.prompts} "
        f"prompts x {settings.group} episodes, lr {settings.lr:g} decaying to 0, seed {settings.seed}"
    )

    began = time.perf_counter()

    def on_before(found: dict[str, float]) -> None:
        console.print(f"{pass_line(found, settings, prompts, 'before training')} ({time.perf_counter() - began:.1f} s)")

    cols: list[tuple[str, str]] = []

    def on_step(stats: StepStats) -> bool:
        if not cols:
            cols.extend(columns(dict(stats.metrics), settings.group))
            console.print(LEGEND)
            console.print(header_line(cols))
        if stats.step % args.every == 0 or stats.step in (1, stats.steps):
            console.print(step_line(cols, stats))
        return True

    kept: dict = {}  # step -> snapshot, for the procedure view (as `breadth train` keeps them)
    try:
        model, record = train_run(
            mix,
            settings,
            start,
            held_out,
            on_step,
            on_snapshot=kept.__setitem__,
            snapshot_every=keep_every(settings.steps),
            on_before=on_before,
        )
    except Diverged as e:
        raise Diverged(f"{e}; nothing was written ({shown(start)} is as it was)") from None
    console.print(pass_line(before_training(model, mix, settings), settings, prompts, "after training"))
    checkpoint.save(model, record, args.out)
    scored = time.perf_counter()
    scores = {step: snapshots.score(snapshot, settings.seed) for step, snapshot in kept.items()}
    sidecar = snapshots.save(args.out, record, kept, scores)
    console.print(scores_table(record.scores, f"{mix.label()} by reward, seed {settings.seed}: held-out"))
    console.print(
        f"learning from reward {record.train_seconds:.1f} s, evaluation {record.eval_seconds:.2f} s; "
        f"wrote {shown(args.out)}"
    )
    if sidecar is not None:
        console.print(f"its snapshots, scored in {time.perf_counter() - scored:.1f} s: {shown(sidecar)}")
    return record_run(args.store, record, start, "rl", args.out)
