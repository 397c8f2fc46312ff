"""Ending a command's input (EOF on an SSH channel) without losing the connection.

paramiko's ``Channel.shutdown_write`` makes the EOF message under the channel's lock
and sends it after letting go. When the command ends at that moment, paramiko's reader
thread can answer the server's close in between, so the EOF reaches the server after
both closes. OpenSSH takes that as a protocol error and drops the whole connection
("ieof packet referred to nonexistent channel"), and every task on it with it. CI saw a
survey lose its connection between two agents this way. Sent under the lock, the EOF
stays ahead of the close: the reader thread needs that lock to close the channel.
paramiko sends a channel's data under the same lock.
"""

from __future__ import annotations

import paramiko


def send_eof(channel: paramiko.Channel) -> None:
    """Tell the command its input has ended; nothing once the channel is closed."""
    with channel.lock:
        if channel.closed:
            return
        message = channel._send_eof()  # type: ignore[attr-defined]  # None once sent
        if message is not None and channel.transport is not None:
            channel.transport._send_user_message(message)  # type: ignore[attr-defined]
