"""The engine's protocol under hostile input: bounded lines and nesting, typed fields, a reader that never dies."""

from __future__ import annotations

import io
import json
import threading

import pytest
from fake_engine import ScriptedModels

from breadth.core.engine import protocol as p
from breadth.core.engine.loop import serve
from breadth.core.engine.session import Session
from breadth.core.storage.header import read_metadata
from breadth.core.storage.paths import BASE


def _disk_full(*args):
    raise OSError(28, "No space left on device")


@pytest.fixture
def full_disk(monkeypatch):
    """A session over scripted models whose saves after training fail (a full disk), and its events."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    models = ScriptedModels()
    monkeypatch.setattr(models, "save_new", _disk_full)
    events: list = []
    return Session(events.append, models), events


def _serve(lines: list[str]) -> list[dict]:
    """Run the engine loop on these stdin lines (then end of input) in a thread; the events it wrote."""
    stdin, stdout = io.StringIO("".join(line + "\n" for line in lines)), io.StringIO()
    thread = threading.Thread(target=serve, args=(stdin, stdout, ScriptedModels()), daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the engine did not exit when its input closed"
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def test_deeply_nested_long_and_mistyped_lines_fail_alone_and_later_commands_are_answered():
    """Garbage lines each give one Failed event; the next command is still answered, and EOF ends the engine."""
    garbage = [
        "[" * 60_000,  # within the line limit, nested far beyond the parser's stack
        '{"type": "Probe", "id": ' + "1" * 100_000 + "}",  # over the line limit
        '{"type": "Probe", "id": "seven", "key": "k", "text": "1+2"}',  # a field of the wrong type
        '{"type": "Stop", "id": true}',  # bool is not a number
        '{"type": "Load"}',  # missing fields
        "\x00\xff not json",
    ]
    events = _serve([*garbage, p.encode(p.Load("m", str(BASE))), p.encode(p.Probe(9, "m", "2+3"))])
    failed = [e for e in events if e["type"] == "Failed"]
    assert len(failed) == len(garbage) and all(f["what"] == "protocol" and "\n" not in f["message"] for f in failed)
    assert events[-1]["type"] == "ProbeFinished" and events[-1]["id"] == 9 and events[-1]["solved"]


def test_the_engine_exits_when_its_input_closes_even_mid_training(tmp_path):
    """Input closing while a job trains ends the job and the engine; nothing is saved."""
    events = _serve([p.encode(p.Train(1, "add_2x2=4", {"steps": 100_000}, str(BASE), str(tmp_path)))])
    assert events[0]["type"] == "Ready"
    assert not any(e["type"] == "Trained" for e in events) and not list(tmp_path.iterdir())


def test_train_with_an_unwritable_runs_folder_is_refused_before_training(tmp_path):
    """A runs folder that cannot be written (here: under a file) fails the job at once, before any step."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    events: list = []
    Session(events.append, ScriptedModels()).handle(p.Train(2, "add_2x2=4", {"steps": 3}, str(BASE), str(blocker)))
    assert [type(e).__name__ for e in events] == ["Failed"] and "not a folder" in events[0].message


def test_the_engine_refuses_settings_the_command_line_refuses(tmp_path):
    """steps 0, batch 0, lr inf and held-out 0 in a Train command each give one Failed line, and nothing trains."""
    events: list = []
    session = Session(events.append, ScriptedModels())
    for i, (settings, held_out) in enumerate(
        [({"steps": 0}, 30), ({"batch_size": 0}, 30), ({"lr": float("inf")}, 30), ({}, 0)], start=1
    ):
        session.handle(p.Train(i, "add_2x2=4", settings, str(BASE), str(tmp_path), held_out))
    assert [type(e).__name__ for e in events] == ["Failed"] * 4
    assert not list(tmp_path.iterdir())


def test_two_runs_of_one_mix_and_seed_in_the_same_second_keep_both_models(tmp_path, monkeypatch):
    """Two identical runs finishing in the same second are saved under two names; neither model is lost."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    monkeypatch.setattr("time.strftime", lambda *a: "20261130-120000")
    events: list = []
    session = Session(events.append, ScriptedModels())
    for job in (1, 2):
        session.handle(p.Train(job, "add_2x2=4", {"steps": 2}, str(BASE), str(tmp_path), 3))
    trained = [e for e in events if isinstance(e, p.Trained)]
    assert len(trained) == 2 and trained[0].path != trained[1].path
    assert sorted(f.name for f in tmp_path.iterdir()) == [
        "20261130-120000-add_2x24-s0-2.safetensors",
        "20261130-120000-add_2x24-s0.safetensors",
    ]


def test_a_model_that_could_not_be_saved_stays_in_memory_and_can_be_saved_later(tmp_path, full_disk):
    """If saving after training fails (a full disk), the model is kept and announced; Save writes it later."""
    session, events = full_disk
    session.handle(p.Train(1, "add_2x2=4", {"steps": 2}, str(BASE), str(tmp_path), 3))
    (trained,) = [e for e in events if isinstance(e, p.Trained)]
    assert trained.path == "" and "kept in memory" in trained.note and trained.key in session.loaded
    target = tmp_path / "later.safetensors"
    session.handle(p.Save(2, trained.key, str(target)))
    assert events[-1] == p.Saved(2, str(target))
    assert read_metadata(target).mix == "add_2x2=4" and read_metadata(target).scores == session.records["run:1"].scores
    session.handle(p.Save(3, trained.key, str(target)))  # never over an existing file
    assert isinstance(events[-1], p.Failed) and events[-1].what == "save" and events[-1].id == 3


def test_the_engine_holds_a_bounded_number_of_models_and_never_drops_one_only_in_memory(tmp_path, full_disk):
    """Past MAX_LOADED models, the least recently used one with a file is unloaded (and said so); memory-only stay."""
    from breadth.core.engine.session import MAX_LOADED

    session, events = full_disk
    session.handle(p.Train(1, "add_2x2=4", {"steps": 1}, str(BASE), str(tmp_path), 3))  # only in memory
    for i in range(MAX_LOADED + 2):
        session.handle(p.Load(f"m{i}", str(BASE)))
        session.handle(p.Probe(i, "m0", "1+2"))  # m0 stays in use, so it is never the oldest
    unloaded = [e.key for e in events if isinstance(e, p.Unloaded)]
    assert unloaded and "m0" not in unloaded and "run:1" not in unloaded
    assert "run:1" in session.loaded and "m0" in session.loaded
    assert len([k for k in session.loaded if k in session.files]) <= MAX_LOADED
    session.handle(p.Probe(99, unloaded[0], "1+2"))  # an unloaded model must be loaded again to play
    assert isinstance(events[-1], p.Failed) and "not loaded" in events[-1].message


def test_runs_trained_in_the_app_are_recorded_in_the_results_store(tmp_path, monkeypatch):
    """A run the engine trains lands in the store (source `app`, with its checkpoint's path)."""
    from breadth.core.storage.store import Store

    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    events: list = []
    Session(events.append, ScriptedModels()).handle(p.Train(1, "add_2x2=4", {"steps": 2}, str(BASE), str(tmp_path)))
    (trained,) = [e for e in events if isinstance(e, p.Trained)]
    assert trained.note == ""
    with Store() as store:
        (run,) = store.runs()
    assert run.source == "app" and run.checkpoint == trained.path and run.run.mix == "add_2x2=4"
