"""`breadth-tui --serve`: its flags, the cap on connections, the loopback/--allow-files rule, and its clean end."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import urllib.request

import aiohttp
import pytest
from serve_helpers import alive, command_of, descendants, screen_text, start_server, stop, wait_until
from tui_helpers import fake_app, wait_for

from breadth.tui.__main__ import main
from breadth.tui.file_access import NO_FILES_ENV
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.path_prompt import PathPrompt
from breadth.tui.serve import BreadthServer, Served, listen, served_command


def _refused(argv: list[str], capsys) -> str:
    """What `breadth-tui ARGV` says before exiting 2 (it must exit 2, with one line)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--serve", "--port", "70000"], "not a port"),
        (["--serve", "--port", "-1"], "not a port"),
        (["--serve", "--port", "eighty"], "not a port"),
        (["--serve", "--max-connections", "0"], "from 1 to 64"),
        (["--serve", "--max-connections", "65"], "from 1 to 64"),
        (["--port", "8000"], "--port goes with --serve"),
        (["--host", "0.0.0.0"], "--host goes with --serve"),
        (["--allow-files"], "--allow-files goes with --serve"),
        (["--max-connections", "2"], "--max-connections goes with --serve"),
        (["--serve", "--allow-files", "--no-files"], "opposite"),
        (["--serve", "--host", "no-such-host.invalid"], "not an address of this machine"),
        (["--serve", "--probes", "x.txt"], "--probes goes with --demo"),
    ],
)
def test_a_bad_serve_flag_is_one_line_and_exit_2(argv, says, capsys):
    """Each bad flag or combination stops before serving, in one line naming it."""
    assert says in _refused(argv, capsys)


def test_a_busy_port_is_one_line_and_exit_2(capsys):
    """A port another program listens on is refused in one line that says so and how to get a free one."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = _refused(["--serve", "--port", str(port)], capsys)
    assert "in use" in err and "--port 0" in err


def test_serve_without_textual_serve_names_the_extra_to_install():
    """Without textual-serve installed, --serve is one line naming the extra to install, exit 2."""
    code = (
        "import sys; sys.modules['textual_serve'] = None\n"  # an import of it fails, as when not installed
        "from breadth.tui.__main__ import main; main(['--serve', '--port', '0'])"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "pip install -c constraints.txt -e '.[serve]'" in run.stderr and "textual_serve" in run.stderr
    assert "breadth[serve]" not in run.stderr  # reads like a name on the package index, where breadth is not


def test_help_names_the_serve_extra_as_the_readme_installs_it(capsys):
    """`breadth-tui --help` says to install the serve extra from the repository with the constraints file."""
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "pip install -c constraints.txt -e '.[serve]'" in out and "breadth[serve]" not in out


def test_port_0_takes_a_free_port_and_the_address_printed_serves_the_page():
    """--port 0 listens on a free port of 127.0.0.1, printed as the page's address; the page names the cap."""
    server, url, _ = start_server("--max-connections", "2")
    try:
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/")
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "at most 2 browsers at once, each with its own app and engine" in page
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(10) == 0


def test_the_served_command_line_shows_no_path():
    """The start panel's command line names a probes file FILE and never shows the interpreter's path; the command
    run holds both in full."""
    served = served_command(demo=True, probes="talk/probes.txt", fresh=True, no_files=True)
    assert served.shown == "breadth-tui --demo --probes FILE --fresh --no-files"
    assert "/" not in served.shown
    assert served.argv[0] == sys.executable
    assert served.argv[served.argv.index("--probes") + 1].endswith("/talk/probes.txt")


def _start_page(*flags: str) -> tuple[list[str], str]:
    """What the server printed and its start page, for `--serve FLAGS` (no browser connects: no app starts)."""
    server, url, lines = start_server(*flags)
    try:
        port = url.rstrip("/").rsplit(":", 1)[1]  # 0.0.0.0 prints this machine's name: ask on loopback
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(10) == 0
    return lines, page


