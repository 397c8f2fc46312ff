"""When a real smbd puts a changed parameter into effect: reload, new connections, restart.

Each test changes smb.conf under a running smbd, runs ``smbcontrol smbd reload-config``
and looks at what changed for connected and for new clients, then (for the restart
class) restarts smbd and looks again. The classification in sambatune.conf.activation
must agree with what smbd did.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smbprotocol.connection import Connection
from smbprotocol.open import (
    CreateDisposition,
    CreateOptions,
    FileAttributes,
    FilePipePrinterAccessMask,
    ImpersonationLevel,
    Open,
    ShareAccess,
)
from smbprotocol.session import Session
from smbprotocol.tree import TreeConnect

from sambatune.conf.activation import TESTED, Activation, classify_changes
from testbed.ports import free_port
from testbed.smbd import SmbServer


def dump(config: Path) -> str:
    return subprocess.run(
        ["testparm", "-s", "--suppress-prompt", str(config)], capture_output=True, text=True, check=True
    ).stdout


def change(server: SmbServer, old: str, new: str) -> dict[str, Activation]:
    """Edit smb.conf, reload smbd, and return SambaTune's class for each changed name."""
    before = dump(server.config)
    text = server.config.read_text()
    assert old in text, old
    server.config.write_text(text.replace(old, new))
    after = dump(server.config)
    reload_smbd(server)
    return {c.name: c.activation for c in classify_changes(before, after)}


def reload_smbd(server: SmbServer) -> None:
    subprocess.run(
        ["smbcontrol", f"--configfile={server.config}", "smbd", "reload-config"],
        check=True,
        capture_output=True,
        timeout=30,
    )
    # The parent forwards the message to its children; give them a moment.
    time.sleep(1.0)


def restart(server: SmbServer) -> None:
    server.stop()
    server.start()


def listening(port: int) -> set[str]:
    out = subprocess.run(
        ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()}


