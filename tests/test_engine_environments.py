"""The engine's ScoreEnvironments: the same scores as `evaluate_environments`, a few environments at a time between
other commands, a newer request replacing one under way, and every bad request one Failed line."""

from __future__ import annotations

import queue
import threading
import time

import pytest
from fake_engine import ScriptedModels, scripted_env_score

from breadth.core.engine import protocol as p
from breadth.core.engine import session as engine_session
from breadth.core.engine.loop import serve
from breadth.core.engine.session import Session
from breadth.core.learning.experiment import TorchModels
from breadth.core.storage.presets import PRESETS

MIX = PRESETS["mix_35_35"].shipped
NAMES = ["add_2x2", "1a1s1", "2s2_postfix"]  # a family, a mixed gap, postfix


def _drain(s: Session) -> None:
    """Do the session's background work to its end, as the engine's loop does when no command waits."""
    while s.background:
        s.work()


def test_scoring_environments_in_the_engine_gives_evaluate_environments_scores(one_thread, monkeypatch):
    """The mix model on 3 environments x 5 test sums, two environments a piece: a progress event after the first
    piece, then exactly the scores `evaluate_environments` gives (seed: the model's own)."""
    from breadth.core.learning import checkpoint
    from breadth.core.learning.evaluate import evaluate_environments

    monkeypatch.setattr(engine_session, "ENV_CHUNK", 2)
    events: list = []
    s = Session(events.append, TorchModels())
    s.handle(p.Load("mix", str(MIX)))
    s.handle(p.ScoreEnvironments(3, "mix", NAMES, 5))
    _drain(s)
    progress = [e for e in events if isinstance(e, p.EnvironmentsProgress)]
    (scored,) = [e for e in events if isinstance(e, p.EnvironmentsScored)]
    assert [(e.id, e.done, e.total) for e in progress] == [(3, 2, 3)]
    model, header = checkpoint.load(MIX)
    expected, _ = evaluate_environments(model, header.run.seed or 0, 5, NAMES)
    as_sent = {n: {k: v for k, v in sc.to_dict().items() if k != "examples"} for n, sc in expected.items()}
    assert (scored.id, scored.key, scored.seed, scored.held_out) == (3, "mix", header.run.seed or 0, 5)
    assert scored.scores == as_sent and sum(v["total"] for v in scored.scores.values()) == 15
    assert 0 < scored.busy <= scored.seconds
    assert p.decode(p.encode(scored)) == scored


def _session(models=None) -> tuple[Session, list]:
    events: list = []
    s = Session(events.append, models or ScriptedModels())
    s.handle(p.Load("mix", str(MIX)))
    return s, events


def test_every_environment_by_default_and_a_newer_request_replaces_one_under_way():
    """No names: every environment (183), in pieces of ENV_CHUNK; a second request before the first ends makes
    the first end Failed (and score nothing more), the second scores everything."""
    s, events = _session()
    s.handle(p.ScoreEnvironments(1, "mix"))
    s.work()
    s.handle(p.ScoreEnvironments(2, "mix"))
    _drain(s)
    failed = [e for e in events if isinstance(e, p.Failed)]
    assert [(f.what, f.id) for f in failed] == [("scoreenvironments", 1)] and "replaced" in failed[0].message
    (scored,) = [e for e in events if isinstance(e, p.EnvironmentsScored)]
    assert scored.id == 2 and len(scored.scores) == 183
    assert scored.scores["add_2x2"] == scripted_env_score("add_2x2", 30).to_dict()
    assert {e.id for e in events if isinstance(e, p.EnvironmentsProgress)} == {1, 2}


@pytest.mark.parametrize(
    "command",
    [
        p.ScoreEnvironments(4, "mix", ["add_2x2", "no_such_env"]),
        p.ScoreEnvironments(4, "mix", ["add_2x2", 7]),
        p.ScoreEnvironments(4, "mix", [], 0),
        p.ScoreEnvironments(4, "not-loaded"),
    ],
)
def test_a_bad_scoring_request_is_one_failed_line_and_queues_nothing(command):
    """An unknown environment, a name that is not text, no test sums, a model not loaded: one Failed line naming
    the job, and no background work."""
    s, events = _session()
    s.handle(command)
    (failed,) = [e for e in events if isinstance(e, p.Failed)]
    assert failed.what == "scoreenvironments" and failed.id == 4 and failed.message and "\n" not in failed.message
    assert not s.background and s.scoring is None


def test_a_play_sent_while_the_engine_scores_is_answered_within_a_piece():
    """Over the engine's real loop, with pieces of 0.2 s: a Probe sent after the scoring started is answered before
    the scoring ends, within about one piece."""
    stdin: queue.Queue = queue.Queue()
    events: queue.Queue = queue.Queue()

    class In:
        def readline(self, limit=-1):
            return stdin.get()

    class Out:
        def write(self, text):
            for line in text.splitlines():
                events.put((time.monotonic(), p.decode(line)))

        def flush(self):
            pass

    thread = threading.Thread(target=serve, args=(In(), Out(), ScriptedModels(env_seconds=0.2)), daemon=True)
    thread.start()
    for command in (p.Load("mix", str(MIX)), p.ScoreEnvironments(1, "mix")):
        stdin.put(p.encode(command) + "\n")
    seen = []
    while not any(isinstance(e, p.EnvironmentsProgress) for _, e in seen):
        seen.append(events.get(timeout=10))
    sent = time.monotonic()
    stdin.put(p.encode(p.Probe(5, "mix", "23+45")) + "\n")
    while not any(isinstance(e, p.EnvironmentsScored) for _, e in seen):
        seen.append(events.get(timeout=30))
    stdin.put("")  # end of input: the engine quits
    thread.join(5)
    played = next(at for at, e in seen if isinstance(e, p.ProbeFinished))
    scored = next(at for at, e in seen if isinstance(e, p.EnvironmentsScored))
    assert played < scored and played - sent < 0.6  # one piece is 0.2 s
    assert not thread.is_alive()
