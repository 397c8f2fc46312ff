"""SambaTune: measure and tune Samba file servers and the computers that use them."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # Looked up on first use only: importlib.metadata costs tens of milliseconds, and
    # every `sambatune` command imports this package before doing anything.
    if name == "__version__":
        from importlib import metadata

        try:
            # The version is defined once, in pyproject.toml; the installed metadata carries it.
            version = metadata.version("sambatune")
        except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout
            version = "0+unknown"
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
