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
from sambatune.bench.runner import Benchmark, Method
from sambatune.cancellation import CancelToken
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


def _from_arguments(
    args: argparse.Namespace, transport: Any, context: Any, cancel: CancelToken, password: str | None
) -> Benchmark:
    from sambatune.bench.dirscale import DirscaleBenchmark, DirscaleOptions

    options = DirscaleOptions(
        share=share(args, context),
        counts=listed(args.files, parse_count),
        lookups=args.lookups,
        **smb_login(args, password),
    )
    method = Method(runs=args.runs, warmup=args.warmup)
    return DirscaleBenchmark(transport, method, options, context=context, cancel=cancel)


def _from_form(
    request: RunRequest, transport: Any, context: Any, cancel: CancelToken, sessions: Any
) -> Benchmark:
    from sambatune.bench.dirscale import DEFAULT_COUNTS, DirscaleBenchmark, DirscaleOptions

    counts = request.counts or DEFAULT_COUNTS
    options = DirscaleOptions(share=request.share, counts=counts, **form_login(request))
    method = Method(runs=request.runs, warmup=request.warmup)
    return DirscaleBenchmark(transport, method, options, context=context, cancel=cancel)


KIND = BenchKind(
    name="dirscale",
    order=40,
    title="Directory scaling (many files)",
    explanation="Lists and looks up names in directories of growing size over SMB "
    "(the cost of case-insensitive names).",
    rows=frozenset({"share", "user", "password", "counts"}),
    build=_from_form,
    check=require_share,
    cli=CommandLine(
        help="listing and name lookups over SMB in a directory of 1k, 10k, 100k files "
        "(case-sensitivity costs)",
        add_arguments=_arguments,
        build=_from_arguments,
    ),
)
