"""A fine-tune's snapshots saved beside its checkpoint: round trip with their scores, old checkpoints, bad sidecars."""

from __future__ import annotations

import json
import struct

import pytest

from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning import checkpoint, snapshots
from breadth.core.learning.experiment import TorchModels, train_run
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.snapshot_file import (
    STORED,
    SnapshotError,
    keep_every,
    read_snapshot_header,
    saved_snapshots,
    sidecar_of,
    stored_steps,
)
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.settings import FinetuneSettings

STEPS = 10  # a short run: snapshots at 0, 2, 4, 6, 8 and 10


def _counts(scores: dict) -> dict:
    """Scores as (solved, total, failures) per family, the part a sidecar stores."""
    return {name: (sc.solved, sc.total, sc.failures) for name, sc in scores.items()}


@pytest.fixture(scope="module")
def run(one_thread, tmp_path_factory):
    """A short fine-tune saved with its snapshots: (checkpoint path, model, record, snapshots kept, their scores)."""
    kept: dict = {}
    settings = FinetuneSettings(seed=1, steps=STEPS)
    model, record = train_run(
        Mix.parse("add_2x2=8"), settings, BASE, 5, on_snapshot=kept.__setitem__, snapshot_every=keep_every(STEPS)
    )
    path = tmp_path_factory.mktemp("run") / "m.safetensors"
    checkpoint.save(model, record, path)
    scores = {step: snapshots.score(snapshot, settings.seed) for step, snapshot in kept.items()}
    assert snapshots.save(path, record, kept, scores) == sidecar_of(path)
    return path, model, record, kept, scores


def test_snapshots_round_trip_through_save_and_load_with_their_scores(run):
    """Loaded back, the saved steps hold exactly the float16 weights kept in training and the scores computed on
    them; scoring a loaded snapshot again gives its stored scores (they were computed on what is stored)."""
    path, model, record, kept, scores = run
    loaded, loaded_scores = snapshots.load(path, checkpoint.load(path)[0], record)
    assert sorted(loaded) == [0, 2, 4, 6, 8, 10] == sorted(loaded_scores)
    assert sorted(kept) == [0, 2, 4, 6, 8, 10] and STORED == 4
    for step, snapshot in loaded.items():
        assert snapshot.state.keys() == kept[step].state.keys()
        assert all(
            t.dtype == kept[step].state[k].dtype and t.equal(kept[step].state[k]) for k, t in snapshot.state.items()
        )
        assert _counts(loaded_scores[step]) == _counts(scores[step])
    assert _counts(snapshots.score(loaded[4], record.seed)) == _counts(loaded_scores[4])
    steps = [(s.step, s.weights) for s in read_snapshot_header(sidecar_of(path)).steps]
    assert steps == [(0, "base"), (2, "stored"), (4, "stored"), (6, "stored"), (8, "stored"), (10, "checkpoint")]


def test_the_checkpoint_beside_its_snapshots_is_the_checkpoint_old_code_reads(run, tmp_path):
    """Saving snapshots leaves the checkpoint file byte for byte what it is without them (so every old reader
    loads it), and a checkpoint with no snapshots beside it loads with none and no error."""
    path, model, record, _, _ = run
    alone = tmp_path / "alone.safetensors"
    checkpoint.save(model, record, alone)
    assert alone.read_bytes() == path.read_bytes()
    assert read_header(path).tensors.keys() == read_header(alone).tensors.keys()
    assert snapshots.load(alone, model, record) == ({}, {}) and saved_snapshots(alone) is None
    events: list = []
    session = Session(events.append, TorchModels())
    session.handle(p.Load("alone", str(alone)))
    assert [type(e).__name__ for e in events] == ["Loaded"] and "alone" not in session.saved


