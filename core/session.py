"""The engine session: loads models, fine-tunes, evaluates and plays sums for the UI, in its own process.

Run as `python -m core.session`: `serve` reads JSON commands from stdin and writes JSON events to
stdout (see `core.protocol`). While a model trains, each step also drains the commands that have
arrived, so Stop lands within a step and sums can be played on the loaded models during training.
Every failure becomes a `Failed` event; the loop only ends on Quit or when stdin closes.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from . import protocol as p


class Session:
    """Models in memory by key, and the handling of each command."""

    def __init__(self, emit: Callable[[object], None], inbox=None):
        self.emit = emit
        self.inbox = inbox  # the command queue, polled during training (None: nothing to poll)
        self.models: dict[str, object] = {}  # key -> GPT
        self.training: int | None = None  # job being trained
        self._stop: set[int] = set()
        self.deferred: list[object] = []  # commands that must wait for training to end

    def handle(self, cmd) -> None:
        """Run one command, turning any error into a Failed event."""
        try:
            if isinstance(cmd, p.Load):
                self._load(cmd)
            elif isinstance(cmd, p.Play):
                self._play(cmd)
            elif isinstance(cmd, p.Train):
                self._train(cmd)
            elif isinstance(cmd, p.Stop):
                self._stop.add(cmd.job)
        except Exception as e:  # noqa: BLE001 -- the engine reports, the UI decides
            what = type(cmd).__name__.lower()
            job = getattr(cmd, "job", getattr(cmd, "probe", None))
            self.emit(p.Failed(what, _one_line(e), job))

    def _load(self, cmd: p.Load) -> None:
        from .checkpoint import load

        model, meta = load(cmd.path)
        self.models[cmd.key] = model
        self.emit(p.Loaded(cmd.key, cmd.path, meta))

    def _play(self, cmd: p.Play) -> None:
        from .evaluate import play
        from .probe import parse_sum

        problem = parse_sum(cmd.text)
        if cmd.key not in self.models:
            raise KeyError(f"model {cmd.key!r} is not loaded")
        emit = self.emit
        (scored,) = play(self.models[cmd.key], [problem],
                         on_char=lambda i, role, c: emit(p.Char(cmd.probe, role.value, c)))
        v = scored.verdict
        self.emit(p.Played(cmd.probe, problem.answer, problem.family, v.solved,
                           v.failure.value if v.failure else None,
                           [(s.role.value, s.text) for s in scored.episode.transcript.segments]))

    def _train(self, cmd: p.Train) -> None:
        from . import checkpoint
        from .experiment import finetune_run
        from .mix import Mix
        from .settings import FinetuneSettings

        if self.training is not None:
            raise RuntimeError(f"already training job {self.training}")
        mix, settings = Mix.parse(cmd.mix), FinetuneSettings(**cmd.settings)
        self.training = cmd.job
        try:
            model, record = finetune_run(mix, settings, cmd.base, cmd.held_out,
                                         on_step=lambda s: self._on_step(cmd.job, s))
        finally:
            self.training = None
        if not record.completed:
            self.emit(p.Stopped(cmd.job, len(record.losses)))
            return
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{mix.spec().replace(',', '+').replace('=', '')}-s{settings.seed}"
        path = Path(cmd.out_dir) / f"{name}.safetensors"
        meta = record.checkpoint_meta(cmd.base)
        checkpoint.save(model, meta, path)
        key = f"run:{cmd.job}"
        self.models[key] = model
        self.emit(p.Trained(cmd.job, key, str(path), checkpoint.read_metadata(path)))

    def _on_step(self, job: int, stats) -> bool:
        self.emit(p.Step(job, stats.step, stats.steps, stats.loss, stats.elapsed))
        self.poll()
        if job in self._stop:
            self._stop.discard(job)
            return False
        if stats.step == stats.steps:
            self.emit(p.Evaluating(job))
        return True

    def poll(self) -> None:
        """Handle commands that arrived during training: Stop, Play and Load now, Train later."""
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


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def serve(stdin=None, stdout=None) -> None:
    """The engine process's main loop: JSON commands on stdin, JSON events on stdout, until Quit or EOF."""
    start = time.perf_counter()
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    lock = threading.Lock()

    def emit(event) -> None:
        with lock:
            stdout.write(p.encode(event) + "\n")
            stdout.flush()

    commands: queue.Queue = queue.Queue()

    def read_stdin() -> None:  # a thread, so that training can poll for Stop without blocking
        for line in stdin:
            if line.strip():
                try:
                    commands.put(p.decode(line))
                except p.ProtocolError as e:
                    emit(p.Failed("protocol", str(e)))
        commands.put(p.Quit())  # the UI closed our stdin: it is gone

    threading.Thread(target=read_stdin, daemon=True, name="stdin").start()
    from .train import use_one_thread  # imports torch

    use_one_thread()
    session = Session(emit, commands)
    emit(p.Ready(time.perf_counter() - start))
    while True:
        cmd = session.deferred.pop(0) if session.deferred else commands.get()
        if isinstance(cmd, p.Quit):
            return
        session.handle(cmd)


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    serve()