@pytest.mark.parametrize(
    ("flags", "no_files"),
    [
        ((), True),  # 127.0.0.1 by default: loopback, files off too
        (("--host", "127.0.0.1"), True),
        (("--host", "0.0.0.0"), True),  # every address of the machine: not loopback
        (("--host", "0.0.0.0", "--allow-files"), False),
        (("--allow-files",), False),
        (("--no-files",), True),
    ],
)
def test_served_apps_are_told_no_files_unless_allow_files(flags, no_files):
    """The served command carries --no-files (shown on the start page, said by the server) unless --allow-files
    is given, on loopback as off it."""
    lines, page = _start_page(*flags)
    assert ("--no-files" in page) == no_files
    assert any("cannot load, save or write figures" in line for line in lines) == no_files


@pytest.mark.parametrize("action", ["save", "load", "figures"])
async def test_an_app_told_no_files_refuses_each_path_action_in_one_line(action, monkeypatch):
    """With BREADTH_NO_FILES=1 (what --no-files sets), Save, Load and Ctrl+F open no path prompt and write
    nothing: one line under the sum box says why."""
    monkeypatch.setenv(NO_FILES_ENV, "1")
    app = fake_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        {"save": app.models.save, "load": app.models.load, "figures": app.figures.save}[action]()
        await pilot.pause()
        assert not any(isinstance(screen, PathPrompt) for screen in app.screen_stack)
        assert not app.figures.saving
        said = str(app.playground.query_one("#sum-message").render())
        assert said.startswith(f"{action}: not in this served app") and "--allow-files" in said


def _store_one_run(tmp_path, monkeypatch) -> None:
    """A results store holding one run of the shipped base (a row for the matrix)."""
    from breadth.core.storage.header import weights_hash
    from breadth.core.storage.paths import BASE
    from breadth.core.storage.store import Store, StoredRun, run_key
    from breadth.core.world.families import FAMILIES
    from breadth.core.world.records import HeldOutScore, RunMeta
    from breadth.core.world.settings import FinetuneSettings

    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    settings, mix, base = FinetuneSettings(seed=0), "two_digit=70", weights_hash(BASE)
    scores = {n: HeldOutScore(n, 50, 100, {}) for n in FAMILIES}
    run = RunMeta("finetune", settings, mix, 0, 100, scores, (1.0,), 5.0, 0.1)
    with Store() as store:
        store.add(StoredRun(run_key(mix, settings, 100, base), run, base, "sweep"))


async def test_an_app_told_no_files_refuses_the_matrix_figure_on_the_matrix(tmp_path, monkeypatch):
    """F12 on the matrix view, told no files, writes nothing and says why on the matrix (not behind it)."""
    monkeypatch.setenv(NO_FILES_ENV, "1")
    _store_one_run(tmp_path, monkeypatch)
    app = fake_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.action_matrix()
        await wait_for(pilot, lambda: isinstance(app.screen, MatrixView) and app.screen.lines, 10, "the matrix's row")
        await pilot.press("f12")
        await pilot.pause()
        assert not app.figures.saving
        said = str(app.screen.query_one("#matrix-note").render())
        assert said.startswith("figures: not in this served app")


async def test_an_app_not_told_opens_the_path_prompt():
    """Without BREADTH_NO_FILES, Load opens its path prompt (the refusal above is the flag's doing)."""
    app = fake_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.models.load()
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), 5, "the Load prompt")


def test_no_files_flag_sets_the_variable_the_app_reads(monkeypatch):
    """`breadth-tui --no-files` runs the app with BREADTH_NO_FILES=1."""
    import breadth.tui.__main__ as entry

    monkeypatch.delenv(NO_FILES_ENV, raising=False)
    seen = []
    monkeypatch.setattr(entry, "_run_app", lambda demo, fresh=False: seen.append(os.environ.get(NO_FILES_ENV)))
    entry.main(["--no-files"])
    assert seen == ["1"]


# the cap on connections, with a small Textual app standing in for breadth-tui (no engine to start)

STAND_IN = Served([sys.executable, "-c", "from textual.app import App; App().run()"], "stand-in")


async def _connect(session: aiohttp.ClientSession, url: str):
    return await session.ws_connect(url.replace("http", "ws") + "ws?width=80&height=24")


async def _first_text(websocket, timeout: float = 20.0) -> str:
    """What the server first writes to the page's terminal."""
    message = await websocket.receive(timeout=timeout)
    assert message.type == aiohttp.WSMsgType.BINARY, message
    return message.data.decode("utf-8", "replace")


