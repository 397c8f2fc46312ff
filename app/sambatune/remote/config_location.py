"""Which smb.conf a server uses, and whether changing it needs sudo."""

from __future__ import annotations

import posixpath

from sambatune.remote.samba_ops import default_config_path
from sambatune.remote.transport import Transport


def detect_config_path(transport: Transport) -> str:
    """The file the running smbd was started with, else the build default (smbd -b)."""
    from sambatune.remote.agents import run_agent

    try:
        result = run_agent(transport, "sysinfo", {"only": "smbd"})
        configs = {i.get("config") for i in result.data["samba"]["instances"] if i.get("config")}
        if len(configs) == 1:
            return str(configs.pop())
    except Exception:  # a failing agent just means: fall back to the build default
        pass
    return default_config_path(transport) or "/etc/samba/smb.conf"


def needs_sudo(transport: Transport, path: str) -> bool:
    """True when this account cannot replace ``path`` itself (root never needs sudo)."""
    if transport.sudo_mode() == "root":
        return False
    directory = posixpath.dirname(path) or "."
    check = transport.run(["sh", "-c", 'test -w "$1" && test -r "$2"', "w", directory, path])
    return not check.ok
