"""Connecting to a Dask scheduler for ``ranks --weights --scheduler``, with every wait bounded.

``distributed.Client(address, timeout=...)`` can wait without end: on a port that accepts and never answers, on an
HTTP server (the dashboard's port given by mistake), or on a scheduler with no workers, whose jobs never start.
:func:`connect` first probes the address itself within ``timeout`` seconds: a TCP connection, then the first
bytes of Dask's handshake (a scheduler speaks first; an HTTP server or a silent port does not), and only then
creates the client; a scheduler with no worker is an error after the same timeout.  Only ``tcp://`` addresses
(or ``host:port``) are taken: other protocols are refused by name.

A scheduler must be trusted: results come back from it by pickle, so a hostile scheduler can run code in this
process.  The command's help and the docs say so.

Examples
========

>>> parse_address("tcp://127.0.0.1:8786"), parse_address("localhost:8786")
(('127.0.0.1', 8786), ('localhost', 8786))
>>> parse_address("ucx://10.0.0.1:13337")
Traceback (most recent call last):
...
mha_symbolic.errors.InputError: --scheduler ucx://10.0.0.1:13337: only tcp:// addresses are supported (got ucx://)
"""

from __future__ import annotations

import socket
import time
from typing import Any

from .errors import InputError

__all__ = ["parse_address", "probe", "connect", "HANDSHAKE_MARK"]

#: a key of the first message a Dask scheduler sends on a new connection (its handshake)
HANDSHAKE_MARK = b"pickle-protocol"


def parse_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of ``tcp://host:port`` or ``host:port``; any other protocol, or no port, is an error."""
    if not isinstance(address, str) or not address.strip():
        raise InputError(f"--scheduler must be an address such as tcp://host:8786, got {address!r}")
    text = address.strip()
    if "://" in text:
        protocol, _, text = text.partition("://")
        if protocol != "tcp":
            raise InputError(f"--scheduler {address}: only tcp:// addresses are supported (got {protocol}://)")
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--scheduler {address}: expected tcp://host:port (a port from 1 to 65535)")
    return host, int(port)


def probe(address: str, timeout: float) -> None:
    """Connect to ``address`` and read the first bytes of Dask's handshake, all within ``timeout`` seconds."""
    host, port = parse_address(address)
    end = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            seen = b""
            while HANDSHAKE_MARK not in seen and len(seen) < 1 << 16:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                conn.settimeout(left)
                chunk = conn.recv(4096)
                if not chunk:
                    raise InputError(f"--scheduler {address}: the connection was closed without a Dask handshake")
                seen += chunk
    except TimeoutError:
        raise InputError(f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s (a silent port, "
                         "or another server such as the dashboard's HTTP port)") from None
    except OSError as e:
        raise InputError(f"--scheduler {address}: cannot connect ({e.strerror or e})") from None
    if HANDSHAKE_MARK not in seen:
        raise InputError(f"--scheduler {address}: the server there does not speak Dask's protocol")


def connect(address: str, timeout: float) -> Any:
    """A ``distributed.Client`` for ``address`` after :func:`probe`, with at least one worker (all bounded by
    ``timeout`` seconds)."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler needs dask.distributed: pip install 'mha_symbolic[dask]'") from None
    probe(address, timeout)
    try:
        client = Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise InputError(f"--scheduler {address}: cannot connect to the Dask scheduler: {e}") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception:  # distributed's own TimeoutError types
        client.close()
        raise InputError(f"--scheduler {address}: the scheduler has no worker (none joined within {timeout:g} s); "
                         "its jobs would never start") from None
    return client
