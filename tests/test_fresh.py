"""`breadth-tui --fresh`: a temporary breadth folder for the app and its engine, removed however the app ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from serve_helpers import alive, descendants, wait_until

from breadth.core.storage.paths import FRESH_OWNER, FRESH_PREFIX, data_dir, fresh_home, remove_orphans, runs_dir
from breadth.core.storage.store import default_store


@pytest.fixture
def users_folders(tmp_path, monkeypatch):
    """A user's own breadth folder, runs folder and store, each named by its variable and holding a file."""
    made = {}
    for name, leaf in (("BREADTH_HOME", "home"), ("BREADTH_RUNS", "runs"), ("BREADTH_STORE", "store/runs.sqlite")):
        path = tmp_path / "user" / leaf
        path.parent.mkdir(parents=True, exist_ok=True)
        if name != "BREADTH_STORE":
            path.mkdir()
            (path / "last-week.txt").write_text("a run from last week")
        else:
            path.write_text("last week's store")
        monkeypatch.setenv(name, str(path))
        made[name] = path
    return made


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with its text: what must not change."""
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_fresh_home_puts_every_breadth_file_in_a_new_folder_and_removes_it(users_folders, tmp_path, monkeypatch):
    """Inside fresh_home the breadth folder, the runs and the store are all in a new empty folder (the user's
    BREADTH_RUNS and BREADTH_STORE do not leak in); after it the variables are back and the folder is gone."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where mkdtemp and gettempdir look
    (tmp_path / "tmp").mkdir()
    before = _snapshot(tmp_path / "user")
    with fresh_home() as folder:
        assert folder.name.startswith(FRESH_PREFIX) and folder.parent == tmp_path / "tmp"
        assert data_dir() == folder
        assert runs_dir().parent == folder and default_store().parent == folder
        assert [p.name for p in folder.iterdir()] == [FRESH_OWNER]  # nothing from last week
        (runs_dir()).mkdir()
        (runs_dir() / "trained-now.safetensors").write_text("x")
    assert not folder.exists()
    assert {name: os.environ[name] for name in users_folders} == {k: str(v) for k, v in users_folders.items()}
    assert _snapshot(tmp_path / "user") == before


