"""The engine session behind the app: commands in, events out, Stop honoured mid-run, every failure reported."""

from __future__ import annotations

import io
import json
import queue
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from fake_engine import ScriptedModels

from breadth.core.engine import protocol as p
from breadth.core.engine.loop import serve
from breadth.core.engine.session import Session
from breadth.core.learning.experiment import TorchModels
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.snapshot_file import read_snapshot_header, sidecar_of
from breadth.core.storage.store import StoreError
from breadth.core.world.environments.environment import REGISTERED

MIX = PRESETS["mix_35_35"].shipped
TWO = PRESETS["two_digit_70"].shipped


def _events(session_queue: list) -> dict[str, list]:
    by_type: dict[str, list] = {}
    for ev in session_queue:
        by_type.setdefault(type(ev).__name__, []).append(ev)
    return by_type


@pytest.fixture
def session(one_thread):
    """A session emitting into a list, with an inbox the test can fill."""
    events: list = []
    return Session(events.append, TorchModels(), queue.Queue()), events


def test_protocol_round_trips_every_message_and_refuses_garbage():
    """Each command and event survives a JSON line; anything else is a ProtocolError, never an exception."""
    messages = [
        p.Load("k", "/x"),
        p.Train(1, "add_2x2=3", {"steps": 2}, "/b", "/o", 5),
        p.Stop(1),
        p.Probe(2, "k", "3+4"),
        p.Quit(),
        p.Ready(1.5),
        p.Step(1, 2, 3, 0.5, 0.1),
        p.Evaluating(1),
        p.Trained(1, "k", "/p", {"a": 1}),
        p.Stopped(1, 4),
        p.Char(2, "action", "B"),
        p.ProbeFinished(2, 7, "", True, None, [["prompt", "3+4="]]),
        p.Save(3, "k", "/x"),
        p.Saved(3, "/x"),
        p.Failed("train", "boom", 1),
        p.ScoreEnvironments(4, "k", ["add_2x2", "2a1"], 5),
        p.EnvironmentsProgress(4, 8, 183, 0.5),
        p.EnvironmentsScored(4, "k", 0, 30, {"2a1": {"solved": 1, "total": 30, "failures": {}}}, 8.5, 7.9),
    ]
    for m in messages:
        line = p.encode(m)
        assert "\n" not in line
        assert p.decode(line) == m
    for bad in ["", "{}", "[1]", '{"type": "Exec"}', '{"type": "Load"}', "not json", '{"type": "__class__"}']:
        with pytest.raises(p.ProtocolError):
            p.decode(bad)


def test_load_then_play_streams_characters_with_roles_then_the_verdict(session):
    """A Probe on a loaded shipped model streams each character with its writer, then a verdict on the true sum."""
    s, events = session
    s.handle(p.Load("mix", str(MIX)))
    s.handle(p.Probe(7, "mix", "3+4+5"))
    got = _events(events)
    assert got["Loaded"][0].meta["mix"] == "two_digit=35,three_digit=35"  # the metadata as stored, read by the app
    chars = got["Char"]
    assert all(c.id == 7 for c in chars)
    played = got["ProbeFinished"][0]
    assert "".join(c.char for c in chars) == "".join(text for _, text in played.segments)
    assert [c.role for c in chars[:6]] == ["prompt"] * 6
    assert played.answer == 12 and played.environment == "add_3x1"
    assert played.solved == (played.failure is None)


def test_failures_become_failed_events_not_crashes(session, tmp_path):
    """A missing checkpoint, an unknown model, a bad sum or a bad mix each give one Failed line."""
    s, events = session
    s.handle(p.Load("x", str(tmp_path / "missing.safetensors")))
    s.handle(p.Probe(1, "nope", "2+3"))
    s.handle(p.Probe(2, "nope", "abc"))
    s.handle(p.Train(3, "nope=5", {"steps": 2}, str(MIX), str(tmp_path)))
    failed = _events(events)["Failed"]
    assert [f.what for f in failed] == ["load", "probe", "probe", "train"]
    assert [f.id for f in failed] == [None, 1, 2, 3]
    assert all(f.message and "\n" not in f.message for f in failed)
    assert s.training is None


