"""What a browser served by `breadth-tui --serve` may touch: files (off unless --allow-files, on loopback too), and
whose breadth folder it uses (its own temporary one off loopback or with --fresh, capped and removed when it leaves;
one shared folder with --shared-store or on loopback)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from fake_engine import ScriptedModels
from serve_helpers import socket_url, wait_until
from textual.widgets import Input
from tui_helpers import fake_app, wait_for

import breadth.tui.__main__ as entry
from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.storage.paths import (
    BASE,
    CHECKPOINTS_ENV,
    FRESH_PREFIX,
    VISITOR_CHECKPOINTS,
    data_dir,
)
from breadth.core.storage.store import Store
from breadth.tui import serve
from breadth.tui.file_access import NO_FILES_ENV, files_allowed
from breadth.tui.screens.path_prompt import PathPrompt

OWN_FOLDER = ["--fresh", "--max-checkpoints", str(VISITOR_CHECKPOINTS)]


def _served(monkeypatch, capsys, *flags: str) -> tuple[list[str], list[str], str | None]:
    """`breadth-tui --serve --port 0 FLAGS` up to serving (nothing is served): the flags each browser's app gets,
    the lines the server printed, and the BREADTH_HOME the server served under."""
    seen: list = []

    def serving(served, sock, max_connections, announce=print) -> int:
        seen.append((served, os.environ.get("BREADTH_HOME")))
        sock.close()
        return 0

    monkeypatch.setattr(serve, "serve", serving)
    assert entry.main(["--serve", "--port", "0", *flags]) == 0
    ((served, home),) = seen
    assert served.argv[:3] == [sys.executable, "-m", "breadth.tui"]
    assert served.shown == " ".join(["breadth-tui", *served.argv[3:]])  # the start panel shows what is run
    lines = [line.removeprefix("breadth-tui: ") for line in capsys.readouterr().out.splitlines()]
    return served.argv[3:], lines, home


# files


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_served_apps_have_files_off_by_default_on_loopback_too(monkeypatch, capsys, host):
    """Without --allow-files each browser's app gets --no-files, on loopback as off it, and the server's first line
    says files are off."""
    flags, lines, _ = _served(monkeypatch, capsys, "--host", host)
    assert "--no-files" in flags
    assert lines[0].startswith("files off: the page cannot load, save or write figures")
    assert not any("warning" in line for line in lines)


def test_allow_files_on_loopback_turns_files_on_without_a_warning(monkeypatch, capsys):
    """--allow-files on loopback: the apps may use files, the server says so, and warns of nothing."""
    flags, lines, _ = _served(monkeypatch, capsys, "--allow-files")
    assert "--no-files" not in flags
    assert lines[0].startswith("files on: the page can load, save and write figures on this machine")
    assert not any("warning" in line for line in lines)


def test_allow_files_off_loopback_prints_a_warning_line(monkeypatch, capsys):
    """--allow-files on 0.0.0.0: files on, and one line warns that anyone who opens the page can reach the files."""
    flags, lines, _ = _served(monkeypatch, capsys, "--host", "0.0.0.0", "--allow-files")
    assert "--no-files" not in flags
    assert lines[0].startswith("files on")
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert len(warnings) == 1 and "--allow-files off loopback" in warnings[0] and "your files" in warnings[0]


def _run_as_visitor(flags: list[str], monkeypatch, visit) -> object:
    """Run `breadth-tui FLAGS` in-process with `visit()` standing in for the app; what it answered."""
    answers = []
    monkeypatch.setattr(entry, "_run_app", lambda demo, fresh=False: answers.append(visit()) or 0)
    assert entry.main(flags) == 0
    return answers[0]


def test_a_loopback_visitor_gets_no_path_box_so_no_path_shows_whether_it_exists(monkeypatch, capsys, tmp_path):
    """The app a browser on loopback gets opens no Load prompt: a path that exists and one that does not get the
    same one line (the refusal), as nothing can be typed."""
    flags, _, _ = _served(monkeypatch, capsys)
    (tmp_path / "exists.txt").write_text("x")

    async def press_ctrl_o() -> tuple[bool, str]:
        app = fake_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+o")
            await pilot.pause()
            said = str(app.playground.query_one("#sum-message").render())
            return any(isinstance(s, PathPrompt) for s in app.screen_stack), said

    prompt_opened, said = _run_as_visitor(flags, monkeypatch, lambda: asyncio.run(press_ctrl_o()))
    assert not prompt_opened
    assert said.startswith("load: not in this served app") and str(tmp_path) not in said
    assert files_allowed()  # and the next app in this process may use files again


# whose folder


@pytest.mark.parametrize(
    ("flags", "own"),
    [
        ((), False),  # loopback: the person's own folder, as the desktop app
        (("--host", "0.0.0.0"), True),  # a classroom: each browser its own
        (("--fresh",), True),  # asked for on loopback
        (("--host", "0.0.0.0", "--shared-store"), False),
    ],
)
def test_off_loopback_or_with_fresh_each_browser_gets_its_own_capped_folder(monkeypatch, capsys, flags, own):
    """Off loopback, or with --fresh, each app gets --fresh --max-checkpoints 20 (and the server says each browser
    has its own folder); on loopback, or with --shared-store, every browser uses one folder and the server says
    every browser sees every browser's runs."""
    given, lines, home = _served(monkeypatch, capsys, *flags)
    assert (given[: len(OWN_FOLDER)] == OWN_FOLDER) == own and ("--fresh" in given) == own
    said = " ".join(lines)
    assert ("each browser gets its own temporary breadth folder" in said) == own
    assert ("sees every browser's runs" in said) != own
    assert home == os.environ["BREADTH_HOME"]  # the server itself stays on the user's folder