async def _until_ended(server: BreadthServer, apps: int, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while len(server.apps) != apps:
        assert asyncio.get_running_loop().time() < deadline, f"{len(server.apps)} apps, not {apps}"
        await asyncio.sleep(0.05)


async def test_connections_past_the_cap_are_refused_with_a_line_on_the_page():
    """With --max-connections 2, two pages each get their own app process; a third gets a line saying the places
    are taken (left on its screen) and no process; the page itself answers 503 saying so; once one closes, a new one
    is served."""
    sock = listen("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = BreadthServer(STAND_IN, max_connections=2)
    await server.start(sock)
    try:
        async with aiohttp.ClientSession() as session:
            first, second = await _connect(session, url), await _connect(session, url)
            await _first_text(first)
            await _first_text(second)
            pids = {app._process.pid for app in server.apps}
            assert len(pids) == 2  # its own app each

            third = await _connect(session, url)
            assert "all 2 places are taken" in await _first_text(third)
            await third.send_json(["resize", {"width": 80, "height": 24}])  # what the page sends as it opens
            with pytest.raises(TimeoutError):
                await third.receive(timeout=0.5)  # not closed: the line stays on the page (no "Session ended")
            assert len(server.apps) == 2
            async with session.get(url) as page:
                assert page.status == 503 and "all 2 places are taken" in await page.text()
            await third.close()

            await first.close()
            await _until_ended(server, 1)
            assert not any(alive(pid) for pid in pids - {app._process.pid for app in server.apps})
            async with session.get(url) as page:
                assert page.status == 200
            fourth = await _connect(session, url)
            assert "places are taken" not in await _first_text(fourth)
            await _until_ended(server, 2)
    finally:
        await server.close()
    assert server.apps == set()
    assert not any(alive(pid) for pid in pids)


async def test_one_connection_cap_says_the_one_place_is_taken():
    """--max-connections 1: a second page reads that the one place is taken."""
    sock = listen("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = BreadthServer(STAND_IN, max_connections=1)
    await server.start(sock)
    try:
        async with aiohttp.ClientSession() as session:
            first = await _connect(session, url)
            await _first_text(first)
            second = await _connect(session, url)
            assert "the one place is taken" in screen_text([await _first_text(second)])
    finally:
        await server.close()


# nothing left running: the real app and its engine, behind a real server


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_stopping_or_killing_the_server_ends_every_app_and_engine(sig):
    """Ctrl+C (SIGINT), SIGTERM or kill -9 of the server: each connection's app and its engine end within
    seconds (checked in /proc), and a stopped server exits 0."""
    server, url, _ = start_server("--max-connections", "2")

    async def two_pages_with_engines() -> list[int]:
        async with aiohttp.ClientSession() as session:
            pages = [await _connect(session, url) for _ in range(2)]
            seen = ["", ""]
            for _ in range(600):
                for i, page in enumerate(pages):
                    try:
                        message = await page.receive(timeout=0.05)
                    except TimeoutError:
                        continue
                    if message.type == aiohttp.WSMsgType.BINARY:
                        seen[i] += message.data.decode("utf-8", "replace")
                processes = descendants(server.pid)
                engines = [p for p in processes if "breadth.core.engine.session" in command_of(p)]
                if len(engines) == 2 and all("engine ready" in screen_text([text]) for text in seen):
                    break
            else:
                raise AssertionError(f"two apps with their engines did not start: {processes}")
            server.send_signal(sig)
            await asyncio.sleep(0)
            return processes

    try:
        processes = asyncio.run(two_pages_with_engines())
        assert len(processes) == 4  # two apps, each with its engine
        code = server.wait(20)
        assert code == (-9 if sig == signal.SIGKILL else 0)
        wait_until(lambda: not any(alive(p) for p in processes), 20, "every app and engine to end")
    finally:
        stop(server)


def test_no_files_in_process_is_undone_when_the_app_ends(monkeypatch):
    """`main(["--no-files"])` called in-process (a script, a test) tells its app no files, and only that app: once
    it ends, the environment is as it was, so the next app in the process may load and save again."""
    from breadth.tui import __main__ as entry

    seen = []
    monkeypatch.setattr(entry, "_run_app", lambda demo, fresh=False: seen.append(os.environ.get(NO_FILES_ENV)) or 0)
    assert entry.main(["--no-files"]) == 0
    assert seen == ["1"] and NO_FILES_ENV not in os.environ
