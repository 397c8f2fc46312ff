"""Which TCP ports an smbd configuration names, as testparm of each release prints it."""

from __future__ import annotations

import pytest

from sambatune.remote.smb_ports import tcp_ports


@pytest.mark.parametrize(
    ("printed", "ports"),
    [
        # Samba 4.17 (and up to 4.22): smb ports, numbers only.
        ({"smb ports": "445 139"}, [445, 139]),
        ({"smb ports": "4455"}, [4455]),
        # Samba 4.25's testparm: 'smb ports = 4455 139' comes out under the new name...
        ({"server smb transports": "4455, 139"}, [4455, 139]),
        # ...its default, and transports with ports of their own; QUIC is UDP.
        ({"server smb transports": "tcp, nbt"}, [445, 139]),
        ({"server smb transports": "tcp:4455, quic, nbt"}, [4455, 139]),
        ({"server smb transports": "quic:8443, nbt:1139"}, [1139]),
        ({"server smb transports": "QUIC"}, []),
        ({}, [445, 139]),
    ],
)
def test_each_releases_spelling(printed: dict[str, str], ports: list[int]) -> None:
    assert tcp_ports(printed) == ports
