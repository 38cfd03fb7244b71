"""A stand-in for the engine process that needs no torch: scripted models played in the real environment.

It answers with the same event types as `core.session`, so the app cannot tell the difference;
each "model" is a script of action text per sum, fed to `core.episode.Episode` with the real
calculator in the loop and judged by `core.verdict`.
"""

from __future__ import annotations

import queue
import threading

from collections import deque

from core import protocol as p
from core.checkpoint import read_metadata
from core.episode import Episode
from core.probe import parse_sum
from core.transcript import Role
from core.verdict import judge
from tui.engine import EngineGone


def demonstrator(prompt_operands: tuple[int, ...]) -> str:
    """The actions a perfect demonstrator writes for a sum: left-to-right calls, then the answer."""
    acc, out = prompt_operands[0], []
    for x in prompt_operands[1:]:
        out.append(f"B{acc}+{x}|")
        acc += x
    return "".join(out) + f"{acc}|"


class FakeEngine:
    """Implements the EngineProcess interface the app uses, in a thread, with scripted models."""

    def __init__(self, script=demonstrator, ready: bool = True, answers_stop: bool = True):
        self.script = script  # operands -> the model's action text
        self.answers_stop = answers_stop  # False: a wedged engine that never confirms a Stop
        self.events: queue.Queue = queue.Queue()
        self.sent: list = []
        self._alive = False
        self._ready = ready

    def start(self) -> None:
        self._alive = True
        if self._ready:
            self.events.put(p.Ready(0.0))

    def alive(self) -> bool:
        return self._alive

    def send(self, command) -> bool:
        self.sent.append(command)
        if isinstance(command, p.Load):
            self.events.put(p.Loaded(command.key, command.path, read_metadata(command.path)))
        elif isinstance(command, p.Play):
            threading.Thread(target=self._play, args=(command,), daemon=True).start()
        elif isinstance(command, p.Stop) and self.answers_stop:
            self.events.put(p.Stopped(command.job, 3))
        return True

    def _play(self, cmd: p.Play) -> None:
        problem = parse_sum(cmd.text)
        actions = deque(self.script(problem.operands))
        episode = Episode(problem.prompt)
        while not episode.done:  # the real environment, fed the script instead of a model's choices
            forced = episode.next_forced()
            if forced is not None:
                role, char = forced
            else:
                role, char = Role.ACTION, actions.popleft() if actions else "|"
                episode.act(char)
            self.events.put(p.Char(cmd.probe, role.value, char))
        v = judge(episode, problem)
        self.events.put(p.Played(cmd.probe, problem.answer, problem.family, v.solved,
                                 v.failure.value if v.failure else None,
                                 [(s.role.value, s.text) for s in episode.transcript.segments]))

    def read(self):
        ev = self.events.get()
        if ev is None:
            raise EngineGone(-9, "killed")
        return ev

    def kill(self) -> None:
        self._alive = False
        self.events.put(None)

    def close(self, timeout: float = 1.0) -> None:
        if self._alive:
            self.kill()
