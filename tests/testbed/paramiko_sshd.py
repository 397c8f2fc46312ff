"""An SSH server that offers the authentication methods a test chooses and writes down
every secret a client sends it (paramiko's server side, on 127.0.0.1).

OpenSSH's sshd decides for itself what to offer (publickey comes first unless it is
turned off, and keyboard-interactive needs PAM); a hostile server offers whatever
makes a client talk. This one accepts nothing: it exists to record what arrives.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.common import AUTH_FAILED
from paramiko.server import InteractiveQuery


@dataclass
class RecordingServer(paramiko.ServerInterface):
    """What one connection offered and received."""

    methods: str  # "password", "keyboard-interactive", "publickey,password", ...
    received: list[tuple[str, str]] = field(default_factory=list)  # (method, secret or key)

    def get_allowed_auths(self, username: str) -> str:
        return self.methods

    def check_auth_none(self, username: str) -> int:
        return AUTH_FAILED

    def check_auth_password(self, username: str, password: str) -> int:
        self.received.append(("password", password))
        return AUTH_FAILED

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        self.received.append(("publickey", key.get_fingerprint().hex()))
        return AUTH_FAILED

    def check_auth_interactive(self, username: str, submethods: str) -> InteractiveQuery:
        return InteractiveQuery("", "", ("Password: ", False), ("Code: ", False))

    def check_auth_interactive_response(self, responses: list[str]) -> int:
        self.received.extend(("keyboard-interactive", answer) for answer in responses)
        return AUTH_FAILED


class RecordingSshd:
    """Listens on 127.0.0.1 until stopped; every connection offers ``methods``."""

    def __init__(self, host_key: Path, methods: str) -> None:
        self.host_key = paramiko.Ed25519Key.from_private_key_file(str(host_key))
        self.public_line = f"{self.host_key.get_name()} {self.host_key.get_base64()}"
        self.methods = methods
        self.sessions: list[RecordingServer] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="recording-sshd", daemon=True)
        self._thread.start()

    @property
    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} {self.public_line}\n"

    @property
    def received(self) -> list[tuple[str, str]]:
        return [item for session in self.sessions for item in session.received]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client: socket.socket) -> None:
        transport = paramiko.Transport(client)
        transport.add_server_key(self.host_key)
        server = RecordingServer(self.methods)
        self.sessions.append(server)
        try:
            transport.start_server(server=server)
            # Authentication happens on the transport's own thread; wait for the client.
            while transport.is_active() and not self._stop.is_set():
                transport.join(0.2)
        except (paramiko.SSHException, EOFError, OSError):
            pass
        finally:
            transport.close()

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()
        self._thread.join(5)
