"""`breadth-tui --serve`: its flags, who may reach it (token, Host, Origin), its caps (connections, per address,
terminal size), malformed frames, the loopback/--allow-files rule, and its clean end."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from urllib.parse import urlsplit

import aiohttp
import pytest
from serve_helpers import alive, command_of, descendants, screen_text, socket_url, start_server, stop, wait_until
from tui_helpers import fake_app, wait_for

from breadth.tui.__main__ import main
from breadth.tui.file_access import NO_FILES_ENV
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.path_prompt import PathPrompt
from breadth.tui.serve import BreadthServer, Served, served_command
from breadth.tui.serve_address import listen
from breadth.tui.serve_frames import MAX_COLUMNS, MAX_ROWS


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
        (["--port", "0"], "--port goes with --serve"),  # 0 is a port given (it once read as not given)
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
        assert url.startswith("http://127.0.0.1:") and urlsplit(url).port != 0
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
        address = urlsplit(url)  # 0.0.0.0 prints this machine's name: ask on loopback
        page = urllib.request.urlopen(f"http://127.0.0.1:{address.port}/?{address.query}", timeout=10).read().decode()
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
        {"save": app.catalogue.save, "load": app.catalogue.load, "figures": app.figures.save}[action]()
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
    from breadth.core.world.environments.environment import REGISTERED
    from breadth.core.world.episodes.scores import HeldOutScore
    from breadth.core.world.runs.records import RunMeta
    from breadth.core.world.runs.settings import FinetuneSettings

    monkeypatch.setenv("BREADTH_STORE", str(tmp_path / "s.sqlite"))
    settings, mix, base = FinetuneSettings(seed=0), "two_digit=70", weights_hash(BASE)
    scores = {n: HeldOutScore(n, 50, 100, {}) for n in REGISTERED}
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
        app.catalogue.load()
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


async def _connect(session: aiohttp.ClientSession, url: str, **headers: str):
    """A page's connection to the server whose page (token and all) is at `url`."""
    return await session.ws_connect(socket_url(url), headers=headers)


async def _serving(max_connections: int = 3, host: str = "127.0.0.1") -> BreadthServer:
    """A BreadthServer of the stand-in app listening on a free port of `host` (its page's address: `url`)."""
    server = BreadthServer(STAND_IN, max_connections=max_connections)
    await server.start(listen(host, 0))
    return server


async def _two_pages(session: aiohttp.ClientSession, url: str):
    """Two pages connected one after the other, the first once its app has drawn (the second is not read)."""
    first = await _connect(session, url)
    await _first_text(first)
    return first, await _connect(session, url)


async def _refused_with(session, url: str, server: BreadthServer, websocket, says: str, apps: int) -> None:
    """`websocket`, a page past a cap, reads `says` and starts no app (`apps` still run); the page at `url` answers
    503 saying it."""
    assert says in screen_text([await _first_text(websocket)])
    assert len(server.apps) == apps
    async with session.get(url) as answer:
        assert answer.status == 503 and says in await answer.text()


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
    server = await _serving(max_connections=2)
    url = server.url
    try:
        async with aiohttp.ClientSession() as session:
            first, second = await _connect(session, url), await _connect(session, url)
            await _first_text(first)
            await _first_text(second)
            pids = {app._process.pid for app in server.apps}
            assert len(pids) == 2  # its own app each

            third = await _connect(session, url)
            await _refused_with(session, url, server, third, "all 2 places are taken", apps=2)
            await third.send_json(["resize", {"width": 80, "height": 24}])  # what the page sends as it opens
            with pytest.raises(TimeoutError):
                await third.receive(timeout=0.5)  # not closed: the line stays on the page (no "Session ended")
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
    server = await _serving(max_connections=1)
    url = server.url
    try:
        async with aiohttp.ClientSession() as session:
            _, second = await _two_pages(session, url)
            assert "the one place is taken" in screen_text([await _first_text(second)])
    finally:
        await server.close()


