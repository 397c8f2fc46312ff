"""Our own parameter knowledge shipped under resources/parameters/: explanations, removals.

Read once per process and kept; see resources/parameters/README.md for the schema.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, NamedTuple

from sambatune.packaged import read_resource


class RemovedParameter(NamedTuple):
    """A parameter that older Samba had: from which release on it is gone, and why."""

    name: str
    removed_in: tuple[int, int, int]
    removed_in_text: str
    note: str
    replacement: str | None
    source: str


def version_tuple(text: str) -> tuple[int, int, int]:
    """``4.11.0`` -> (4, 11, 0); missing parts count as 0."""
    parts = [int(part) for part in text.split(".")[:3] if part.isdigit()]
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


@cache
def _load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(read_resource("parameters", name))
    return document


@cache
def removed_parameters() -> dict[str, RemovedParameter]:
    """Every removed parameter we know, by canonical name."""
    found = {}
    for name, entry in _load("removed.json")["parameters"].items():
        found[name] = RemovedParameter(
            name,
            version_tuple(entry["removed_in"]),
            entry["removed_in"],
            entry["note"],
            entry["replacement"],
            entry["source"],
        )
    return found


def explanations() -> dict[str, dict[str, Any]]:
    """Our explanation of each parameter we wrote one for, by canonical name."""
    parameters: dict[str, dict[str, Any]] = _load("explanations.json")["parameters"]
    return parameters
