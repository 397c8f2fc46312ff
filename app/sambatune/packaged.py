"""Files shipped inside the package: the server-side agents and the resources.

Found through importlib.resources so an installed wheel or a PyInstaller bundle
works away from the checkout.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

AGENTS_PACKAGE = "sambatune.ssh_agents"
RESOURCES_PACKAGE = "sambatune.resources"


def agents_root() -> Traversable:
    return resources.files(AGENTS_PACKAGE)


def resources_root() -> Traversable:
    return resources.files(RESOURCES_PACKAGE)


def agent_source(name: str) -> str:
    """The source text of ``ssh_agents/<name>.py``."""
    path = agents_root() / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"agent {name!r} is not packaged ({path})")
    return path.read_text(encoding="utf-8")


def agent_names() -> list[str]:
    """Every agent shipped (the shared runtime module is not an agent)."""
    return sorted(
        entry.name[:-3]
        for entry in agents_root().iterdir()
        if entry.name.endswith(".py") and not entry.name.startswith("_")
        and entry.name != "agent_runtime.py"
    )


def resource(*parts: str) -> Traversable:
    node = resources_root()
    for part in parts:
        node = node / part
    return node


def resource_bytes(*parts: str) -> bytes:
    return resource(*parts).read_bytes()
