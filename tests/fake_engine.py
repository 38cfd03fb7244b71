"""The engine the app's tests talk to: the real engine session and protocol, with scripted models.

`FakeEngine` runs `breadth.core.engine.loop.serve` in a thread, speaking the same JSON lines as the
engine process, so it cannot drift from the engine. Only the models are stand-ins (`ScriptedModels`):
loading reads the checkpoint's real header, and playing feeds a script of action text per sum to
the real rollout, calculator and verdict; scoring many environments answers scripted scores. No torch is imported.
"""

from __future__ import annotations

import json
import math
import queue
import threading
import time
from dataclasses import dataclass

from safetensors.numpy import load_file, save

from breadth.core.engine import protocol as p
from breadth.core.engine.loop import serve
from breadth.core.learning.models import Models
from breadth.core.storage.files import user_path, write_atomic, write_new
from breadth.core.storage.header import KEY, read_header
from breadth.core.storage.snapshot_file import plan, saved_snapshots, sidecar_of
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.rewards import judged, sampled
from breadth.core.world.episodes.rollout import rollout
from breadth.core.world.episodes.scores import HeldOutScore, SampledGroup
from breadth.core.world.episodes.scoring import play, tally
from breadth.core.world.runs.records import RunMeta, StepStats
from breadth.core.world.runs.settings import RewardSettings
from breadth.core.world.text.transcript import Role
from breadth.core.world.text.vocab import BOS, PAD
from breadth.tui.engine import EngineGone


def demonstrator(operands: tuple[int, ...], op: str = "+") -> str:
    """The actions a perfect demonstrator writes for a sum: the model's segments of the family's own demonstration."""
    return "".join(seg.text for seg in Problem(operands, op=op).demonstration().segments if seg.role is Role.ACTION)


class ScriptedPolicy:
    """A policy that writes `script(operands)` as its actions, whatever the environment appends.

    Once a row's prompt is in, the whole episode the script leads to is worked out with the real
    environment, and each step returns the character at the next position of that episode.
    """

    def __init__(self, script, batch: int):
        self.script = script
        self.fed = [""] * batch  # what each row has been fed after its start token
        self.plan: list[str | None] = [None] * batch
        self.top: list[list[tuple[str, float]]] = []  # per row, the last step's (char, probability), chosen first

    def step(self, chars: list[str]) -> list[str]:
        out = []
        for i, c in enumerate(chars):
            if c not in (BOS, PAD):
                self.fed[i] += c
            if self.plan[i] is None and self.fed[i].endswith("="):
                self.plan[i] = _episode_text(self.fed[i], self.script)
            plan, n = self.plan[i], len(self.fed[i])
            out.append(plan[n] if plan is not None and n < len(plan) else "|")
        self.top = [[(c, _sure(f)), ("0" if c != "0" else "1", 0.02)] for c, f in zip(out, self.fed, strict=True)]
        return out


def _sure(fed: str) -> float:
    """A scripted confidence: 0.55 for the first character after a `|` (an answer or a call begins), else 0.97."""
    return 0.55 if fed.endswith("|") else 0.97


def _episode_text(prompt: str, script) -> str:
    op = "-" if "-" in prompt else "+"
    operands = tuple(int(x) for x in prompt.removesuffix("=").split(op))
    actions = list(script(operands, op) if script is demonstrator else script(operands))  # others script `+` only
    episode = Episode(prompt)
    while not episode.done:
        if episode.next_forced() is None:
            episode.act(actions.pop(0) if actions else "|")
    return episode.transcript.text


@dataclass(frozen=True)
class Kept:
    """A scripted run's snapshot: the step it was kept at, of how many."""

    step: int
    steps: int


def guess_without_calling(operands: tuple[int, ...]) -> str:
    """An untrained model's move: a wrong answer written without calling the calculator."""
    return f"{sum(operands) + 1}|"


def scripted_before() -> dict[str, float]:
    """What a scripted reward run measures before its first step: pass@G 0 (nothing to reinforce)."""
    return {"reward": 0.0, "pass": 0.0, "expected": 0.0, "no_call": 0.25, "calls": 0.5, "chars": 12.0}


