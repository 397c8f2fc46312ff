"""The TCP ports an smbd configuration listens on, in every Samba release's spelling.

Up to 4.22 ``smb ports`` lists port numbers (default ``445 139``). Samba 4.23 replaced it
with ``server smb transports`` (WHATSNEW 4.23.0; ``smb ports`` became its synonym), whose
words are ``tcp`` (445), ``nbt`` (139, NetBIOS session service), ``quic`` (UDP 443, not a
TCP listener), ``tcp:PORT``, ``nbt:PORT``, ``quic:PORT`` or a bare number (TCP). testparm
of 4.23 and later prints ``smb ports = 4455 139`` as ``server smb transports = 4455, 139``.
"""

from __future__ import annotations

from collections.abc import Mapping

SMB_PORTS = "smb ports"
SMB_TRANSPORTS = "server smb transports"
#: What a transport word without a port means (source3/smbd/server.c, smbd_open_sockets).
_DEFAULT_PORTS = {"tcp": 445, "nbt": 139}
DEFAULT_TCP_PORTS = (445, 139)


def tcp_ports(globals_: Mapping[str, str]) -> list[int]:
    """The TCP ports, in the order configured, of a [global] section as testparm prints
    it (either release's name); Samba's default when neither is there."""
    text = globals_.get(SMB_TRANSPORTS, globals_.get(SMB_PORTS))
    if text is None:
        return list(DEFAULT_TCP_PORTS)
    ports: list[int] = []
    for word in text.replace(",", " ").split():
        kind, _, port = word.lower().rpartition(":")
        if not kind and not port.isdigit():
            kind, port = port, ""
        if kind == "quic" or (kind and kind not in _DEFAULT_PORTS):
            continue
        number = int(port) if port.isdigit() else _DEFAULT_PORTS.get(kind)
        if number is not None and 0 < number < 65536 and number not in ports:
            ports.append(number)
    return ports
