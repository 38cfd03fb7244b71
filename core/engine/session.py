"""The engine session: loads models, fine-tunes, evaluates and plays sums for the UI, in its own process.

The process runs `breadth.core.engine.loop` (`python -m breadth.core.engine.loop`), which reads JSON commands
from stdin and writes JSON events to stdout (see `breadth.core.engine.protocol`), a `Session` handling each.
While a model trains, each step also drains the commands that have arrived, so Stop lands within a step and sums
can be played on the loaded models during training; a run stopped so is not evaluated (nothing of it is kept).
A reward run also sends what it measured before its first step (a Stop is heard there too) and, at most
ROLLOUTS_HZ times a second, one group of its sampled episodes. Scoring a model on many environments
(ScoreEnvironments) is background work done ENV_CHUNK environments at a time, so a Probe or a Train waits at most
one piece; training pauses it. Every failure becomes a `Failed` event: only Quit, or stdin closing, ends the loop.
"""

from __future__ import annotations

import ctypes
import errno
import math
import queue
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from breadth.core.engine import protocol as p
from breadth.core.learning.models import Models
from breadth.core.storage.files import UserFileError, check_output
from breadth.core.storage.header import CheckpointError, weights_hash
from breadth.core.storage.paths import folder_full
from breadth.core.storage.snapshot_file import snapshot_problems
from breadth.core.storage.store import Store, StoredRun, StoreError, run_key
from breadth.core.world.arithmetic.calculator import Lie
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.probe import parse_sum
from breadth.core.world.environments.registry import environments
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.rollout import Policy, run_episodes
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.episodes.scoring import play, tally
from breadth.core.world.episodes.verdict import judge
from breadth.core.world.runs.recipes import RecipeError, recipe
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import held_out_count
from breadth.core.world.text.transcript import Role

MAX_LOADED = 4  # models held at once; older ones that have a file are unloaded (the app reloads them on demand)
MAX_SNAPSHOTS = 42  # snapshots a run keeps at most (its snapshot interval is widened to fit): 29 MB in float16
SNAPSHOT_RUNS = 2  # runs whose snapshots are kept, the latest ones
ENV_CHUNK = 8  # environments scored in one piece of background work: 240 episodes, about 0.5 s on one core


@dataclass
class EnvScoring:
    """A ScoreEnvironments job under way: what it scores, and the scores so far."""

    id: int
    key: str
    model: object  # held here, so that unloading the key meanwhile does not stop the job
    seed: int  # the test splits of this seed: the model's own, as `breadth eval` takes it
    held_out: int
    total: int  # environments to score
    started: float = field(default_factory=time.perf_counter)
    busy: float = 0.0  # seconds spent scoring
    scores: dict[str, HeldOutScore] = field(default_factory=dict)


