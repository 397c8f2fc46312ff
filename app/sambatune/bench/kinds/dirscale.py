"""Listing and name lookups in directories of growing size, over SMB on the server."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import (
    add_place_options,
    add_smb_options,
    form_login,
    listed,
    require_share,
    share,
    smb_login,
)
from sambatune.bench.kinds.kind import BenchKind, CommandLine, RunRequest
from sambatune.quantities import parse_count


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_place_options(parser)
    add_smb_options(parser)
    parser.add_argument(
        "--files",
        default="1000,10000,100000",
        metavar="N[,N...]",
        help="file counts to reach (default 1000,10000,100000)",
    )
    parser.add_argument("--lookups", type=int, default=100, help="names looked up per run (default 100)")


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> Any:
    from sambatune.bench.dirscale import DirscaleOptions

    return DirscaleOptions(
        share=share(args, context),
        counts=listed(args.files, parse_count),
        lookups=args.lookups,
        **smb_login(args, password),
    )


def _from_form(request: RunRequest, context: Any) -> Any:
    from sambatune.bench.dirscale import DEFAULT_COUNTS, DirscaleOptions

    counts = request.counts or DEFAULT_COUNTS
    return DirscaleOptions(share=request.share, counts=counts, **form_login(request))


KIND = BenchKind(
    name="dirscale",
    order=40,
    title="Directory scaling (many files)",
    explanation="Lists and looks up names in directories of growing size over SMB "
    "(the cost of case-insensitive names).",
    rows=frozenset({"share", "user", "password", "counts"}),
    engine="sambatune.bench.dirscale:DirscaleBenchmark",
    options=_from_form,
    check=require_share,
    cli=CommandLine(
        help="listing and name lookups over SMB in a directory of 1k, 10k, 100k files "
        "(case-sensitivity costs)",
        add_arguments=_arguments,
        options=_from_arguments,
    ),
)
