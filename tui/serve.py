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

Who can reach it: the printed address carries a random token (`?token=...`); the page and its websocket are
served only with it, only under the names the server announced (its loopback aliases too on loopback: another
port of 127.0.0.1 is another origin, and a rebound DNS name is not one of them), and only to pages from those
origins; anything else is a 403 before any app starts. A visitor's terminal is capped at MAX_COLUMNS x MAX_ROWS,
off loopback one client address holds at most `per_address` of the places, a frame that is not the page's protocol
closes only its sender (one line on the server's stderr), and the page asks no host but this server for anything.

This module needs textual-serve (`pip install -c constraints.txt -e '.[serve]'`); `breadth-tui` imports it only for
--serve, and the app itself only reads `tui.file_access`.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import os
import secrets
import shlex
import signal
import socket
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import aiohttp_jinja2
from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int
from yarl import URL

from breadth.core.storage.paths import remove_orphans
from breadth.core.world.text.shown import shown

STOP_GRACE = 5.0  # seconds an app has to quit (and stop its engine) before it is terminated, then killed
FULL_WAIT = 60.0  # seconds a refused connection keeps its message on screen before it is closed
# The largest terminal a visitor may ask for (at the start and on every resize); a larger window is drawn at the cap.
# Measured in Chromium at the page's 16 px font: 1920x1080 asks for 213x51, 2560x1440 for 284x68, 3840x2160 (at
# 100% scale) for 426x102. At 300x100 the app's largest frame was 84 kB and it held 73 MB (80x24: 13 kB, 70 MB);
# uncapped, a page asking for 4000x2000 got an app of 349 MB that used 15.6 s of CPU in its first 40 s and sent a
# 10.4 MB frame.
MAX_COLUMNS, MAX_ROWS = 300, 100
TOKEN_BYTES = 24  # random bytes of the token in the printed address (32 characters), as Jupyter's
PAGE = Path(__file__).with_name("serve_page.html")  # textual-serve's page: local fonts, focus on the app
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # the names of this machine a loopback server answers to


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


def server_names(sock: socket.socket) -> frozenset[str]:
    """The `name:port` a request may give as its Host for `sock`: the announced one, and on loopback (or every
    address, 0.0.0.0) the loopback aliases, 127.0.0.1, localhost and [::1] at the same port."""
    port = sock.getsockname()[1]
    names = {URL(page_url(sock)).raw_authority.lower()}
    bound = ipaddress.ip_address(sock.getsockname()[0].split("%")[0])
    if bound.is_loopback or bound.is_unspecified:
        names |= {f"{name}:{port}" for name in LOOPBACK_NAMES}
    if port == 80:  # a browser leaves the default port out
        names |= {name.rsplit(":", 1)[0] for name in names}
    return frozenset(names)


def an_address_at(host: str, port: int) -> bool:
    """Whether `host` (a Host header, or an Origin without its scheme) is an IP address literal at `port`: what a
    server on every address (0.0.0.0) answers to besides its names. A literal cannot be rebound by DNS."""
    name, _, given = host.rpartition(":")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    elif ":" in name:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return given.isdigit() and int(given) == port


def capped_size(width: int, height: int) -> tuple[int, int]:
    """A visitor's terminal size, from 1x1 to MAX_COLUMNS x MAX_ROWS."""
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


class FrameError(Exception):
    """A frame from a page that is not textual-serve's protocol: its sender is closed, in one line on the server."""


def page_frame(text: str) -> tuple[str, object]:
    """A page's frame read: ("stdin", text), ("resize", (columns, rows) capped), ("ping", text), ("blur", None)
    or ("focus", None); FrameError with one line for anything else."""
    try:
        envelope = json.loads(text)
    except ValueError:
        raise FrameError("a frame that is not JSON") from None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        raise FrameError("a frame that is not a [kind, data] list")
    kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind in ("stdin", "ping") and isinstance(data, str):
        return kind, data
    if kind in ("blur", "focus"):
        return kind, None
    if kind == "resize" and isinstance(data, dict):
        width, height = data.get("width"), data.get("height")
        if all(isinstance(n, int) and not isinstance(n, bool) for n in (width, height)):
            return kind, capped_size(width, height)
    raise FrameError(f"a {shown(kind[:20])!r} frame that is not the page's protocol")


def capacity_note(max_connections: int) -> str:
    """What the start panel says about the cap."""
    if max_connections == 1:
        return "one browser at a time, with its own app and engine"
    return f"at most {max_connections} browsers at once, each with its own app and engine"


def per_address_cap(sock: socket.socket, max_connections: int) -> int | None:
    """How many places one client address may hold: all of them on loopback (every client is this machine), else
    half, at least one, so one visitor cannot take every place."""
    return None if is_loopback(sock) else max(1, max_connections // 2)


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
        if process is not None:  # its pipes closed now, not by the garbage collector once the loop is closed
            transport = getattr(process, "_transport", None)  # asyncio's Process keeps it; no public close
            if transport is not None:
                transport.close()
        await asyncio.to_thread(remove_orphans)  # the --fresh folder of an app killed outright goes with it too


class BreadthServer(Server):
    """textual-serve's server with a token, checked names and origins, caps on connections and sizes, and an end."""

    def __init__(self, served: Served, max_connections: int) -> None:
        super().__init__(
            served.shown,
            title=f"{served.shown}  ·  {capacity_note(max_connections)}",
            templates_path=PAGE.parent,
        )
        self.served = served
        self.max_connections = max_connections
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.url = ""  # the page's address with its token, once listening
        self.names: frozenset[str] = frozenset()  # the Host a request may give (server_names)
        self.every_address = False  # listening on 0.0.0.0 or ::, where an IP address literal is a name too
        self.per_address: int | None = None  # places one client address may hold (per_address_cap)
        self.held: Counter[str] = Counter()  # places held by each client address
        self.apps: set[AppProcess] = set()  # one per connection being served
        self.sockets: set[web.WebSocketResponse] = set()
        self.runner: web.AppRunner | None = None
        self.stopping = False  # once set, every request is a 503: no app starts while the others are ended

    def full_line(self) -> str:
        n = self.max_connections
        places = "the one place is" if n == 1 else f"all {n} places are"
        return (
            f"breadth: {places} taken ({capacity_note(n)}); "
            "try again when someone closes their tab, or ask for a larger --max-connections"
        )

    def held_line(self) -> str:
        return (
            f"breadth: this address already holds {self.per_address} of the {self.max_connections} places "
            "(one address may hold at most that many); close another tab first"
        )

    def refusal(self, request: web.Request) -> str | None:
        """Why `request` is not served (a line), or None: a Host not among this server's names, or an Origin (a
        page on another site) not among this server's origins."""
        if not self.named(request.headers.get("Host", "")):  # not request.host: without one it asks DNS
            return "breadth: not served under this name; open the address the server printed"
        origin = request.headers.get("Origin")
        if origin is not None and not (origin.lower().startswith("http://") and self.named(origin[len("http://") :])):
            return "breadth: refused a page from another site; open the address the server printed"
        return None

    def named(self, host: str) -> bool:
        """Whether `host` (name:port) names this server."""
        host = host.lower()
        return host in self.names or (self.every_address and an_address_at(host, self.port))

    def token_refusal(self, given: str) -> web.Response | None:
        """A 403 unless `given` is this server's token (compared in constant time)."""
        if hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            return None
        return web.Response(status=403, text="breadth: this page needs the address the server printed, token and all\n")

    def place_refusal(self, address: str) -> str | None:
        """Why a connection from `address` gets no place (a line), or None."""
        if len(self.apps) >= self.max_connections:
            return self.full_line()
        if self.per_address is not None and self.held[address] >= self.per_address:
            return self.held_line()
        return None

    async def _make_app(self) -> web.Application:
        """textual-serve's routes, the websocket also at /ws/TOKEN (the page's: its script adds ?width=...), and
        every request's Host and Origin checked first."""
        app = await super()._make_app()

        @web.middleware
        async def checked(request: web.Request, handler):
            if (line := self.refusal(request)) is not None:
                return web.Response(status=403, text=line + "\n")
            if self.stopping:
                return web.Response(status=503, text="breadth: the server is stopping\n")
            return await handler(request)

        app.middlewares.append(checked)
        app.router.add_get("/ws/{token}", self.handle_websocket)
        return app

    def _urls(self, request: web.Request) -> tuple[str, str]:
        """The page's static and websocket addresses, under the name the browser used (checked by `refusal`)."""
        host = request.headers["Host"].lower()
        socket_scheme = "wss" if request.scheme == "https" else "ws"
        return f"{request.scheme}://{host}/static/", f"{socket_scheme}://{host}/ws/{self.token}"

    async def handle_index(self, request: web.Request):
        if (refused := self.token_refusal(request.query.get("token", ""))) is not None:
            return refused
        if (line := self.place_refusal(request.remote or "")) is not None:
            return web.Response(status=503, text=line + "\n")
        if "ping" in request.query:  # textual-serve's page would fetch that address, any host's, before starting
            raise web.HTTPFound(request.rel_url.with_query([(k, v) for k, v in request.query.items() if k != "ping"]))
        if "start" not in request.query:  # first the start panel (the command, the cap) and its Start button
            raise web.HTTPFound(request.rel_url.update_query(delay="1", start="1"))
        static, websocket = self._urls(request)
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": websocket,
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template(PAGE.name, request, context)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if (refused := self.token_refusal(request.match_info.get("token", ""))) is not None:
            return refused  # before the handshake: no socket, no app
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        address = request.remote or ""
        if (line := self.place_refusal(address)) is not None:
            await self._refuse(websocket, line)
            return websocket
        app = AppProcess(
            self.served.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.apps.add(app)
        self.held[address] += 1
        self.sockets.add(websocket)
        code = WSCloseCode.OK
        try:
            width = to_int(request.query.get("width", "80"), 80)
            await app.start(*capped_size(width, to_int(request.query.get("height", "24"), 24)))
            await self._process_messages(websocket, app)
        except (asyncio.CancelledError, OSError):
            pass  # the browser went, or the app could not start
        except FrameError as e:
            print(f"breadth-tui: closed the connection from {address}: it sent {e}", file=sys.stderr, flush=True)
            code = WSCloseCode.UNSUPPORTED_DATA
        finally:
            if not websocket.closed:
                await websocket.close(code=code)
            await app.end()
            self.apps.discard(app)
            self.held[address] -= 1
            if not self.held[address]:
                del self.held[address]
            self.sockets.discard(websocket)
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """Pass the page's frames to its app; FrameError on one that is not the page's protocol (`page_frame`)."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            kind, data = page_frame(message.data)
            if kind == "stdin":
                await app_service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize":
                await app_service.set_terminal_size(*data)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            else:
                await app_service.focus()

    async def _refuse(self, websocket: web.WebSocketResponse, line: str) -> None:
        """Write `line` (why there is no place) on the page's terminal; close once the tab goes, or after FULL_WAIT.

        Closing at once would cover the line with the page's "Session ended" panel.
        """
        self.sockets.add(websocket)
        try:
            await websocket.send_bytes(("\r\n  " + line + "\r\n").encode())
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
        """Serve on the listening `sock` (until `close`); `url` is then the page's address, token and all."""
        self.port = sock.getsockname()[1]
        self.url = f"{page_url(sock)}?token={self.token}"
        self.names = server_names(sock)
        self.every_address = ipaddress.ip_address(sock.getsockname()[0].split("%")[0]).is_unspecified
        self.per_address = per_address_cap(sock, self.max_connections)
        self.runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None, shutdown_timeout=2)
        await self.runner.setup()
        await web.SockSite(self.runner, sock).start()

    async def close(self) -> None:
        """Refuse new connections, end every app and engine, close every page, stop listening.

        An app still starting when its connection is closed is ended by its own connection: wait for those too,
        so that none is left running (its pipes open) when the event loop closes.
        """
        self.stopping = True
        await self.end_all()
        try:
            async with asyncio.timeout(4 * STOP_GRACE):  # an end takes at most 3 * STOP_GRACE
                while self.apps:
                    await asyncio.sleep(0.05)
        except TimeoutError:
            pass
        await self.runner.cleanup()

    async def run(self, sock: socket.socket, announce) -> int:
        """Serve until SIGINT, SIGTERM or SIGHUP, then `close`; 0."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await self.start(sock)
        try:
            announce(f"breadth-tui: serving on {self.url} ({capacity_note(self.max_connections)}; Ctrl+C stops)")
            await stop.wait()
            announce("breadth-tui: stopping (ending each connection's app and engine)")
        finally:
            await self.close()
        return 0

    async def on_startup(self, app) -> None:
        """Say nothing here: `run` prints the address once it is listening (textual-serve prints a logo)."""