@pytest.mark.slow
def test_train_streams_steps_saves_loads_and_reports_scores(session, tmp_path, base_path):
    """Train sends every step, saves the model under out_dir, loads it, and reports its held-out scores."""
    s, events = session
    s.handle(
        p.Train(4, "add_2x2=4,add_3x1=4", {"steps": 6, "batch_size": 4}, str(base_path), str(tmp_path), held_out=3)
    )
    got = _events(events)
    assert [e.step for e in got["Step"]] == [1, 2, 3, 4, 5, 6]
    (trained,) = got["Trained"]
    assert trained.path.startswith(str(tmp_path)) and trained.key in s.loaded
    assert {f: v["total"] for f, v in trained.meta["scores"].items()} == {name: 3 for name in REGISTERED}
    assert len(trained.meta["losses"]) == 6


def test_stop_in_the_inbox_ends_training_at_the_next_step_and_keeps_nothing(session, tmp_path, base_path):
    """A Stop waiting in the inbox stops the job after one step; no model is saved or loaded."""
    s, events = session
    s.inbox.put(p.Stop(5))
    s.handle(p.Train(5, "add_2x2=4", {"steps": 1000}, str(base_path), str(tmp_path)))
    got = _events(events)
    assert got["Stopped"] == [p.Stopped(5, 1)]
    assert "Trained" not in got and not list(tmp_path.iterdir())
    assert s.loaded == {}


def test_serve_speaks_json_lines_and_ends_on_quit(one_thread):
    """The process loop answers Ready, handles commands from stdin and stops at Quit."""
    stdin = io.StringIO(
        "\n".join(p.encode(c) for c in [p.Load("m", str(TWO)), p.Probe(1, "m", "23+45"), p.Quit()]) + "\n"
    )
    stdout = io.StringIO()
    serve(stdin, stdout)
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "Ready" and types[1] == "Loaded" and types[-1] == "ProbeFinished"
    played = events[-1]
    streamed = "".join(e["char"] for e in events if e["type"] == "Char")
    assert streamed == "".join(text for _, text in played["segments"]) and streamed.startswith("23+45=B")


def test_the_model_streams_its_confidence_with_each_of_its_characters(session):
    """Every character the model writes carries its probability and its three likeliest alternatives after it, the
    chosen one first (greedy); prompt and calculator characters carry none."""
    s, events = session
    s.handle(p.Load("two", str(TWO)))
    s.handle(p.Probe(1, "two", "23+45"))
    chars = _events(events)["Char"]
    mine = [c for c in chars if c.role == "action"]
    assert mine and all(len(c.top) == 4 and c.top[0][0] == c.char and c.p == c.top[0][1] for c in mine)
    assert all(1.0 >= c.top[0][1] >= c.top[1][1] >= c.top[2][1] >= c.top[3][1] >= 0.0 for c in mine)
    assert all(c.p is None and c.top == [] and not c.lied for c in chars if c.role != "action")


@pytest.mark.parametrize("lie, told", [("off by one", "69"), ("42", "42")])
def test_a_lying_calculator_marks_its_results_and_says_whether_the_model_copied_them(session, lie, told):
    """With a lie, each calculator character is marked `lied`, the transcript holds the lie, and ProbeFinished says
    whether the answer copied the tool (the shipped two-digit model copies: it does not add on its own)."""
    s, events = session
    s.handle(p.Load("two", str(TWO)))
    s.handle(p.Probe(2, "two", "23+45", lie=lie))
    got = _events(events)
    told_chars = [c for c in got["Char"] if c.role == "environment"]
    assert "".join(c.char for c in told_chars) == f"{told}|" and all(c.lied for c in told_chars)
    (played,) = got["ProbeFinished"]
    assert tuple(played.segments[-2]) == ("environment", f"{told}|")
    assert played.copied is True and not played.solved
    s.handle(p.Probe(3, "two", "23+45"))
    honest = _events(events)["ProbeFinished"][-1]
    assert honest.copied is None and honest.solved
    assert not any(c.lied for c in _events(events)["Char"] if c.id == 3)


def test_a_lie_that_is_not_one_is_one_failed_line(session):
    """A lie that is neither 'off by one' nor a number is refused in one line; nothing is played."""
    s, events = session
    s.handle(p.Load("two", str(TWO)))
    s.handle(p.Probe(4, "two", "23+45", lie="sometimes"))
    got = _events(events)
    assert "Char" not in got and got["Failed"][0].id == 4 and "off by one" in got["Failed"][0].message


