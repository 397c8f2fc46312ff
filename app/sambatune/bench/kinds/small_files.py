"""This computer creates, checks, reads, renames, lists and deletes many small files on
a share, timing every call. (Its command, ``sambatune bench files``, needs no SSH and
lives in ``cli/bench_small_files.py``.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sambatune.bench.kinds.arguments import form_login, require_share_target, share_target
from sambatune.bench.kinds.kind import SHARE_TARGET_ROWS, BenchKind, RunRequest

if TYPE_CHECKING:
    from sambatune.bench.small_files import SmallFilesOptions


def small_files_options(request: RunRequest, login: dict[str, Any]) -> SmallFilesOptions:
    """The test's options; :class:`InvalidInput` says what is out of range."""
    from sambatune.bench.small_files import SmallFilesOptions
    from sambatune.bench.smb_wire import SmbLogin

    return SmallFilesOptions(
        login=SmbLogin(**login),
        count=request.count,
        size=request.size if request.size is not None else 4096,
        outstanding=request.outstanding,
        connections=request.connections,
        **share_target(request),
    )


def _check(request: RunRequest) -> None:
    require_share_target(request)
    small_files_options(request, {"user": request.user or None})  # count, size, in flight


KIND = BenchKind(
    name="small-files",
    order=70,
    title="Small files from this computer",
    explanation="This computer creates, checks, reads, renames, lists and deletes many small "
    "files in a test directory of its own on the share, timing every call: what a build, "
    "a mail store or a photo library feels. The directory is removed at the end.",
    rows=SHARE_TARGET_ROWS | {"count", "size", "outstanding", "connections"},
    engine="sambatune.bench.small_files:SmallFilesBenchmark",
    options=lambda request, context: small_files_options(request, form_login(request)),
    check=_check,
    defaults={"size": "4KiB", "outstanding": 1},
    tips={
        "size": "Bytes in each file, at most 64KiB: small files cost round trips, not bandwidth.",
        "outstanding": "Files worked on at once, each by its own thread, like robocopy /MT:N. 1: one "
        "file after the other, as a plain copy does.",
    },
    # Every run already times thousands of calls, which give its percentiles.
    method=(1, 0),
    result_view="operations",
)
