"""Small pieces both warm workers (the search worker, the compile worker) speak over their abstract Unix sockets.

An abstract name has no file permissions, so each end checks who is at the other one (SO_PEERCRED).
"""

from __future__ import annotations

import os
import socket
import struct


def same_user(sock: socket.socket) -> bool:
    """Whether the process at the other end runs as this user (the kernel's word: SO_PEERCRED)."""
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid == os.getuid()


def read_line(conn: socket.socket) -> bytes:
    """A request: bytes up to its newline (or until the peer stops sending)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def read_all(sock: socket.socket) -> bytes:
    """A reply: everything until the peer closes."""
    chunks = []
    while chunk := sock.recv(1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