def test_a_loaded_checkpoint_brings_its_snapshots_to_the_session(run):
    """Load makes the saved snapshots playable (Probe with `step`), each step at once, no training needed."""
    path, *_ = run
    events: list = []
    session = Session(events.append, TorchModels())
    session.handle(p.Load("m", str(path)))
    assert sorted(session.saved["m"]) == [0, 2, 4, 6, 8, 10]
    session.handle(p.Probe(1, "m", "23+45", step=4))
    session.handle(p.Probe(2, "m", "23+45", step=5))
    played = [e for e in events if isinstance(e, p.ProbeFinished)]
    failed = [e for e in events if isinstance(e, p.Failed)]
    assert [e.id for e in played] == [1] and [e.id for e in failed] == [2]
    assert "steps: 0, 2, 4, 6, 8, 10" in failed[0].message


def test_stored_steps_are_spread_over_the_run_and_bounded():
    """At most STORED steps between the first and the last are stored, spread evenly over the run."""
    assert stored_steps(list(range(0, 401, 25)), 400) == [75, 150, 250, 325]
    assert stored_steps([0, 80, 160, 240, 320, 400], 400) == [80, 160, 240, 320]
    assert stored_steps([0, 1, 2], 2) == [1] and stored_steps([0, 3], 3) == []
    assert keep_every(400) == 80 and keep_every(3) == 1