def test_shared_store_with_fresh_serves_every_browser_one_temporary_folder(monkeypatch, capsys):
    """--fresh --shared-store: the apps get no --fresh of their own; the server runs on one temporary folder (which
    they inherit), removed when it stops."""
    given, lines, home = _served(monkeypatch, capsys, "--fresh", "--shared-store")
    assert "--fresh" not in given and "--max-checkpoints" not in given
    assert Path(home).name.startswith(FRESH_PREFIX) and not Path(home).exists()
    assert any("every browser uses one temporary breadth folder" in line for line in lines)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--shared-store"], "--shared-store goes with --serve"),
        (["--max-checkpoints", "3"], "--max-checkpoints goes with --fresh"),
        (["--fresh", "--max-checkpoints", "0"], "from 1 to"),
        (["--serve", "--fresh", "--max-checkpoints", "3"], "not a flag of the server"),
    ],
)
def test_a_misplaced_folder_flag_is_one_line_and_exit_2(argv, says, capsys):
    """--shared-store without --serve, --max-checkpoints without --fresh, out of range, or given to the server:
    one line naming it, exit 2."""
    with pytest.raises(SystemExit) as stopped:
        entry.main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and len(err.strip().splitlines()) == 1 and says in err


def _stored_run(mix: str) -> None:
    """Record a run of the shipped base in the results store of the current breadth folder (what training does)."""
    from breadth.core.storage.header import weights_hash
    from breadth.core.storage.store import StoredRun, run_key
    from breadth.core.world.environments.environment import REGISTERED
    from breadth.core.world.episodes.scores import HeldOutScore
    from breadth.core.world.runs.records import RunMeta
    from breadth.core.world.runs.settings import FinetuneSettings

    settings, base = FinetuneSettings(seed=0), weights_hash(BASE)
    scores = {n: HeldOutScore(n, 50, 100, {}) for n in REGISTERED}
    run = RunMeta("finetune", settings, mix, 0, 100, scores, (1.0,), 5.0, 0.1)
    with Store() as store:
        store.add(StoredRun(run_key(mix, settings, 100, base), run, base, "app"))


def test_two_visitors_off_loopback_get_their_own_folders_and_see_only_their_own_runs(monkeypatch, capsys, private_home):
    """Two browsers at once off loopback: two folders, neither the user's; each starts with no stored run (so the
    matrix shows the shipped ones), then sees its own run and not the other's; both list the shipped models; each
    folder is gone when its app ends."""
    from breadth.tui.catalog import shipped_entries, stored_entries

    _stored_run("add_2x2=35,add_3x1=35")  # the user's own run, which no browser off loopback may see
    flags, _, _ = _served(monkeypatch, capsys, "--host", "0.0.0.0")
    visits: dict[str, dict] = {}

    def visit(name: str, mix: str, meanwhile=None) -> dict:
        seen = visits[name] = {"home": data_dir(), "before": stored_entries(), "mine": mix}
        _stored_run(mix)  # as training in the app records a run
        if meanwhile:
            meanwhile()  # the other browser comes and goes while this one is open
        seen["stored"] = [e.run.mix for e in stored_entries()]
        seen["shipped"] = len(shipped_entries())
        seen["cap"] = os.environ.get(CHECKPOINTS_ENV)
        return seen

    second = lambda: _run_as_visitor(flags, monkeypatch, lambda: visit("second", "add_3x1=70"))  # noqa: E731
    _run_as_visitor(flags, monkeypatch, lambda: visit("first", "add_2x2=70", second))
    first, other = visits["first"], visits["second"]
    assert first["home"] != other["home"] and private_home not in (first["home"], other["home"])
    assert all(Path(v["home"]).name.startswith(FRESH_PREFIX) for v in (first, other))
    assert first["before"] == other["before"] == []
    assert first["stored"] == [first["mine"]] and other["stored"] == [other["mine"]]
    assert first["shipped"] == other["shipped"] > 0
    assert first["cap"] == other["cap"] == str(VISITOR_CHECKPOINTS)
    assert not Path(first["home"]).exists() and not Path(other["home"]).exists()
    assert CHECKPOINTS_ENV not in os.environ and NO_FILES_ENV not in os.environ


