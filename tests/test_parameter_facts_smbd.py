"""Facts the parameter knowledge states about smbd's behaviour, checked on a real smbd.

Each test starts its own smbd from tests/testbed on loopback with one setting changed and
looks at what a client sees, so the explanations (resources/parameters/explanations.json)
and lint rest on the server itself, not only on its documentation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sambatune.bench.smb_wire import SmbProbeConnection
from testbed.ports import free_port
from testbed.smbd import SmbServer

pytestmark = pytest.mark.testbed  # its own smbd


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SmbServer]:
    found = SmbServer(tmp_path, "facts-smbd")
    yield found
    found.stop()


def start(server: SmbServer, global_lines: str = "", share_lines: str = "") -> SmbServer:
    server.port = server.port or free_port()
    config = server.default_config()
    config = config.replace("[global]\n", f"[global]\n{global_lines}", 1)
    config = config.replace("[bench]\n", f"[bench]\n{share_lines}", 1)
    return server.start(config)


def allocation_size(server: SmbServer, name: str) -> tuple[str, int, int]:
    """(dialect, allocation size, end of file) from an SMB2 CREATE of ``name``."""
    from smbprotocol.open import (
        CreateDisposition,
        CreateOptions,
        FileAttributes,
        FilePipePrinterAccessMask,
        ImpersonationLevel,
        Open,
        ShareAccess,
    )

    with SmbProbeConnection("127.0.0.1", server.share, server.port) as connection:
        handle: Any = Open(connection.tree, name)
        handle.create(
            ImpersonationLevel.Impersonation,
            FilePipePrinterAccessMask.FILE_READ_ATTRIBUTES,
            FileAttributes.FILE_ATTRIBUTE_NORMAL,
            ShareAccess.FILE_SHARE_READ,
            CreateDisposition.FILE_OPEN,
            CreateOptions.FILE_NON_DIRECTORY_FILE,
        )
        try:
            return (connection.facts()["dialect"], int(handle.allocation_size), int(handle.end_of_file))
        finally:
            handle.close()


def test_allocation_roundup_size_rounds_for_smb3_clients(server: SmbServer) -> None:
    """Issue 16: the knowledge called it SMB1-only and lint said it had no effect. smbd
    (source3/smbd/smb2_trans2.c smb_roundup()) rounds the allocation size it reports to SMB2/3
    clients too: a 6-byte file shows 1 MiB allocated."""
    start(server, share_lines="  allocation roundup size = 1048576\n")
    (server.share_path / "small.txt").write_text("hello\n")
    assert allocation_size(server, "small.txt") == ("3.1.1", 1048576, 6)


def test_smb2_max_read_and_write_go_beyond_8_mib(server: SmbServer) -> None:
    """source3/smbd/smb2_negprot.c caps smb2 max read/write at 0xFFFF00 for SMB 2.1 and later,
    not at the 8 MiB smb.conf(5) calls the maximum."""
    start(server, global_lines="  smb2 max read = 16M\n  smb2 max write = 12M\n")
    with SmbProbeConnection("127.0.0.1", server.share, server.port) as connection:
        facts = connection.facts()
    assert (facts["max_read_size"], facts["max_write_size"]) == (0xFFFF00, 12 * 1024 * 1024)


@pytest.mark.parametrize(
    ("global_lines", "reachable"),
    [
        ("", False),  # smb1 unix extensions defaults to yes: wide links = yes is ignored
        ("  smb1 unix extensions = no\n", True),
        ("  allow insecure wide links = yes\n", True),
    ],
)
@pytest.mark.testbed  # runs Samba's own programs
def test_wide_links_need_unix_extensions_off_or_insecure_wide_links(
    server: SmbServer, tmp_path: Path, global_lines: str, reachable: bool
) -> None:
    """source3/param/loadparm.c lp_widelinks(): while smb1 unix extensions is on, wide links is
    false unless allow insecure wide links is set, for SMB2/3 connections too (smbclient
    negotiates SMB3 here). lint's wide-links-ignored finding says so."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text("outside the share\n")
    start(server, global_lines, share_lines="  wide links = yes\n")
    (server.share_path / "link").symlink_to(outside)
    result = server.smbclient("get link/note.txt -")
    assert ("outside the share" in result.stdout) is reachable, result.stdout + result.stderr
