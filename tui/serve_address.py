"""Where the served app listens and whom it answers: the listening socket, whether it is loopback, the address a
browser opens, the Host names a request may give (`tui.serve` checks every request against them), and how many
places one client address may hold.
"""

from __future__ import annotations

import ipaddress
import socket

from yarl import URL

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # the names of this machine a loopback server answers to


class ServeError(Exception):
    """What stops the server from starting, in one line for the person (exit status 2)."""


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port); ServeError with one line if it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(  # family: the address's (AF_INET...), socket's word
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as e:
        raise ServeError(f"--host {host}: not an address of this machine ({e})") from None
    sock = socket.socket(family, kind, proto)  # the address family: socket's word
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


def per_address_cap(sock: socket.socket, max_connections: int) -> int | None:
    """How many places one client address may hold: all of them on loopback (every client is this machine), else
    half, at least one, so one visitor cannot take every place."""
    return None if is_loopback(sock) else max(1, max_connections // 2)