# who may reach the page and its websocket: the token, the Host, the Origin; refused before any app starts


def _children() -> set[int]:
    """The processes this test process has started (a served app would be one)."""
    return set(descendants(os.getpid()))


async def _status(session: aiohttp.ClientSession, url: str, **headers: str) -> int:
    """The status of a websocket handshake at `url` (101 when it opens: then it is closed at once)."""
    try:
        websocket = await session.ws_connect(url, headers=headers)
    except aiohttp.WSServerHandshakeError as e:
        return e.status
    await websocket.close()
    return 101


async def test_the_page_and_its_websocket_need_the_printed_token():
    """Without the printed address's token, or with a wrong one, the page and the websocket are 403 and no app
    starts; with it, the start panel's redirect keeps the token and the page's websocket address carries it."""
    server = await _serving()
    before = _children()
    address = urlsplit(server.url)
    base, token = f"http://{address.netloc}", server.token
    assert address.query == f"token={token}" and len(token) >= 32
    try:
        async with aiohttp.ClientSession() as session:
            for page in (f"{base}/", f"{base}/?token=", f"{base}/?token={token[:-1]}", f"{base}/?token={token}x"):
                async with session.get(page, allow_redirects=False) as answer:
                    assert answer.status == 403, page
            for socket in (f"ws://{address.netloc}/ws?width=80&height=24", socket_url(f"{base}/?token=wrong")):
                assert await _status(session, socket) == 403, socket
            assert server.apps == set() and _children() == before

            async with session.get(server.url, allow_redirects=False) as answer:
                assert answer.status == 302
                assert answer.headers["Location"] == f"/?token={token}&delay=1&start=1"
            async with session.get(f"{base}/?token={token}&start=1") as answer:
                assert answer.status == 200
                assert f'data-session-websocket-url="ws://{address.netloc}/ws/{token}"' in await answer.text()
            assert server.apps == set() and _children() == before  # a page opened starts nothing
            websocket = await _connect(session, server.url)
            await _first_text(websocket)
            assert len(server.apps) == 1
    finally:
        await server.close()


async def test_a_host_or_origin_other_than_the_servers_is_refused_before_any_app_starts():
    """A Host that is not the server's announced name or a loopback alias at its port (a rebound DNS name, another
    port), and an Origin that is not one of those (a page on another port of 127.0.0.1, another site, `null`), get
    403 on the page and the websocket, token and all, and no app starts; the aliases are served, and the page's
    websocket address is built from the (checked) name the browser used."""
    server = await _serving()
    before = _children()
    port, token = urlsplit(server.url).port, server.token
    page, socket = f"{server.url}&start=1", socket_url(server.url)
    try:
        async with aiohttp.ClientSession() as session:
            hosts = (f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1")
            for host in hosts:
                async with session.get(page, headers={"Host": host}) as answer:
                    assert answer.status == 403 and "name" in await answer.text(), host
                assert await _status(session, socket, Host=host) == 403, host
            origins = (
                f"http://127.0.0.1:{port + 1}",
                f"http://evil.example:{port}",
                "null",
                f"https://127.0.0.1:{port}",
            )
            for origin in origins:
                async with session.get(page, headers={"Origin": origin}) as answer:
                    assert answer.status == 403 and "another site" in await answer.text(), origin
                assert await _status(session, socket, Origin=origin) == 403, origin
            reader, writer = await asyncio.open_connection("127.0.0.1", port)  # HTTP/1.0: no Host at all
            writer.write(f"GET /?token={token}&start=1 HTTP/1.0\r\n\r\n".encode())
            assert (await reader.readline()).split()[1] == b"403"
            writer.close()
            assert server.apps == set() and _children() == before

            for alias in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}"):
                async with session.get(page, headers={"Host": alias, "Origin": f"http://{alias}"}) as answer:
                    assert answer.status == 200, alias
                    assert f'"ws://{alias}/ws/{token}"' in await answer.text()
            websocket = await _connect(session, server.url, Origin=f"http://localhost:{port}")
            await _first_text(websocket)
            assert len(server.apps) == 1
    finally:
        await server.close()