class Session:
    """Models in memory by key, and the handling of each command."""

    def __init__(self, emit: Callable[[object], None], models: Models, inbox=None):
        self.emit = emit
        self.models = models
        self.inbox = inbox  # the command queue, polled during training (None: nothing to poll)
        self.loaded: dict[str, object] = {}  # key -> model, least recently used first
        self.records: dict[str, RunMeta] = {}  # key -> what is known of the model (to save it)
        self.files: dict[str, str] = {}  # key -> the checkpoint it can be loaded from again
        self.training: int | None = None  # job being trained
        self._stop: set[int] = set()
        self.deferred: list[object] = []  # commands that must wait for training to end
        self.snapshots: dict[str, dict[int, object]] = {}  # run key -> step -> a copy of its weights
        self.snapshot_scores: dict[str, dict[int, dict]] = {}  # run key -> step -> environment -> HeldOutScore
        self.saved: dict[str, dict[int, object]] = {}  # loaded model's key -> step -> snapshot saved beside it
        self.background: deque[Callable[[], None]] = deque()  # work done one piece at a time when idle
        self._restored: tuple[str, int, object] | None = None  # the last snapshot rebuilt for play
        self._rollouts_sent = -math.inf  # when the training job last sent a sampled group (monotonic seconds)
        self.scoring: EnvScoring | None = None  # the ScoreEnvironments job under way, if any

    def handle(self, cmd) -> None:
        """Run one command, turning any error into a Failed event."""
        try:
            if isinstance(cmd, p.Load):
                self._load(cmd)
            elif isinstance(cmd, p.Probe):
                self._probe(cmd)
            elif isinstance(cmd, p.Train):
                self._train(cmd)
            elif isinstance(cmd, p.Save):
                self._save(cmd)
            elif isinstance(cmd, p.ScoreEnvironments):
                self._score_environments(cmd)
            elif isinstance(cmd, p.Stop):
                self._stop.add(cmd.id)
        except Exception as e:  # noqa: BLE001 -- the engine reports, the UI decides
            self.emit(p.Failed(type(cmd).__name__.lower(), first_line(e), getattr(cmd, "id", None)))

    def _load(self, cmd: p.Load) -> None:
        model, meta = self.models.load(cmd.path)
        self._keep(cmd.key, model, RunMeta.from_dict(meta), cmd.path)
        self.emit(p.Loaded(cmd.key, cmd.path, meta))
        self._load_snapshots(cmd.key, cmd.path, model)

    def _load_snapshots(self, key: str, path: str, model: object) -> None:
        """Hold the snapshots saved beside the checkpoint just loaded as `key` (Probe with `step` replays them); a
        bad sidecar is one Failed line, and the model stays loaded."""
        self.saved.pop(key, None)
        if self._restored is not None and self._restored[0] == key:
            self._restored = None
        try:
            kept, _ = self.models.load_snapshots(path, model, self.records[key])
        except CheckpointError as e:  # SnapshotError is one
            self.emit(p.Failed("snapshot", first_line(e)))
            return
        if kept:
            self.saved[key] = kept

    def _probe(self, cmd: p.Probe) -> None:
        problem = parse_sum(cmd.text)
        lie = Lie.parse(cmd.lie)
        model = self._model(cmd.key, cmd.step)
        policy = self.models.policy(model, 1)
        episode = Episode(problem.prompt, max_length=self.models.context(model), lie=lie)
        run_episodes(policy, [episode], partial(self._hear, cmd.id, policy, episode))
        v = judge(episode, problem)
        told = episode.calls[-1].result.removesuffix("|") if episode.calls else None
        self.emit(
            p.ProbeFinished(
                cmd.id,
                problem.answer,
                problem.environment,
                v.solved,
                v.failure.value if v.failure else None,
                [(s.role.value, s.text) for s in episode.transcript.segments],
                None if lie is None else (episode.answer is not None and episode.answer == told),
            )
        )

    def _hear(self, probe: int, policy: Policy, episode: Episode, i: int, role: Role, char: str) -> None:
        """Stream one character: the model's with its probability and top alternatives, a lie's marked."""
        if role is Role.ACTION:
            top = getattr(policy, "top", None)  # a policy that reports its probabilities
            alternatives = [[c, round(float(q), 4)] for c, q in top[i]] if top else []
            chosen = next((q for c, q in alternatives if c == char), None)
            self.emit(p.Char(probe, role.value, char, chosen, alternatives))
        else:
            lied = role is Role.ENVIRONMENT and bool(episode.calls) and episode.calls[-1].lied
            self.emit(p.Char(probe, role.value, char, lied=lied))

    def _model(self, key: str, step: int | None) -> object:
        """The model loaded as `key`, or the snapshot kept at `step` of the run `key` names."""
        if step is None:
            return self._use(key)
        kept = self.snapshots.get(key) or self.saved.get(key, {})
        if step not in kept:
            steps = ", ".join(map(str, sorted(kept))) or "none kept"
            raise KeyError(f"no snapshot of {key!r} at step {step} (steps: {steps})")
        if self._restored is None or self._restored[:2] != (key, step):
            self._restored = (key, step, self.models.restore(kept[step]))
        return self._restored[2]

    def _train(self, cmd: p.Train) -> None:
        if self.training is not None:
            raise RuntimeError(f"already training job {self.training}")
        made_by = recipe(cmd.recipe)
        if not made_by.on_mix:
            raise RecipeError(f"the {made_by.name} recipe does not train on a mix")
        mix, settings = Mix.parse(cmd.mix), made_by.settings.from_dict(cmd.settings)
        held_out = held_out_count(cmd.held_out)
        check_output(Path(cmd.out_dir) / "new.safetensors")  # refuse an unwritable runs folder before training
        full = folder_full(cmd.out_dir)  # a served browser's own folder takes a bounded number of models
        if full:
            raise UserFileError(errno.EDQUOT, full)
        key = f"run:{cmd.id}"
        every = cmd.snapshot_every and max(cmd.snapshot_every, math.ceil(settings.steps / (MAX_SNAPSHOTS - 2)))
        kept = self._new_snapshots(key)

        def on_snapshot(step: int, weights: object) -> None:
            kept[step] = weights
            self.emit(p.Snapshot(cmd.id, step))

        self.training = cmd.id
        self._rollouts_sent = -math.inf  # the first sampled group goes out at once
        try:
            model, record = self.models.train(
                mix,
                settings,
                cmd.base,
                held_out,
                lambda s: self._on_step(cmd.id, s),
                on_snapshot,
                every,
                on_before=partial(self._on_before, cmd.id),
            )
        except BaseException:
            self.snapshots.pop(key, None)
            raise
        finally:
            self.training = None
        if not record.completed:
            self.snapshots.pop(key, None)
            self.emit(p.Stopped(cmd.id, len(record.losses)))
            return
        self.background.extend(partial(self._score_snapshot, key, step, settings.seed) for step in sorted(kept))
        self.background.append(partial(self._save_snapshots, key))  # beside the checkpoint, once all are scored
        self._keep(key, model, record, None)  # kept in memory whatever happens to the file
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{mix.slug()}-s{settings.seed}"
        try:
            path, meta = self.models.save_new(model, record, cmd.out_dir, stem)
        except OSError as e:
            self.emit(p.Trained(cmd.id, key, "", record.to_dict(), f"not saved ({first_line(e)}); kept in memory"))
            return
        self.files[key] = path
        note = "; ".join(filter(None, (self._record(record, cmd.base, path), folder_full(cmd.out_dir))))
        self.emit(p.Trained(cmd.id, key, path, meta, note))
        _give_back_memory()

    def _new_snapshots(self, key: str) -> dict[int, object]:
        """A fresh store of snapshots for run `key`; the oldest runs' snapshots go past SNAPSHOT_RUNS."""
        self.snapshots.pop(key, None)
        while len(self.snapshots) >= SNAPSHOT_RUNS:
            old = next(iter(self.snapshots))
            del self.snapshots[old]
            self.snapshot_scores.pop(old, None)
            if self._restored is not None and self._restored[0] == old:
                self._restored = None
        self.snapshots[key] = {}
        return self.snapshots[key]

    def _score_snapshot(self, key: str, step: int, seed: int) -> None:
        """Score the snapshot at `step` of run `key` on the sums `snapshot_problems` names (20 of every environment)."""
        kept = self.snapshots.get(key, {})
        if step not in kept:
            return  # dropped meanwhile (a newer run)
        model = self.models.restore(kept[step])
        problems = snapshot_problems(seed)
        scored = play(lambda batch: self.models.policy(model, batch), problems, max_length=self.models.context(model))
        scores = tally(scored, list(REGISTERED))
        self.snapshot_scores.setdefault(key, {})[step] = scores
        self.emit(p.SnapshotScored(key, step, {name: sc.to_dict() for name, sc in scores.items()}))

    def _save_snapshots(self, key: str, path: str | None = None) -> None:
        """Save run `key`'s snapshots and their scores beside its checkpoint (`path`, else its file), if it has one."""
        path = path or self.files.get(key)
        if path is not None and self.snapshots.get(key) and key in self.records:
            self.models.save_snapshots(path, self.records[key], self.snapshots[key], self.snapshot_scores.get(key, {}))

    def _score_environments(self, cmd: p.ScoreEnvironments) -> None:
        """Queue the scoring of `cmd.key` on each environment's test split, ENV_CHUNK environments a piece; a job
        still under way is replaced (and ends Failed)."""
        known = {f.name: f for f in environments()}
        names = list(dict.fromkeys(cmd.names)) or list(known)
        unknown = [n for n in names if not isinstance(n, str) or n not in known]
        if unknown:
            raise KeyError(f"no environment {str(unknown[0])[:60]!r} ({len(unknown)} unknown)")
        held_out = held_out_count(cmd.held_out)
        model, seed = self._use(cmd.key), self.records[cmd.key].seed or 0
        if self.scoring is not None:
            self.emit(p.Failed("scoreenvironments", f"replaced by scoring job {cmd.id}", self.scoring.id))
        job = self.scoring = EnvScoring(cmd.id, cmd.key, model, seed, held_out, len(names))
        self.background.extend(
            partial(self._score_piece, job, names[i : i + ENV_CHUNK]) for i in range(0, len(names), ENV_CHUNK)
        )

    def _score_piece(self, job: EnvScoring, names: list[str]) -> None:
        """Score one piece of a ScoreEnvironments job (nothing if the job was replaced); progress, or the scores."""
        if self.scoring is not job:
            return
        start = time.perf_counter()
        try:
            job.scores |= self.models.score_environments(job.model, job.seed, job.held_out, names)
        except Exception as e:  # noqa: BLE001 -- one Failed line, and the job ends
            self.scoring = None
            self.emit(p.Failed("scoreenvironments", first_line(e), job.id))
            return
        job.busy += time.perf_counter() - start
        seconds = time.perf_counter() - job.started
        if len(job.scores) < job.total:
            self.emit(p.EnvironmentsProgress(job.id, len(job.scores), job.total, seconds))
            return
        self.scoring = None
        scores = {name: {k: v for k, v in sc.to_dict().items() if k != "examples"} for name, sc in job.scores.items()}
        self.emit(p.EnvironmentsScored(job.id, job.key, job.seed, job.held_out, scores, seconds, job.busy))

    def work(self) -> None:
        """Do one piece of background work (scoring or saving snapshots); a failure is a Failed event, never the end."""
        job = self.background.popleft()
        try:
            job()
        except Exception as e:  # noqa: BLE001 -- background work reports and the engine goes on
            self.emit(p.Failed("snapshot", first_line(e)))

    def _record(self, record: RunMeta, base: str, path: str) -> str:
        """Keep the run in the results store; '' if it is there, else one line on why not. It runs once the
        checkpoint is written, so nothing that goes wrong here may fail the run: an error nobody foresaw (a store
        that breaks its own rules) becomes the note too, named by its type, with its traceback in the engine's log.
        """
        try:
            base_hash = weights_hash(base)
            key = run_key(record.mix, record.settings, record.held_out, base_hash)
            with Store() as store:
                store.add(StoredRun(key, record, base_hash, "app", path, self.models.versions()))
        except (StoreError, CheckpointError, OSError) as e:
            return f"not recorded in the results store ({first_line(e)})"
        except Exception as e:  # noqa: BLE001 -- the model is saved: a failure to record it is a note, not a failure
            traceback.print_exc(file=sys.stderr)  # the engine's stderr is its log
            return f"not recorded in the results store ({type(e).__name__}: {first_line(e)})"
        return ""

    def _save(self, cmd: p.Save) -> None:
        path = self.models.save(self._use(cmd.key), self.records[cmd.key], cmd.path)
        self.files.setdefault(cmd.key, path)
        self.emit(p.Saved(cmd.id, path))
        if cmd.key in self.snapshots:  # a run trained here: its snapshots too, once scored (queued after them)
            self.background.append(partial(self._save_snapshots, cmd.key, path))

    def _keep(self, key: str, model: object, record: RunMeta, path: str | None) -> None:
        """Hold `model` as the most recently used; unload the oldest that can be loaded again, past MAX_LOADED."""
        self.loaded.pop(key, None)
        self.loaded[key], self.records[key] = model, record
        if path is not None:
            self.files[key] = path
        spare = [k for k in self.loaded if k in self.files and k != key]  # oldest first; never one only in memory
        for old in spare[: max(0, len(self.loaded) - MAX_LOADED)]:
            del self.loaded[old], self.records[old], self.files[old]
            self.saved.pop(old, None)  # loaded again with the model
            self.emit(p.Unloaded(old))

    def _use(self, key: str) -> object:
        """The model loaded as `key`, now the most recently used."""
        if key not in self.loaded:
            raise KeyError(f"model {key!r} is not loaded")
        self.loaded[key] = self.loaded.pop(key)
        return self.loaded[key]

    def _on_step(self, job: int, stats) -> bool:
        self.emit(p.Step(job, stats.step, stats.steps, stats.loss, stats.elapsed, dict(stats.metrics)))
        now = time.monotonic()
        if stats.group is not None and now - self._rollouts_sent >= 1 / p.ROLLOUTS_HZ:
            self._rollouts_sent = now
            self.emit(p.Rollouts(job, stats.step, stats.group.to_dict()))
        if not self._go_on(job):
            return False
        if stats.step == stats.steps:
            self.emit(p.Evaluating(job))
        return True

    def _on_before(self, job: int, metrics: dict[str, float]) -> bool:
        """Send what the recipe measured before the first step; False (stop) if a Stop arrived meanwhile."""
        self.emit(p.Measured(job, dict(metrics)))
        return self._go_on(job)

    def _go_on(self, job: int) -> bool:
        """Handle the commands that arrived; False if one of them stops `job`."""
        self.poll()
        if job in self._stop:
            self._stop.discard(job)
            return False
        return True

    def poll(self) -> None:
        """Handle commands that arrived during training: Stop, Probe and Load now, Train later."""
        while self.inbox is not None:
            try:
                cmd = self.inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(cmd, p.Train):
                self.deferred.append(cmd)
            elif isinstance(cmd, p.Quit):
                raise SystemExit(0)
            else:
                self.handle(cmd)


def _give_back_memory() -> None:
    """Return freed heap to the system after a training run (glibc keeps it otherwise); a no-op elsewhere."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def first_line(e: BaseException) -> str:
    """An error's message's first line, or its type's name when it has none."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