@pytest.mark.slow
def test_training_keeps_snapshots_that_replay_and_are_scored_when_idle(session, tmp_path, base_path):
    """Train keeps the weights at step 0, every `snapshot_every` steps and the end; Probe with `step` replays
    one; each is scored on a few held-out sums of every family in background work, one at a time, and then they
    are saved beside the checkpoint with their scores."""
    s, events = session
    s.handle(p.Train(6, "add_2x2=4", {"steps": 6, "batch_size": 4}, str(base_path), str(tmp_path), 3, snapshot_every=4))
    got = _events(events)
    assert [e.step for e in got["Snapshot"]] == [0, 4, 6]
    key = got["Trained"][0].key
    assert len(s.background) == 4  # three snapshots to score, then their saving
    s.handle(p.Probe(8, key, "23+45", step=0))
    s.handle(p.Probe(9, key, "23+45", step=5))
    played, failed = _events(events)["ProbeFinished"], _events(events)["Failed"]
    assert played[0].id == 8 and failed[0].id == 9 and "steps: 0, 4, 6" in failed[0].message
    while s.background:
        s.work()
    scored = _events(events)["SnapshotScored"]
    assert [e.step for e in scored] == [0, 4, 6] and all(e.key == key for e in scored)
    assert all(set(e.scores) == set(REGISTERED) and e.scores["add_2x2"]["total"] == 20 for e in scored)
    saved = read_snapshot_header(sidecar_of(got["Trained"][0].path))
    assert [(step.step, step.weights) for step in saved.steps] == [(0, "base"), (4, "stored"), (6, "checkpoint")]
    solved = [{name: sc.solved for name, sc in step.scores.items()} for step in saved.steps]
    assert solved == [{name: sc["solved"] for name, sc in e.scores.items()} for e in scored]


def _train_with_scripted_models(tmp_path, monkeypatch) -> list:
    """One short run on scripted models (no torch): the events the session emitted."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    events: list = []
    session = Session(events.append, ScriptedModels())
    session.handle(p.Train(1, "add_2x2=4", {"steps": 2}, str(BASE), str(tmp_path / "runs"), 2))
    assert "run:1" in session.loaded and session.files["run:1"]
    return events


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (StoreError("/s.sqlite: a store of schema 9"), "a store of schema 9"),
        (KeyError(0), "KeyError: 0"),  # a store of schema -1 looked up its migration to version 0
        (sqlite3.OperationalError("attempt to write a readonly database"), "readonly database"),
        (ValueError("an unforeseen value"), "ValueError: an unforeseen value"),
    ],
)
def test_a_store_that_fails_in_any_way_leaves_the_run_saved_and_says_why_it_was_not_recorded(
    tmp_path, monkeypatch, error, reason
):
    """Whatever the store raises once the checkpoint is written, the run is Trained (not Failed) with its file,
    and its note says it was not recorded in the results store, and why."""

    def broken_store(*args, **kwargs):
        raise error

    monkeypatch.setattr("breadth.core.engine.session.Store", broken_store)
    got = _events(_train_with_scripted_models(tmp_path, monkeypatch))
    assert "Failed" not in got
    (trained,) = got["Trained"]
    assert Path(trained.path).is_file()
    assert trained.note.startswith("not recorded in the results store (") and reason in trained.note
    assert "\n" not in trained.note


def test_a_store_of_a_negative_schema_version_leaves_the_run_saved_with_a_note(tmp_path, monkeypatch):
    """A real store whose `PRAGMA user_version` is -1: the run is Trained with its file and a note, never Failed."""
    store = tmp_path / "negative.sqlite"
    with closing(sqlite3.connect(store)) as db:
        db.execute("PRAGMA user_version = -1")
    monkeypatch.setenv("BREADTH_STORE", str(store))
    got = _events(_train_with_scripted_models(tmp_path, monkeypatch))
    assert "Failed" not in got
    (trained,) = got["Trained"]
    assert Path(trained.path).is_file() and trained.note.startswith("not recorded in the results store (")


def test_the_models_interface_is_written_once_and_both_sides_implement_all_of_it():
    """The torch models and the tests' scripted models subclass one `Models`; a stand-in missing a method cannot
    even be made, so the test double cannot drift from what the session calls."""
    from breadth.core.learning.models import Models

    assert issubclass(TorchModels, Models) and issubclass(ScriptedModels, Models)
    ScriptedModels()

    class Partial(Models):
        def load(self, path):
            return None, {}

    with pytest.raises(TypeError, match="abstract"):
        Partial()
