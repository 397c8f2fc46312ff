"""Files shipped inside the package: the server-side agents, the resources, and the
modules a registry finds by listing its package.

Found through importlib.resources so an installed wheel or a PyInstaller bundle
works away from the checkout.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.resources.abc import Traversable

AGENTS_PACKAGE = "sambatune.ssh_agents"
RESOURCES_PACKAGE = "sambatune.resources"


def agents_root() -> Traversable:
    from importlib import resources

    return resources.files(AGENTS_PACKAGE)


def resources_root() -> Traversable:
    from importlib import resources

    return resources.files(RESOURCES_PACKAGE)


def resource_directory() -> str | None:
    """The resources as a plain folder on disk, when installed that way (the usual case).

    importlib.resources costs ~15 ms of imports (zipfile, tempfile); the CLI reads
    its data files through this path instead and falls back to it only for zips.
    """
    import sambatune.resources as package

    folder = os.path.dirname(package.__file__ or "")
    return folder if os.path.isdir(os.path.join(folder, "parameters")) else None


def read_resource(*parts: str) -> bytes:
    """A resource file's bytes, by the fastest way that works for this installation."""
    folder = resource_directory()
    if folder is not None:
        with open(os.path.join(folder, *parts), "rb") as handle:
            return handle.read()
    return resource_bytes(*parts)


def list_resources(*parts: str) -> list[str]:
    """The names of the entries in a resource folder."""
    folder = resource_directory()
    if folder is not None:
        return sorted(os.listdir(os.path.join(folder, *parts)))
    return sorted(entry.name for entry in resource(*parts).iterdir())


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
        if entry.name.endswith(".py") and not entry.name.startswith("_") and entry.name != "agent_runtime.py"
    )


def resource(*parts: str) -> Traversable:
    node = resources_root()
    for part in parts:
        node = node / part
    return node


def resource_bytes(*parts: str) -> bytes:
    return resource(*parts).read_bytes()


def package_modules(package: str, path: Sequence[str]) -> list[ModuleType]:
    """The modules of a package (``__name__`` and ``__path__``), imported, by name.

    For registries that find their entries by listing their own package (advisor rules,
    benchmark kinds). Names starting with ``_`` are left out: a PyInstaller bundle whose
    spec named ``package.__init__`` lists it as a module of its own.
    """
    import importlib
    import pkgutil

    names = sorted(info.name for info in pkgutil.iter_modules(path) if not info.name.startswith("_"))
    return [importlib.import_module(f"{package}.{name}") for name in names]
