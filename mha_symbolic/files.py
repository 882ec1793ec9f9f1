"""Files a user names: only regular files are read, and their size is checked before anything is read.

A FIFO named ``doc.md`` or ``model.safetensors`` would block a read forever, ``/dev/zero`` would fill the memory,
and a directory gives a confusing error from deep inside a library.  Every path the package reads on a user's
behalf (documents, checkpoints and their ``config.json``, ``--input`` arrays) goes through :func:`regular_file`
first: the file is opened without blocking, its kind and size come from that open file (so it cannot be swapped
between the check and the read), and the error names the file and what was wrong.

Examples
========

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> regular_file(d, "the document")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
mha_symbolic.errors.InputError: the document ... is a directory, not a regular file
>>> p = os.path.join(d, "a.md"); _ = open(p, "w").write("hello")
>>> read_limited(p, "the document", limit=100)
b'hello'
>>> read_limited(p, "the document", limit=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
mha_symbolic.errors.InputError: the document ... is 5 bytes; the limit is 3 bytes
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .errors import InputError, MHASymbolicError

__all__ = ["regular_file", "read_limited", "DOCUMENT_BYTES", "CONFIG_BYTES"]

#: the largest document ``check`` reads (bytes); a longer text is refused before it is read
DOCUMENT_BYTES = 32 << 20
#: the largest ``config.json`` read beside a checkpoint
CONFIG_BYTES = 1 << 20

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def _open(path: Any, what: str, error: type[MHASymbolicError]) -> tuple[int, os.stat_result]:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise error(f"{what} {path} is a directory, not a regular file") from None
    except FileNotFoundError:
        raise error(f"{what} {path}: no such file") from None
    except OSError as e:
        raise error(f"{what} {path} cannot be read: {e.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise error(f"{what} {path} is {kind}, not a regular file")
    return fd, info


def regular_file(path: Any, what: str, limit: int | None = None,
                 error: type[MHASymbolicError] = InputError) -> int:
    """The size in bytes of ``path``, after checking that it is a regular file (not a directory, FIFO, device
    or socket) of at most ``limit`` bytes; otherwise ``error`` naming ``what`` and the path."""
    fd, info = _open(Path(path), what, error)
    os.close(fd)
    if limit is not None and info.st_size > limit:
        raise error(f"{what} {path} is {info.st_size} bytes; the limit is {limit} bytes")
    return info.st_size


def read_limited(path: Any, what: str, limit: int, error: type[MHASymbolicError] = InputError) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, read from the descriptor that was checked."""
    fd, info = _open(Path(path), what, error)
    try:
        if info.st_size > limit:
            raise error(f"{what} {path} is {info.st_size} bytes; the limit is {limit} bytes")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            data = fh.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise error(f"{what} {path} is larger than the limit of {limit} bytes")
    return data
