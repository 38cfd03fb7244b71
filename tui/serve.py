"""`breadth-tui --serve`: the app in a browser (textual-serve), one app and engine per connection, a few at once.

Each browser connection starts its own `breadth-tui` process (and so its own engine), so the server takes at
most `max_connections` at once and says so on the start panel, which stays until its Start button is pressed
(a page merely opened starts nothing); one more gets a page saying the places are taken. The apps are started
with `--no-files`, on loopback too: nothing on the page can read or write a path on the serving machine (Load,
Save and figures refuse in one line) unless the server was given `--allow-files`. Off loopback (or with `--fresh`)
each app gets `--fresh --max-checkpoints N`: its own temporary breadth folder, removed when it ends (and, should
the app be killed outright, by the server once it has gone), unless the server was given `--shared-store`.
The start panel shows the served command line, so it holds no path (a probes file shows as `FILE`) and no
secret. Stopping the server (Ctrl+C, SIGTERM) ends every app, which ends its engine; an app whose server is
killed outright ends on its broken pipe, and on Linux gets SIGTERM from the kernel too.

This module needs textual-serve (`pip install -c constraints.txt -e '.[serve]'`); `breadth-tui` imports it only for
--serve, and the app itself only reads `tui.file_access`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shlex
import signal
import socket
import sys
from dataclasses import dataclass

import aiohttp_jinja2
from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from breadth.core.storage.paths import remove_orphans

STOP_GRACE = 5.0  # seconds an app has to quit (and stop its engine) before it is terminated, then killed
FULL_WAIT = 60.0  # seconds a refused connection keeps its message on screen before it is closed


class ServeError(Exception):
    """What stops the server from starting, in one line for the person (exit status 2)."""


@dataclass(frozen=True)
class Served:
    """The command each connection runs, and the line the start panel shows for it."""

    argv: list[str]  # run for each connection (the interpreter's and the probes file's full paths)
    shown: str  # `breadth-tui --demo --probes FILE --no-files`: no path, no secret


def served_command(
    demo: bool, probes: str | None, fresh: bool, no_files: bool, max_checkpoints: int | None = None
) -> Served:
    """The app's command line for each connection: the same interpreter, the flags it was given.

    `fresh`: each connection's app makes its own temporary breadth folder (removed when it ends), holding at most
    `max_checkpoints` trained models; `no_files`: nothing on the page may use a path on this machine.
    """
    flags, shown = [], []
    if demo:
        flags.append("--demo")
        shown.append("--demo")
    if probes:
        flags += ["--probes", os.path.abspath(probes)]
        shown += ["--probes", "FILE"]
    cap = ["--max-checkpoints", str(max_checkpoints)] if fresh and max_checkpoints else []
    for on, given in ((fresh, ["--fresh", *cap]), (no_files, ["--no-files"])):
        if on:
            flags += given
            shown += given
    return Served([sys.executable, "-m", "breadth.tui", *flags], shlex.join(["breadth-tui", *shown]))


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port); ServeError with one line if it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as e:
        raise ServeError(f"--host {host}: not an address of this machine ({e})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as e:
        sock.close()
        why = "the port is in use (try another --port, or --port 0 for a free one)" if port else e.strerror
        raise ServeError(f"cannot serve on {host} port {port}: {why}") from None
    sock.setblocking(False)
    return sock


def is_loopback(sock: socket.socket) -> bool:
    """Whether `sock` is bound to a loopback address (reachable from this machine only)."""
    return ipaddress.ip_address(sock.getsockname()[0].split("%")[0]).is_loopback


def page_url(sock: socket.socket) -> str:
    """The address a browser opens: the bound one, or this machine's name for a wildcard (0.0.0.0, ::)."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host.split("%")[0]).is_unspecified:
        host = socket.gethostname()
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def capacity_note(max_connections: int) -> str:
    """What the start panel says about the cap."""
    if max_connections == 1:
        return "one browser at a time, with its own app and engine"
    return f"at most {max_connections} browsers at once, each with its own app and engine"


