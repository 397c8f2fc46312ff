"""Sequential write and read of a file on the server's disk, and its small-file rate."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import add_place_options, listed, place
from sambatune.bench.kinds.kind import BenchKind, CommandLine, RunRequest
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_size


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_place_options(parser)
    parser.add_argument(
        "--size",
        metavar="BYTES",
        default="1GiB",
        help="test file size (default 1GiB; use more than the server's RAM to be sure)",
    )
    parser.add_argument(
        "--block-size", metavar="BYTES", default="1MiB", help="bytes per write/read call (default 1MiB)"
    )
    parser.add_argument(
        "--cache",
        choices=("bypass", "buffered"),
        default="bypass",
        help="bypass: O_DIRECT, or drop the file's cached pages (default); buffered: through the page cache",
    )
    parser.add_argument(
        "--drop-caches",
        action="store_true",
        help="as root, where O_DIRECT is refused: empty the whole page cache "
        "before each read (affects everything on the server)",
    )
    parser.add_argument(
        "--operations", default="write,read,metadata", help="any of write,read,metadata (default all)"
    )
    parser.add_argument(
        "--files", type=int, default=1000, metavar="N", help="files per metadata run (default 1000)"
    )


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> Any:
    from sambatune.bench.disk import DiskOptions

    return DiskOptions(
        directory=place(args, context, "disk test"),
        size=parse_size(args.size),
        block_size=parse_size(args.block_size),
        cache=args.cache,
        drop_caches=args.drop_caches,
        operations=listed(args.operations, str),
        metadata_files=args.files,
    )


def _from_form(request: RunRequest, context: Any) -> Any:
    from sambatune.bench.disk import DiskOptions

    return DiskOptions(
        directory=request.directory or context.share_path(request.share),
        size=request.size or 256 << 20,
        block_size=request.block,
        sample_interval=request.sample_interval * 2,
    )


def _check(request: RunRequest) -> None:
    if not request.share and not request.directory:
        raise InvalidInput("Where should the disk test run? Choose a share or give a directory.")


KIND = BenchKind(
    name="disk",
    order=20,
    title="Disk on the server",
    explanation="Sequential write and read of a test file on the server, bypassing its cache, "
    "and the small-file rate.",
    rows=frozenset({"share", "directory", "size", "block"}),
    engine="sambatune.bench.disk:DiskBenchmark",
    options=_from_form,
    check=_check,
    defaults={"size": "256MiB"},
    cli=CommandLine(
        help="sequential write and read of a test file on the server, and the small-file metadata rate",
        add_arguments=_arguments,
        options=_from_arguments,
    ),
)