async def test_on_every_address_the_machines_name_and_address_literals_are_served_and_other_names_not():
    """Served on 0.0.0.0, the page answers under the announced name (this machine's), an IP address literal and
    localhost at the server's port, and refuses any other name (a rebound DNS name) with 403."""
    server = await _serving(host="0.0.0.0")
    address = urlsplit(server.url)
    assert address.hostname == socket.gethostname().lower()
    try:
        async with aiohttp.ClientSession() as session:
            page = f"http://127.0.0.1:{address.port}/?{address.query}"
            for host, status in (
                (address.netloc, 302),
                (f"127.0.0.1:{address.port}", 302),
                (f"10.1.2.3:{address.port}", 302),
                (f"localhost:{address.port}", 302),
                (f"evil.example:{address.port}", 403),
                (f"10.1.2.3.nip.io:{address.port}", 403),
                (f"127.0.0.1:{address.port + 1}", 403),
            ):
                async with session.get(page, headers={"Host": host}, allow_redirects=False) as answer:
                    assert answer.status == status, host
    finally:
        await server.close()


async def test_a_ping_address_in_the_page_address_is_dropped():
    """`?ping=ADDRESS` (textual-serve's page fetches it, any host, before it starts) is dropped by a redirect."""
    server = await _serving()
    try:
        async with aiohttp.ClientSession() as session:
            url = f"{server.url}&start=1&ping=http://tracker.example/visit"
            async with session.get(url, allow_redirects=False) as answer:
                assert answer.status == 302 and "ping" not in answer.headers["Location"]
                assert f"token={server.token}" in answer.headers["Location"]
    finally:
        await server.close()


# what a visitor may ask of the server: terminal size, frames, places


def _environment_of(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [entry.split(b"=", 1) for entry in f.read().split(b"\0") if b"=" in entry]
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


async def test_a_visitors_terminal_size_is_capped_at_the_start_and_on_resize(monkeypatch):
    """A page asking for a 4000x2000 terminal, when it connects and in a later resize frame, gets its app at
    MAX_COLUMNS x MAX_ROWS (300x100); a size within the cap is passed as asked."""
    from textual_serve.app_service import AppService

    sizes: list[tuple[int, int]] = []
    original = AppService.set_terminal_size

    async def recorded(self, width: int, height: int) -> None:
        sizes.append((width, height))
        await original(self, width, height)

    monkeypatch.setattr(AppService, "set_terminal_size", recorded)
    server = await _serving()
    try:
        async with aiohttp.ClientSession() as session:
            websocket = await session.ws_connect(socket_url(server.url, width=4000, height=2000))
            await _first_text(websocket)
            (app,) = server.apps
            environment = _environment_of(app._process.pid)
            assert (environment["COLUMNS"], environment["ROWS"]) == (str(MAX_COLUMNS), str(MAX_ROWS)) == ("300", "100")
            for width, height in ((4000, 2000), (120, 40), (0, -5)):
                await websocket.send_json(["resize", {"width": width, "height": height}])
            for _ in range(200):
                if len(sizes) == 3:
                    break
                await asyncio.sleep(0.05)
            assert sizes == [(300, 100), (120, 40), (1, 1)]
    finally:
        await server.close()


MALFORMED = [
    "{}",
    "[]",
    '["stdin", 5]',
    '["resize", 5]',
    '["resize", {"width": "80", "height": 24}]',
    "not JSON",
    "[7]",
]


async def test_a_malformed_frame_closes_only_its_sender_in_one_line(capsys, caplog):
    """Each malformed frame (`{}`, `[]`, `["stdin",5]`, `["resize",5]`, a resize with a string width, not JSON) closes
    its sender's connection (1003) and ends its app, with one line on the server's stderr and no traceback or
    error logged; another visitor's app runs on and answers."""
    server = await _serving(max_connections=2)
    try:
        async with aiohttp.ClientSession() as session:
            other = await _connect(session, server.url)
            await _first_text(other)
            (others_app,) = server.apps
            for frame in MALFORMED:
                sender = await _connect(session, server.url)
                await _first_text(sender)
                await sender.send_str(frame)
                closed = await sender.receive(timeout=20)
                while closed.type not in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):  # the app's frames first
                    closed = await sender.receive(timeout=20)
                assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 1003, (frame, closed)
                await _until_ended(server, 1)
                assert server.apps == {others_app} and others_app._process.returncode is None
            await other.send_json(["ping", "still here"])
            while (message := await other.receive(timeout=10)).type == aiohttp.WSMsgType.BINARY:
                pass
            assert json.loads(message.data) == ["pong", "still here"]
    finally:
        await server.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == len(MALFORMED) and all(line.startswith("breadth-tui: closed the connection") for line in err)
    assert "Traceback" not in "\n".join(err)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


