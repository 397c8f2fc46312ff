"""Which smb.conf a server uses, and whether changing it needs sudo."""

from __future__ import annotations

import posixpath

from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.samba_ops import default_config_path
from sambatune.remote.transport import Transport


def detect_config_path(transport: Transport) -> str:
    """The smb.conf the running smbd was started with; smbd -b's only when none runs.

    Refuses when several smbd run with different files: changing the wrong one (or a
    default no running smbd reads) is what this guards against.
    """
    from sambatune.remote.samba_ops import smbd_processes

    try:
        seen = smbd_processes(transport)
    except SambaTuneError as error:
        raise InvalidInput(
            f"Could not tell which smb.conf the smbd on {transport.label} uses "
            f"({error.message}); name it with --remote-path."
        ) from error
    # smbd -b is one more round trip: only when an smbd runs without -s, or none runs.
    needed = not seen.instances or any(not i.get("config") for i in seen.instances)
    default = default_config_path(transport) if needed else None
    configs = sorted({str(i.get("config") or default) for i in seen.instances if i.get("config") or default})
    if len(configs) == 1:
        return configs[0]
    if configs:
        raise InvalidInput(
            f"Several smbd run on {transport.label} with different smb.conf files: "
            + ", ".join(configs)
            + ". Say which one to change with --remote-path.",
            details="\n".join(f"pid {i['pid']}: {i.get('config') or default}" for i in seen.instances),
        )
    if default:
        return default
    raise InvalidInput(
        f"No smbd runs on {transport.label} and smbd -b names no smb.conf; name the file with --remote-path."
    )


def needs_sudo(transport: Transport, path: str) -> bool:
    """True when this account cannot replace ``path`` itself (root never needs sudo)."""
    if transport.sudo_mode() == "root":
        return False
    directory = posixpath.dirname(path) or "."
    check = transport.run(["sh", "-c", 'test -w "$1" && test -r "$2"', "w", directory, path])
    return not check.ok
