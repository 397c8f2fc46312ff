"""SambaTune: measure and tune Samba file servers and the computers that use them."""

from __future__ import annotations


def _installed_version() -> str:
    """The Version line of the installed metadata, read directly where it can be found:
    importlib.metadata first loads the email package (20 ms of every start, before the
    crash log can name the version); it still answers for any other layout."""
    import os
    import sys

    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("sambatune-") and name.endswith(".dist-info"):
                try:
                    with open(os.path.join(folder, name, "METADATA"), encoding="utf-8") as lines:
                        for line in lines:
                            if line.startswith("Version:"):
                                return line.partition(":")[2].strip()
                            if not line.strip():  # the headers end here
                                break
                except OSError:
                    pass
    from importlib import metadata

    try:
        # The version is defined once, in pyproject.toml; the installed metadata carries it.
        return metadata.version("sambatune")
    except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout
        return "0+unknown"


def __getattr__(name: str) -> str:
    # Looked up on first use only: every `sambatune` command imports this package
    # before doing anything.
    if name == "__version__":
        version = _installed_version()
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
