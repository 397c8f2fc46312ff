"""SambaTune: measure and tune Samba file servers and the computers that use them."""

from importlib import metadata as _metadata

try:
    # The version is defined once, in pyproject.toml; the installed metadata carries it.
    __version__ = _metadata.version("sambatune")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"
