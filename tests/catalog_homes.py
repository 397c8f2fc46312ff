"""Parameter catalogs built once for many tests: the SambaTune home a build runs in, and
copying what it built into a test's own home."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def sambatune_home(path: Path) -> Iterator[Path]:
    """SAMBATUNE_HOME is ``path`` meanwhile: a build shared by tests, outside any test's home."""
    saved = os.environ.get("SAMBATUNE_HOME")
    os.environ["SAMBATUNE_HOME"] = str(path)
    try:
        yield path
    finally:
        if saved is None:
            del os.environ["SAMBATUNE_HOME"]
        else:
            os.environ["SAMBATUNE_HOME"] = saved


def copy_into_home(built: list[Path]) -> None:
    """Put built catalog files where this test's SambaTune looks for them."""
    from sambatune.conf.catalog import cache_dir

    for path in built:
        shutil.copy(path, Path(cache_dir()) / path.name)
