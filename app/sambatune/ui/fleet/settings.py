"""What the Fleet window remembers between runs: where the hosts came from last.

A small JSON file beside the server list (``config_dir()/fleet.json``), read and written
the way profiles.py keeps servers.json, so SAMBATUNE_HOME moves it with the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

from sambatune.appdirs import config_dir
from sambatune.ui.fleet.context import INVENTORY, FleetSource


def settings_path() -> Path:
    return config_dir() / "fleet.json"


def last_source() -> FleetSource | None:
    """The source used last, or None (first run, or a file nobody can read)."""
    try:
        data = json.loads(settings_path().read_text(encoding="utf-8"))
        return FleetSource(
            str(data.get("kind") or INVENTORY), str(data.get("value") or ""), str(data.get("limit") or "")
        )
    except (OSError, ValueError, AttributeError):
        return None


def remember_source(source: FleetSource) -> None:
    """Keep the source for next time; failing to is not worth an error dialog."""
    from sambatune.remote.local import write_local_file_atomic

    payload = {"kind": source.kind, "value": source.value, "limit": source.limit}
    try:
        settings_path().parent.mkdir(parents=True, exist_ok=True)
        write_local_file_atomic(
            str(settings_path()), (json.dumps(payload, indent=2) + "\n").encode("utf-8"), mode=0o600
        )
    except OSError:
        pass