def _sidecar_parts(path) -> tuple[dict, bytes]:
    """The sidecar's header (JSON) and its tensor bytes."""
    data = sidecar_of(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def _write_sidecar(path, header: dict, body: bytes) -> None:
    raw = json.dumps(header).encode()
    sidecar_of(path).write_bytes(struct.pack("<Q", len(raw)) + raw + body)


def _meta(header: dict, **changes) -> dict:
    meta = json.loads(header["__metadata__"]["breadth"]) | changes
    return header | {"__metadata__": {"breadth": json.dumps(meta)}}


def _steps(header: dict, change) -> dict:
    meta = json.loads(header["__metadata__"]["breadth"])
    change(meta["steps"])
    return _meta(header, steps=meta["steps"])


def _nan_body(header: dict, body: bytes) -> bytes:
    """The body with the first stored tensor's first value a float16 NaN."""
    first = min((v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"), default=0)
    return body[:first] + b"\x00\x7e" + body[first + 2 :]


BAD = {  # what is done to a good sidecar -> words its one line must hold
    "truncated": (lambda h, b: (None, b[:100]), "truncated"),
    "not safetensors": (lambda h, b: ("garbage", b), "not a safetensors file"),
    "another format": (lambda h, b: (_meta(h, format="breadth-checkpoint"), b), "not a breadth snapshot file"),
    "a later version": (lambda h, b: (_meta(h, version=9), b), "version 9"),
    "another checkpoint's": (lambda h, b: (_meta(h, checkpoint="0123456789abcdef"), b), "another checkpoint"),
    "steps out of order": (lambda h, b: (_steps(h, lambda s: s.insert(1, s.pop(2))), b), "order"),
    "a score past its total": (
        lambda h, b: (_steps(h, lambda s: s[1]["scores"]["add_2x2"].update(solved=99)), b),
        "more than total",
    ),
    "weights of no kind": (lambda h, b: (_steps(h, lambda s: s[1].update(weights="elsewhere")), b), "weights"),
    "no steps": (lambda h, b: (_meta(h, steps=[]), b), "steps"),
    "a float32 tensor": (
        lambda h, b: ({k: v | {"dtype": "F32"} if k != "__metadata__" else v for k, v in h.items()}, b),
        "reads only F16",
    ),
    "NaN in a stored step": (lambda h, b: (h, _nan_body(h, b)), "NaN"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_malformed_sidecar_is_one_clear_line_and_the_model_still_loads(run, tmp_path, case):
    """Whatever is wrong with a sidecar, reading it is one SnapshotError line naming it; the engine still loads
    the model and says why its snapshots are not there in one Failed line (never a crash)."""
    path, model, record, _, _ = run
    copy = tmp_path / "m.safetensors"
    copy.write_bytes(path.read_bytes())
    header, body = _sidecar_parts(path)
    change, words = BAD[case]
    new_header, new_body = change(header, body)
    if new_header is None:
        sidecar_of(copy).write_bytes(sidecar_of(path).read_bytes()[:100])
    elif new_header == "garbage":
        sidecar_of(copy).write_bytes(b"\xff" * 16 + b"{not json")
    else:
        _write_sidecar(copy, new_header, new_body)
    with pytest.raises(SnapshotError) as caught:
        snapshots.load(copy, model, record)
    message = str(caught.value)
    assert words in message and str(sidecar_of(copy)) in message and "\n" not in message, message
    events: list = []
    session = Session(events.append, TorchModels())
    session.handle(p.Load("m", str(copy)))
    assert [type(e).__name__ for e in events] == ["Loaded", "Failed"], events
    assert events[1].what == "snapshot" and words in events[1].message and "m" in session.loaded


def test_snapshots_of_a_replaced_checkpoint_are_refused(run, tmp_path):
    """A sidecar left beside a checkpoint that was since replaced by another model names another checkpoint."""
    path, *_ = run
    other = tmp_path / "m.safetensors"
    other.write_bytes(PRESETS["two_digit_70"].shipped.read_bytes())
    sidecar_of(other).write_bytes(sidecar_of(path).read_bytes())
    with pytest.raises(SnapshotError, match="belong to another checkpoint"):
        saved_snapshots(other)


def test_the_shipped_models_ship_scored_snapshots_that_score_what_they_say(one_thread):
    """Each shipped fine-tune has its snapshots beside it (steps 0, 80, ... 400; 4 stored in float16, under
    2.8 MB), checked against it, with step 0 from the shipped base; two of the mix's steps re-scored here give
    exactly the stored scores (greedy play of fixed weights is the same on any machine)."""
    for preset in PRESETS.values():
        saved = saved_snapshots(preset.shipped, read_header(preset.shipped).run)
        assert saved is not None and saved.base is not None and weights_hash(saved.base) == weights_hash(BASE)
        assert [s.step for s in saved.steps] == [0, 80, 160, 240, 320, 400]
        assert sidecar_of(preset.shipped).stat().st_size < 2_800_000
    mix = PRESETS["mix_35_35"].shipped
    model, header = checkpoint.load(mix)
    kept, scores = snapshots.load(mix, model, header.run)
    for step in (240, 400):
        assert _counts(snapshots.score(kept[step], 0)) == _counts(scores[step])
    assert scores[0]["add_2x2"].solved == 0 and scores[400]["add_2x2"].solved == 20


def test_a_run_saved_later_with_save_gets_its_snapshots_too(tmp_path, monkeypatch):
    """A run the engine could not save when it ended (kept in memory) gets its snapshots beside the file that Save
    writes, once they are scored (the saving waits behind the scoring)."""
    from fake_engine import ScriptedModels

    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    models = ScriptedModels()
    monkeypatch.setattr(models, "save_new", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    events: list = []
    session = Session(events.append, models)
    session.handle(p.Train(1, "add_2x2=4", {"steps": 50}, str(BASE), str(tmp_path / "runs"), 2))
    (trained,) = [e for e in events if isinstance(e, p.Trained)]
    assert trained.path == "" and "disk full" in trained.note
    target = tmp_path / "later.safetensors"
    session.handle(p.Save(2, trained.key, str(target)))
    assert target.exists() and not sidecar_of(target).exists()  # the snapshots are not scored yet
    while session.background:
        session.work()
    steps = [(s.step, s.weights) for s in read_snapshot_header(sidecar_of(target)).steps]
    assert steps == [(0, "base"), (25, "stored"), (50, "checkpoint")]
    assert not [e for e in events if isinstance(e, p.Failed)]
