"""Read-only commands (`breadth runs`, `breadth report`) leave a closed store's folder and bytes as they were."""

from __future__ import annotations

from breadth.core.cli.main import main
from breadth.core.storage.store import Store, StoredRun, run_key
from breadth.core.world.episodes.scores import HeldOutScore
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings


def _stored(seed: int) -> StoredRun:
    settings = FinetuneSettings(seed=seed)
    scores = {"two_digit": HeldOutScore("two_digit", 20, 30, {"no call": 10})}
    run = RunMeta("finetune", settings, "two_digit=70", seed, 30, scores, (2.0, 1.0), 4.0, 0.1)
    return StoredRun(run_key("two_digit=70", settings, 30, "base0"), run, "base0", "test")


def test_runs_and_report_create_no_wal_or_shm_beside_a_closed_store(tmp_path):
    """After a store is written and closed, `runs` and `report` on it add no file and change none of its bytes."""
    path = tmp_path / "grid.sqlite"
    with Store(path) as store:
        store.add(_stored(0))
        store.add(_stored(1))
    before = sorted(p.name for p in tmp_path.iterdir())
    data = path.read_bytes()
    assert before == ["grid.sqlite"]
    assert main(["runs", "--store", str(path)]) == 0
    assert main(["report", "--store", str(path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert path.read_bytes() == data


def test_a_store_with_a_live_writer_is_read_through_its_log(tmp_path):
    """While a writer holds the store open (its -wal present), a read-only Store sees runs only in the log."""
    path = tmp_path / "grid.sqlite"
    with Store(path) as writer:
        writer.db.execute("PRAGMA wal_autocheckpoint = 0")  # the runs stay in the -wal, not yet in the file
        writer.add(_stored(0))
        with Store(path, read_only=True) as reader:
            assert [r.run.seed for r in reader.runs()] == [0]