def scripted_metrics(mix, step: int, steps: int) -> dict[str, float]:
    """A scripted reward step's metrics: the reward rises to 1 over the run; each family of a mix of several has its
    own reward, the i-th of n at (i + 1) / n of the mean."""
    reward = step / steps
    out = {"reward": reward, "pass": min(1.0, 2 * reward), "expected": 0.9 * reward, "no_call": 1 - reward}
    out |= {"calls": 1.0 + reward, "chars": 14.0 + step % 3}
    names = [name for name, _ in mix.counts]
    if len(names) > 1:
        out |= {f"reward:{name}": reward * (i + 1) / len(names) for i, name in enumerate(names)}
    return out


def scripted_group(problem: Problem, step: int, steps: int, size: int = 4) -> SampledGroup:
    """A scripted group of `size` episodes of `problem`, played for real: the demonstrator's in the first
    `size * step // steps`, the rest guesses without a call (wrong)."""
    right = size * step // steps
    played = []
    for i in range(size):
        script = demonstrator if i < right else guess_without_calling
        (episode,) = rollout(ScriptedPolicy(script, 1), [problem.prompt])
        played.append(judged(problem, episode))
    return sampled(played)


def scripted_env_score(name: str, held_out: int) -> HeldOutScore:
    """A scripted environment score: every sum of a registered family solved (the demonstrator's), none of a
    generated one (each failed without a call)."""
    solved = held_out if name in REGISTERED else 0
    return HeldOutScore(name, solved, held_out, {"no call": held_out - solved} if solved < held_out else {})


STEP_SECONDS = 0.05  # a scripted training step: the app stays idle enough between steps for Pilot to click


class ScriptedModels(Models):
    """The session's models as scripts: real checkpoint headers, scripted play, scripted training."""

    def __init__(self, script=demonstrator, env_score=scripted_env_score, env_seconds: float = 0.0):
        self.script = script
        self.env_score = env_score  # (environment name, test sums) -> its HeldOutScore
        self.env_seconds = env_seconds  # how long scoring one piece of environments takes

    def load(self, path: str):
        return path, read_header(path).meta

    def policy(self, model, batch: int):
        if isinstance(model, Kept) and 2 * model.step < model.steps:
            return ScriptedPolicy(guess_without_calling, batch)  # the first half of a run: no procedure yet
        return ScriptedPolicy(self.script, batch)

    def restore(self, kept):
        return kept

    def score_environments(self, model, seed, held_out, names):
        """Each environment's scripted score (`env_score`), after `env_seconds`."""
        time.sleep(self.env_seconds)
        return {name: self.env_score(name, held_out) for name in names}

    def context(self, model) -> int:
        return 32

    def train(self, mix, settings, base, held_out, on_step, on_snapshot=None, snapshot_every=0, on_before=None):
        """A stand-in run: a falling loss, STEP_SECONDS a step, through the session's real on_step (Stop, polls).

        A run that completes is scored for real: the script played on the held-out sums of `settings.seed`.
        Snapshots are `Kept(step, steps)`: played, the first half of the run guesses without calling. A reward run
        (`RewardSettings`) reports `scripted_before` first and each step's `scripted_metrics` and `scripted_group`.
        """
        losses: list[float] = []
        measured: list[dict] = []  # each step's metrics
        start = time.monotonic()
        reward = isinstance(settings, RewardSettings)
        before = scripted_before() if reward else {}
        problem = mix.demonstrations(settings.seed)[0]
        if before and on_before is not None and on_before(before) is False:
            return None, RunMeta.of_run(settings, mix, held_out, base, completed=False, before=before)
        if on_snapshot is not None and snapshot_every:
            on_snapshot(0, Kept(0, settings.steps))
        for step in range(1, settings.steps + 1):
            time.sleep(STEP_SECONDS)
            losses.append(2.5 * math.exp(-step / 40) + 0.01)
            if on_snapshot is not None and snapshot_every and (step % snapshot_every == 0 or step == settings.steps):
                on_snapshot(step, Kept(step, settings.steps))
            measured.append(scripted_metrics(mix, step, settings.steps) if reward else {})
            group = scripted_group(problem, step, settings.steps) if reward else None
            stats = StepStats(step, settings.steps, losses[-1], time.monotonic() - start, measured[-1], group)
            if on_step(stats) is False:
                stopped = {"losses": tuple(losses), "completed": False, "before": before}
                return None, RunMeta.of_run(settings, mix, held_out, base, measured, **stopped)
        problems = [p for f in REGISTERED.values() for p in f.held_out(settings.seed, held_out)]
        scores = tally(play(lambda batch: ScriptedPolicy(self.script, batch), problems), list(REGISTERED))
        seconds = time.monotonic() - start
        done = {"scores": scores, "losses": tuple(losses), "train_seconds": seconds, "before": before}
        return base, RunMeta.of_run(settings, mix, held_out, base, measured, **done)

    def save_new(self, model, run, folder, stem):
        """A real checkpoint: the base's weights (the script has none) with this run's metadata."""
        path = write_new(folder, stem, ".safetensors", self._encode(model, run))
        return str(path), read_header(path).meta

    def versions(self):
        return {"breadth": "test", "torch": "none (scripted)"}

    def save(self, model, run, path):
        return str(write_atomic(user_path(path), self._encode(model, run), exclusive=True))

    def load_snapshots(self, path, model, run):
        """The sidecar's steps as `Kept(step, last)` (played as a scripted run's snapshots), and their scores."""
        saved = saved_snapshots(path, run)
        if saved is None:
            return {}, {}
        last = saved.steps[-1].step
        return {s.step: Kept(s.step, last) for s in saved.steps}, {s.step: s.scores for s in saved.steps}

    def save_snapshots(self, path, run, kept, scores):
        """A real sidecar whose stored steps hold the checkpoint's weights in float16 (the script has none)."""
        planned = plan(path, run, list(kept), scores)
        if planned is None:
            return None
        inner, meta = planned
        weights = load_file(path)
        tensors = {f"{s}/{name}": w.astype("float16") for s in inner for name, w in weights.items()}
        return str(write_atomic(sidecar_of(path), save(tensors, metadata={KEY: meta})))

    @staticmethod
    def _encode(model, run) -> bytes:
        header = read_header(model)
        meta = {k: header.meta[k] for k in ("format", "version", "vocab", "model", "params")} | run.to_dict()
        return save(load_file(model), metadata={KEY: json.dumps(meta)})