async def test_the_folder_of_an_app_killed_outright_is_removed_by_the_server(tmp_path, monkeypatch):
    """An app killed with SIGKILL (its own clean-up never runs) leaves its --fresh folder; the server, ending it,
    removes the folder."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code = "from breadth.core.storage.paths import fresh_home\nimport time\nwith fresh_home():\n    time.sleep(60)\n"

    async def nothing(*args) -> None:
        return None

    app = serve.AppProcess(
        [sys.executable, "-c", code], write_bytes=nothing, write_str=nothing, close=nothing, download_manager=None
    )
    process = await app._open_app_process()
    try:
        await asyncio.to_thread(wait_until, lambda: list(tmp_path.glob(FRESH_PREFIX + "*")), 20, "the app's folder")
        os.kill(process.pid, signal.SIGKILL)
        await process.wait()
        assert list(tmp_path.glob(FRESH_PREFIX + "*"))  # left behind by the killed app
        await app.end()
    finally:
        if process.returncode is None:
            process.kill()
    assert not list(tmp_path.glob(FRESH_PREFIX + "*"))


# the cap on trained models


def test_the_engine_refuses_to_train_past_the_cap_in_one_line(tmp_path, monkeypatch):
    """With BREADTH_MAX_CHECKPOINTS=2: the second run is saved with the line saying the folder is full, the third
    is refused with that line before a step, and the folder holds two checkpoints."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    monkeypatch.setenv(CHECKPOINTS_ENV, "2")
    events: list = []
    session = Session(events.append, ScriptedModels())
    for job in (1, 2, 3):
        session.handle(p.Train(job, "add_2x2=4", {"steps": 2, "seed": job}, str(BASE), str(tmp_path), 3))
    trained = [e for e in events if isinstance(e, p.Trained)]
    failed = [e for e in events if isinstance(e, p.Failed)]
    assert [e.id for e in trained] == [1, 2] and all(e.path for e in trained)
    full = "folder full (2 models): reload for an empty one"
    assert "folder full" not in trained[0].note and trained[1].note == full
    assert len(failed) == 1 and failed[0].id == 3 and failed[0].message == full
    assert not any(isinstance(e, p.Step) and e.id == 3 for e in events)
    assert len([f for f in tmp_path.glob("*.safetensors") if ".snapshots." not in f.name]) == 2


async def test_the_app_says_the_cap_when_reached_and_refuses_the_next_run_inline(monkeypatch):
    """With a cap of 1: the first run is trained and saved, the status line saying the folder is full; F2 again
    trains nothing, the status line is that one line, and a notification holds it whole."""
    monkeypatch.setattr("fake_engine.STEP_SECONDS", 0.0)
    monkeypatch.setenv(CHECKPOINTS_ENV, "1")
    app = fake_app()
    async with app.run_test(size=(100, 32)) as pilot:
        app.train_panel.query_one("#steps", Input).value = "2"
        app.train_panel.set_value("held-out", "2")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.training is None and app.training_jobs.job == 1, 20, "the run to end")
        panel = app.train_panel
        full = "folder full (1 model): reload for an empty one"
        assert "saved" in panel.status and panel.status.endswith(full)
        await pilot.press("f2")
        await pilot.pause()
        assert app.training_jobs.job == 1 and app.training is None
        assert panel.status_is_error and panel.status == full
        assert any(n.message == full for n in app._notifications)


@pytest.mark.slow
def test_a_served_browsers_folder_goes_when_its_tab_closes_and_the_rest_when_the_server_stops(tmp_path):
    """`--serve --fresh`, two pages: two apps, each on its own temporary folder; closing one page removes its
    folder, SIGTERM to the server removes the other (the server exits 0)."""
    import aiohttp
    from serve_helpers import start_server, stop

    server, url, _ = start_server("--fresh", env={"TMPDIR": str(tmp_path)})
    folders = lambda: sorted(tmp_path.glob(FRESH_PREFIX + "*"))  # noqa: E731

    async def two_pages_then_one() -> list[Path]:
        async with aiohttp.ClientSession() as session:
            address = socket_url(url)
            first, second = await session.ws_connect(address), await session.ws_connect(address)
            await asyncio.to_thread(wait_until, lambda: len(folders()) == 2, 60, "a folder for each page")
            both = folders()
            owners = {(f / "owner.pid").read_text() for f in both}
            await first.close()
            await asyncio.to_thread(wait_until, lambda: len(folders()) == 1, 60, "the closed page's folder to go")
            assert second is not None and len(owners) == 2  # two apps, each the owner of its own folder
            server.send_signal(signal.SIGTERM)
            await asyncio.to_thread(wait_until, lambda: not folders(), 60, "the other folder to go with the server")
            return both

    try:
        both = asyncio.run(two_pages_then_one())
        assert len(both) == 2 and server.wait(20) == 0
    finally:
        stop(server)