async def test_off_loopback_one_address_cannot_hold_every_place():
    """Served on every address (0.0.0.0) with 3 places, one client address holds at most one (3 // 2): its second
    page reads that its address holds its share, and no app starts for it; the page answers 503 saying so; once
    its first closes, it is served again."""
    server = await _serving(max_connections=3, host="0.0.0.0")
    address = urlsplit(server.url)
    url = f"http://127.0.0.1:{address.port}/?{address.query}"  # an address literal names a 0.0.0.0 server
    try:
        async with aiohttp.ClientSession() as session:
            first, second = await _two_pages(session, url)
            await _refused_with(session, url, server, second, "this address already holds 1 of the 3 places", apps=1)
            await second.close()
            await first.close()
            await _until_ended(server, 0)
            third = await _connect(session, url)
            assert "places" not in screen_text([await _first_text(third)])
            assert len(server.apps) == 1
    finally:
        await server.close()


async def test_no_app_starts_while_the_server_stops():
    """A page connecting while the server stops (ending its apps) is refused with 503 and starts no app: every
    app the server started has ended when it has stopped, none left for the event loop's end."""
    server = await _serving()
    async with aiohttp.ClientSession() as session:
        first = await _connect(session, server.url)
        await _first_text(first)
        before = _children()
        ending, release, end_all = asyncio.Event(), asyncio.Event(), server.end_all

        async def held_end_all() -> None:  # the stop stays in the middle of ending the apps until the test lets go
            apps_ending = asyncio.create_task(end_all())
            ending.set()
            await release.wait()
            await apps_ending

        server.end_all = held_end_all
        stopping = asyncio.create_task(server.close())
        try:
            await asyncio.wait_for(ending.wait(), 10)
            assert not stopping.done()
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await _connect(session, server.url)
            assert refused.value.status == 503
            await asyncio.sleep(0.5)
            assert _children() <= before
        finally:
            release.set()
            await stopping
    assert server.apps == set() and not any(alive(pid) for pid in before)


# nothing left running: the real app and its engine, behind a real server


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_stopping_or_killing_the_server_ends_every_app_and_engine(sig):
    """Ctrl+C (SIGINT), SIGTERM or kill -9 of the server: each connection's app and its engine end within
    seconds (checked in /proc), and a stopped server exits 0 saying one line, with nothing on stderr (no
    traceback, no "Exception ignored ... Event loop is closed")."""
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
                engines = [p for p in processes if "breadth.core.engine.loop" in command_of(p)]
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
        if sig != signal.SIGKILL:
            said, err = server.stdout.read().strip().splitlines(), server.stderr.read()
            assert said == ["breadth-tui: stopping (ending each connection's app and engine)"]
            assert err == "", err  # no "Traceback", no "Exception ignored"
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