def _die_with_server():
    """A preexec function: the app gets SIGTERM when the server dies, even by kill -9 (Linux); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: nothing is loaded in the child
    server = os.getpid()
    set_death_signal = 1  # PR_SET_PDEATHSIG

    def preexec() -> None:
        libc.prctl(set_death_signal, signal.SIGTERM)
        if os.getppid() != server:  # the server died before the line above: do not outlive it
            os._exit(1)

    return preexec


def serve(served: Served, sock: socket.socket, max_connections: int, announce=print) -> int:
    """Serve `served` on the listening `sock` until SIGINT, SIGTERM or SIGHUP; every app ended on the way out."""
    return asyncio.run(BreadthServer(served, max_connections).run(sock, announce))


class AppProcess(AppService):
    """One connection's app: its own process group, its command run without a shell, ended on request."""

    def __init__(self, argv: list[str], **kwargs) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24):
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,  # Ctrl+C in the server's terminal reaches the server; it ends the apps
            preexec_fn=_die_with_server(),
        )
        self._stdin = process.stdin
        return process

    async def end(self, grace: float = STOP_GRACE) -> None:
        """Ask the app to quit (it stops its engine); SIGTERM after `grace` seconds, then SIGKILL."""
        process = self._process
        try:
            await asyncio.wait_for(self.stop(), grace)  # returns once the app's output ends
            if process is not None:
                await asyncio.wait_for(process.wait(), grace)  # it may still be stopping its engine
        except (TimeoutError, OSError):
            pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if process is None or process.returncode is not None:
                break
            try:
                os.killpg(process.pid, sig)
                await asyncio.wait_for(process.wait(), grace)
            except (ProcessLookupError, PermissionError):
                break
            except TimeoutError:
                continue
        if process is not None and process.returncode is None:
            await process.wait()
        await asyncio.to_thread(remove_orphans)  # the --fresh folder of an app killed outright goes with it too


class BreadthServer(Server):
    """textual-serve's server with a cap on connections, page addresses taken from the request, and an end."""

    def __init__(self, served: Served, max_connections: int) -> None:
        super().__init__(served.shown, title=f"{served.shown}  ·  {capacity_note(max_connections)}")
        self.served = served
        self.max_connections = max_connections
        self.apps: set[AppProcess] = set()  # one per connection being served
        self.sockets: set[web.WebSocketResponse] = set()
        self.runner: web.AppRunner | None = None

    def full_line(self) -> str:
        n = self.max_connections
        places = "the one place is" if n == 1 else f"all {n} places are"
        return (
            f"breadth: {places} taken ({capacity_note(n)}); "
            "try again when someone closes their tab, or ask for a larger --max-connections"
        )

    def _urls(self, request: web.Request) -> tuple[str, str]:
        """The page's static and websocket addresses, from the address the browser used (0.0.0.0 is none)."""
        base = f"{request.scheme}://{request.host}"
        socket_scheme = "wss" if request.scheme == "https" else "ws"
        return f"{base}/static/", f"{socket_scheme}://{request.host}/ws"

    async def handle_index(self, request: web.Request):
        if len(self.apps) >= self.max_connections:
            return web.Response(status=503, text=self.full_line() + "\n")
        if "start" not in request.query:  # first the start panel (the command, the cap) and its Start button
            raise web.HTTPFound(request.rel_url.update_query(delay="1", start="1"))
        static, websocket = self._urls(request)
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": websocket,
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        if len(self.apps) >= self.max_connections:
            await self._refuse(websocket)
            return websocket
        app = AppProcess(
            self.served.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.apps.add(app)
        self.sockets.add(websocket)
        try:
            await app.start(to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24))
            await self._process_messages(websocket, app)
        except (asyncio.CancelledError, OSError, ValueError):
            pass  # the browser went, the app could not start, or the page sent what is not its protocol
        finally:
            await app.end()
            self.apps.discard(app)
            self.sockets.discard(websocket)
            if not websocket.closed:
                await websocket.close()
        return websocket

    async def _refuse(self, websocket: web.WebSocketResponse) -> None:
        """Write on the page's terminal that the places are taken; close once the tab goes, or after FULL_WAIT.

        Closing at once would cover the line with the page's "Session ended" panel.
        """
        self.sockets.add(websocket)
        try:
            await websocket.send_bytes(("\r\n  " + self.full_line() + "\r\n").encode())
            async with asyncio.timeout(FULL_WAIT):
                async for _ in websocket:  # what the page sends (its size, pings) is not answered
                    pass
        except (TimeoutError, OSError):
            pass
        finally:
            self.sockets.discard(websocket)
            await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER)

    async def end_all(self) -> None:
        """End every app (each stops its engine) and close every page's connection."""
        await asyncio.gather(*(app.end() for app in list(self.apps)), return_exceptions=True)
        for websocket in list(self.sockets):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"the server stopped")

    async def start(self, sock: socket.socket) -> None:
        """Serve on the listening `sock` (until `close`)."""
        self.runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None, shutdown_timeout=2)
        await self.runner.setup()
        await web.SockSite(self.runner, sock).start()

    async def close(self) -> None:
        """End every app and engine, close every page, stop listening."""
        await self.end_all()
        await self.runner.cleanup()

    async def run(self, sock: socket.socket, announce) -> int:
        """Serve until SIGINT, SIGTERM or SIGHUP, then `close`; 0."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await self.start(sock)
        try:
            announce(f"breadth-tui: serving on {page_url(sock)} ({capacity_note(self.max_connections)}; Ctrl+C stops)")
            await stop.wait()
            announce("breadth-tui: stopping (ending each connection's app and engine)")
        finally:
            await self.close()
        return 0

    async def on_startup(self, app) -> None:
        """Say nothing here: `run` prints the address once it is listening (textual-serve prints a logo)."""
