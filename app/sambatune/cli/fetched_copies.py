"""The local copies ``conf get`` wrote, remembered with the bytes they were made from.

Kept apart from the verb's registration so that building the parser (every ``conf``
verb does) does not load hashing and date modules only ``get`` and ``apply`` use.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from pathlib import Path
from typing import Any


class FetchedCopies:
    """Local copies of live files, by their absolute local path."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from sambatune.appdirs import data_dir

            path = data_dir() / "fetched-copies.json"
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def remember(self, local: Path, target: str, path: str, data: bytes) -> None:
        from sambatune.appdirs import private_dir
        from sambatune.remote.local import write_local_file_atomic

        copies = self._load()
        copies[str(local.resolve())] = {
            "target": target,
            "path": path,
            "sha256": hashlib.sha256(data).hexdigest(),
            "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "data": base64.b64encode(data).decode("ascii"),
        }
        # The newest 200 copies: an entry is a whole smb.conf.
        kept = dict(list(copies.items())[-200:])
        private_dir(self.path.parent)
        write_local_file_atomic(str(self.path), json.dumps(kept).encode("utf-8"), mode=0o600)

    def base_of(self, local: Path, target: str, path: str) -> bytes | None:
        """What ``local`` was fetched as from ``path`` on ``target``, or None."""
        entry = self._load().get(str(local.resolve()))
        if not isinstance(entry, dict) or entry.get("target") != target or entry.get("path") != path:
            return None
        try:
            data = base64.b64decode(str(entry.get("data", "")), validate=True)
        except ValueError:
            return None
        return data if hashlib.sha256(data).hexdigest() == entry.get("sha256") else None