def accepted_receive_buffer(port: int) -> int:
    """The receive buffer of the server side of a fresh connection to ``port``."""
    connection = Connection(uuid.uuid4(), "127.0.0.1", port, require_signing=False)
    connection.connect(timeout=10)
    try:
        out = subprocess.run(
            ["ss", "-Htnm", "state", "established", f"sport = :{port}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        buffers = [int(m) for m in re.findall(r"skmem:\(r\d+,rb(\d+)", out)]
        assert buffers, out
        return buffers[-1]
    finally:
        connection.disconnect()


@contextmanager
def smb_tree(port: int, share: str = "bench") -> Iterator[TreeConnect]:
    connection = Connection(uuid.uuid4(), "127.0.0.1", port, require_signing=False)
    connection.connect(timeout=10)
    session = Session(connection, "guest", "", require_encryption=False, auth_protocol="ntlm")
    session.connect()
    tree = TreeConnect(session, rf"\\127.0.0.1\{share}")
    tree.connect(require_secure_negotiate=False)
    try:
        yield tree
    finally:
        connection.disconnect()


def open_file(tree: TreeConnect, name: str, *, create: bool) -> Open:
    handle = Open(tree, name)
    handle.create(
        ImpersonationLevel.Impersonation,
        FilePipePrinterAccessMask.GENERIC_READ | FilePipePrinterAccessMask.GENERIC_WRITE,
        FileAttributes.FILE_ATTRIBUTE_NORMAL,
        ShareAccess.FILE_SHARE_READ | ShareAccess.FILE_SHARE_WRITE,
        CreateDisposition.FILE_OVERWRITE_IF if create else CreateDisposition.FILE_OPEN,
        CreateOptions.FILE_NON_DIRECTORY_FILE,
    )
    return handle


def test_listening_sockets_change_only_with_a_restart(fresh_smbd: SmbServer) -> None:
    old_port, new_port = fresh_smbd.port, free_port()
    classes = change(fresh_smbd, f"smb ports = {old_port}", f"smb ports = {new_port}")
    assert classes == {"smb ports": Activation.RESTART}
    assert listening(old_port) and not listening(new_port), "a reload moved the port"

    classes = change(fresh_smbd, "bind interfaces only = yes", "bind interfaces only = no")
    assert classes["bind interfaces only"] is Activation.RESTART
    assert "0.0.0.0" not in listening(old_port), "a reload re-bound the sockets"

    fresh_smbd.stop()
    fresh_smbd.port = new_port
    fresh_smbd.start()
    assert not listening(old_port)
    assert "0.0.0.0" in listening(new_port) or "*" in listening(new_port)


def test_interfaces_with_bind_only_need_a_restart(fresh_smbd: SmbServer) -> None:
    port = fresh_smbd.port
    before = listening(port)
    assert "[::1]" in before, f"the test needs ::1 on lo: {before}"
    classes = change(fresh_smbd, "interfaces = lo", "interfaces = 127.0.0.1/8")
    assert classes == {"interfaces": Activation.RESTART}
    assert listening(port) == before
    restart(fresh_smbd)
    assert listening(port) == {"127.0.0.1"}


def test_socket_option_taken_away_stays_until_a_restart(fresh_smbd: SmbServer) -> None:
    port = fresh_smbd.port
    config = fresh_smbd.config.read_text()
    # 50000 is no default: the kernel doubles it to 100000, which no autotuned socket has.
    fresh_smbd.config.write_text(
        config.replace("[global]\n", "[global]\n  socket options = TCP_NODELAY SO_RCVBUF=50000\n")
    )
    restart(fresh_smbd)
    assert accepted_receive_buffer(port) == 100000

    classes = change(fresh_smbd, "  socket options = TCP_NODELAY SO_RCVBUF=50000\n", "")
    assert classes == {"socket options": Activation.RESTART}
    assert accepted_receive_buffer(port) == 100000, "new connections lost the old buffer"
    restart(fresh_smbd)
    assert accepted_receive_buffer(port) != 100000


def test_socket_option_added_applies_to_new_connections(fresh_smbd: SmbServer) -> None:
    port = fresh_smbd.port
    default = accepted_receive_buffer(port)
    assert default != 120000
    classes = change(fresh_smbd, "[global]\n", "[global]\n  socket options = TCP_NODELAY SO_RCVBUF=60000\n")
    assert classes == {"socket options": Activation.NEW_CONNECTIONS}
    assert accepted_receive_buffer(port) == 120000


def test_negotiated_parameters_apply_to_new_connections(fresh_smbd: SmbServer) -> None:
    port = fresh_smbd.port
    with smb_tree(port) as held:
        connected = held.session.connection
        assert connected.dialect == 0x311
        classes = change(
            fresh_smbd,
            "[global]\n",
            "[global]\n  server max protocol = SMB2_10\n  smb2 max read = 65536\n"
            "  server signing = mandatory\n",
        )
        assert classes == {
            name: Activation.NEW_CONNECTIONS
            for name in ("server max protocol", "smb2 max read", "server signing")
        }
        newcomer = Connection(uuid.uuid4(), "127.0.0.1", port, require_signing=False)
        newcomer.connect(timeout=10)
        try:
            assert newcomer.dialect == 0x210
            assert newcomer.max_read_size == 65536
            assert newcomer.require_signing
        finally:
            newcomer.disconnect()
        # The client connected before keeps what it agreed, and keeps working.
        assert connected.dialect == 0x311 and connected.max_read_size > 65536
        handle = open_file(held, "still-here.txt", create=True)
        handle.write(b"after the reload", 0)
        assert handle.read(0, 16) == b"after the reload"
        handle.close()


def test_share_path_applies_to_new_tree_connects(fresh_smbd: SmbServer, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "only-in-other.txt").write_text("new path")
    (fresh_smbd.share_path / "only-in-old.txt").write_text("old path")
    with smb_tree(fresh_smbd.port) as held:
        classes = change(fresh_smbd, f"path = {fresh_smbd.share_path}", f"path = {other}")
        assert classes == {"path": Activation.NEW_CONNECTIONS}
        open_file(held, "only-in-old.txt", create=False).close()
        with smb_tree(fresh_smbd.port) as fresh:
            open_file(fresh, "only-in-other.txt", create=False).close()


def test_the_tested_names_are_the_ones_proven_here() -> None:
    source = Path(__file__).read_text()
    for name in TESTED:
        assert f'"{name}' in source or f"{name} =" in source, name