class _Lines:
    """stdin for `serve`: the lines the app sends, until closed."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue()

    def readline(self, limit: int = -1) -> str:
        line = self.queue.get()
        if line is None:
            self.queue.put(None)  # closed for good
            return ""
        return line


class _Out:
    """stdout for `serve`: each line becomes an event for the app, unless the engine is dead."""

    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine

    def write(self, text: str) -> None:
        for line in text.splitlines():
            if line.strip() and self.engine.alive():
                event = p.decode(line)
                if isinstance(event, p.Ready) and not self.engine.ready:
                    continue
                self.engine.events.put(event)

    def flush(self) -> None:
        pass


class FakeEngine:
    """The EngineProcess interface the app uses, over the real session in a thread with scripted models."""

    def __init__(
        self,
        script=demonstrator,
        ready: bool = True,
        answers_stop: bool = True,
        env_score=scripted_env_score,
        env_seconds: float = 0.0,
    ):
        self.script = script  # operands -> the model's action text
        self.env_score = env_score  # (environment name, test sums) -> its HeldOutScore, when scoring environments
        self.env_seconds = env_seconds  # the time one piece of environments takes to score
        self.ready = ready  # False: an engine that never says Ready (still importing torch)
        self.answers_stop = answers_stop  # False: a wedged engine that never confirms a Stop
        self.events: queue.Queue = queue.Queue()
        self.sent: list = []
        self._stdin = _Lines()
        self._alive = False

    def models(self):
        """The Models the session serves (a subclass may script them differently)."""
        return ScriptedModels(self.script, self.env_score, self.env_seconds)

    def start(self) -> None:
        self._alive = True
        threading.Thread(
            target=serve, args=(self._stdin, _Out(self), self.models()), daemon=True, name="fake-engine"
        ).start()

    def alive(self) -> bool:
        return self._alive

    def send(self, command) -> bool:
        self.sent.append(command)
        if not self._alive:
            return False
        if isinstance(command, p.Stop) and not self.answers_stop:
            return True  # wedged: the Stop never arrives
        self._stdin.queue.put(p.encode(command) + "\n")
        return True

    def read(self):
        ev = self.events.get()
        if ev is None:
            raise EngineGone(-9, "killed")
        return ev

    def kill(self) -> None:
        self._alive = False
        self._stdin.queue.put(None)
        self.events.put(None)

    def close(self, timeout: float = 1.0) -> None:
        if self._alive:
            self.kill()
