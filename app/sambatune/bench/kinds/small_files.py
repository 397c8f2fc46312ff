"""This computer creates, checks, reads, renames, lists and deletes many small files on
a share, timing every call: per operation the rate and the p50 and p99 latency. Its verb,
``sambatune bench files``, needs no SSH.

    sambatune bench files --server files1 --share data --json
    sambatune bench files --server files1 --share data --count 10k --size 16KiB --outstanding 8
    sambatune bench files --server files1 --share data --outstanding 8 --connections 4
    sambatune bench files --path /mnt/data            # the system's own SMB client
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from sambatune.bench.kinds.arguments import (
    add_share_target_options,
    form_login,
    require_share_target,
    share_target,
    share_target_arguments,
)
from sambatune.bench.kinds.kind import SHARE_TARGET_ROWS, BenchKind, CommandLine, RunRequest
from sambatune.quantities import parse_count, parse_size

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


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_share_target_options(parser, "the share to make the test directory in")
    test = parser.add_argument_group("test")
    test.add_argument(
        "--count", default="2000", metavar="N", help="files (default 2000, at most 100k; e.g. 500, 10k)"
    )
    test.add_argument(
        "--size", default="4KiB", metavar="BYTES", help="bytes per file (default 4KiB, at most 64KiB)"
    )
    test.add_argument(
        "--outstanding",
        type=int,
        default=1,
        metavar="K",
        help="operations in flight at once, like robocopy /MT:K (default 1: one file at a "
        "time, as smbclient's mput does)",
    )
    test.add_argument(
        "--connections",
        type=int,
        default=1,
        metavar="N",
        help="SMB connections to spread the K operations over, each its own session and "
        "smbd process on the server, as N clients at once (default 1, like one client's "
        "robocopy /MT; at most K)",
    )


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> SmallFilesOptions:
    from sambatune.bench.small_files import SmallFilesOptions

    return SmallFilesOptions(
        **share_target_arguments(args, password),
        count=parse_count(args.count.strip()),
        size=parse_size(args.size),
        outstanding=args.outstanding,
        connections=args.connections,
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
    cli=CommandLine(
        help="many small files from this computer: create+write, stat, read, rename, list and "
        "delete N files with SambaTune's own SMB client, or through a mounted path",
        add_arguments=_arguments,
        options=_from_arguments,
        over="smb",
        verb="files",
        runs=1,
        warmup=0,
        runs_why=": N files already give the percentiles",
    ),
)
