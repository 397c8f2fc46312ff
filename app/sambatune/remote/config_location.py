"""Which smb.conf a server uses, and whether changing it needs sudo."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.samba_ops import default_config_path
from sambatune.remote.transport import Transport


def several_smbd(where: str, candidates: Sequence[str], how: str, details: str = "") -> InvalidInput:
    """The one refusal for "several smbd run and none was chosen", wherever it is met:
    it names every smb.conf, and ``how`` says how this verb is told which one."""
    return InvalidInput(
        f"Several smbd run on {where} with different smb.conf files: {', '.join(candidates)}. "
        f"Say which one {how}.",
        details=details,
    )


def detect_config_path(transport: Transport, flag: str = "--remote-path") -> str:
    """The smb.conf the running smbd was started with; smbd -b's only when none runs.

    Refuses when several smbd run with different files: changing the wrong one (or a
    default no running smbd reads) is what this guards against. ``flag`` is how the
    verb asking names the file.
    """
    from sambatune.remote.samba_ops import smbd_processes

    try:
        seen = smbd_processes(transport)
    except SambaTuneError as error:
        raise InvalidInput(
            f"Could not tell which smb.conf the smbd on {transport.label} uses "
            f"({error.message}); name it with {flag}."
        ) from error
    # smbd -b is one more round trip: only when an smbd runs without -s, or none runs.
    needed = not seen.instances or any(not i.get("config") for i in seen.instances)
    default = default_config_path(transport) if needed else None
    configs = sorted({str(i.get("config") or default) for i in seen.instances if i.get("config") or default})
    if len(configs) == 1:
        return configs[0]
    if configs:
        raise several_smbd(
            transport.label,
            configs,
            f"to change with {flag}",
            details="\n".join(f"pid {i['pid']}: {i.get('config') or default}" for i in seen.instances),
        )
    if default:
        return default
    raise InvalidInput(
        f"No smbd runs on {transport.label} and smbd -b names no smb.conf; name the file with {flag}."
    )


def needs_sudo(transport: Transport, path: str) -> bool:
    """True when this account cannot replace ``path`` itself (root never needs sudo)."""
    if transport.sudo_mode() == "root":
        return False
    directory = posixpath.dirname(path) or "."
    check = transport.run(["sh", "-c", 'test -w "$1" && test -r "$2"', "w", directory, path])
    return not check.ok