def test_fresh_home_is_removed_when_what_runs_in_it_raises(tmp_path, monkeypatch):
    """An error inside (the app crashing) still removes the folder and restores BREADTH_HOME."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    home = os.environ["BREADTH_HOME"]
    with pytest.raises(RuntimeError), fresh_home() as folder:
        (folder / "app.log").write_text("a traceback")
        raise RuntimeError("the app crashed")
    assert not folder.exists() and os.environ["BREADTH_HOME"] == home


def _dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_fresh_folders_whose_maker_is_gone_are_removed(tmp_path):
    """A folder left by a killed --fresh app is removed; one in use, one without its owner file and a folder of
    another name are left alone."""

    def folder(name: str, owner: str | None) -> Path:
        path = tmp_path / name
        path.mkdir()
        (path / "model.safetensors").write_text("x")
        if owner is not None:
            (path / FRESH_OWNER).write_text(owner)
        return path

    orphan = folder(FRESH_PREFIX + "orphan", str(_dead_pid()))
    in_use = folder(FRESH_PREFIX + "in-use", str(os.getpid()))
    unowned = folder(FRESH_PREFIX + "unowned", None)
    garbled = folder(FRESH_PREFIX + "garbled", "not a pid")
    stranger = folder("breadth-keep", str(_dead_pid()))
    assert remove_orphans(tmp_path) == [orphan]
    assert not orphan.exists()
    assert all(p.exists() for p in (in_use, unowned, garbled, stranger))


def _web_app(tmp_path: Path, *flags: str) -> subprocess.Popen:
    """`breadth-tui FLAGS` on Textual's web driver (no terminal needed), its temporary folder in tmp_path/tmp."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver"}
    env.update(COLUMNS="80", ROWS="24")
    return subprocess.Popen(
        [sys.executable, "-m", "breadth.tui", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


def _fresh_folders(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "tmp").glob(FRESH_PREFIX + "*"))


def _engine_of(app: subprocess.Popen) -> int:
    """The engine process the app started (waits for it)."""
    wait_until(lambda: descendants(app.pid), 30, "the app to start its engine")
    return descendants(app.pid)[0]


@pytest.mark.slow
def test_fresh_demo_app_ended_by_sigterm_leaves_no_folder_and_no_engine(tmp_path, private_home):
    """`breadth-tui --demo --fresh` runs its engine on the temporary folder; SIGTERM ends the app, the engine
    and the folder, and the user's own breadth folder is never written."""
    app = _web_app(tmp_path, "--demo", "--fresh")
    try:
        wait_until(lambda: _fresh_folders(tmp_path), 30, "the fresh folder")
        folder = _fresh_folders(tmp_path)[0]
        engine = _engine_of(app)
        wait_until(lambda: (folder / "engine.log").exists(), 30, "the engine's log in the fresh folder")
        app.send_signal(signal.SIGTERM)
        assert app.wait(20) is not None
        wait_until(lambda: not alive(engine), 10, "the engine to end")
    finally:
        app.kill()
    assert not folder.exists()
    assert list(private_home.iterdir()) == []  # the user's folder (BREADTH_HOME before --fresh): untouched


def _terminal_app(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen, int]:
    """`breadth-tui FLAGS` in a pseudo-terminal (Textual's own terminal driver); the terminal's master end."""
    import pty

    (tmp_path / "tmp").mkdir(exist_ok=True)
    master, slave = pty.openpty()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    env.pop("TEXTUAL_DRIVER", None)
    app = subprocess.Popen(
        [sys.executable, "-m", "breadth.tui", *flags],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    os.set_blocking(master, False)
    return app, master


def _drain(master: int) -> None:
    """Read what the app drew so far (a full terminal would block it)."""
    try:
        while os.read(master, 65536):
            pass
    except (BlockingIOError, OSError):
        pass


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_fresh_app_in_a_terminal_ended_by_a_signal_removes_its_folder(tmp_path, sig):
    """In a terminal, SIGTERM or SIGHUP (the terminal closed) ends the app as Ctrl+Q does: its engine stops and
    the fresh folder is removed; the exit status says which signal."""
    app, master = _terminal_app(tmp_path, "--fresh")
    try:
        deadline = time.monotonic() + 30
        while not descendants(app.pid) and time.monotonic() < deadline:
            _drain(master)
            time.sleep(0.1)
        folders = _fresh_folders(tmp_path)
        assert len(folders) == 1 and descendants(app.pid), "the app did not start its engine on a fresh folder"
        engine = descendants(app.pid)[0]
        app.send_signal(sig)
        deadline = time.monotonic() + 20
        while app.poll() is None and time.monotonic() < deadline:
            _drain(master)
            time.sleep(0.1)
        assert app.returncode == 128 + sig
        wait_until(lambda: not alive(engine), 10, "the engine to end")
        assert not folders[0].exists()
    finally:
        app.kill()
        os.close(master)


def test_a_crash_under_fresh_prints_the_traceback_and_still_removes_the_folder(tmp_path, monkeypatch, capsys):
    """An app that crashes under --fresh exits 1, its log (inside the folder about to go) printed on stderr, and
    the folder is removed."""
    import breadth.tui.app
    from breadth.tui.__main__ import main
    from breadth.tui.guard import app_log

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen = []

    class CrashingApp:
        """Stands in for BreadthApp: logs a traceback in the breadth folder and ends with status 1, as a crash."""

        def __init__(self, demo=None) -> None:
            self.return_code = None

        def run(self) -> None:
            seen.append(data_dir())
            app_log().write_text("Traceback (most recent call last):\nValueError: the crash\n")
            self.return_code = 1

    monkeypatch.setattr(breadth.tui.app, "BreadthApp", CrashingApp)
    handlers = [signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)]
    assert main(["--fresh"]) == 1
    assert [signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)] == handlers  # as before
    assert seen[0].parent == tmp_path and seen[0].name.startswith(FRESH_PREFIX) and not seen[0].exists()
    assert "ValueError: the crash" in capsys.readouterr().err
