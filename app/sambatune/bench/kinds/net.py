"""Raw TCP between the server and this computer, over a connection of its own."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import add_stream_options, form_stream_options, stream_options
from sambatune.bench.kinds.kind import BenchKind, CommandLine, RunRequest
from sambatune.bench.runner import Benchmark, Method
from sambatune.cancellation import CancelToken


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_stream_options(parser)
    parser.add_argument("--sndbuf", metavar="BYTES", help="SO_SNDBUF to set, e.g. 256KiB")
    parser.add_argument("--rcvbuf", metavar="BYTES", help="SO_RCVBUF to set, e.g. 256KiB")
    parser.add_argument(
        "--size", metavar="BYTES", help="move this many bytes per run instead of streaming for --duration"
    )


def _from_arguments(
    args: argparse.Namespace, transport: Any, context: Any, cancel: CancelToken, password: str | None
) -> Benchmark:
    from sambatune.bench.net import NetBenchmark

    method = Method(runs=args.runs, warmup=args.warmup)
    return NetBenchmark(transport, method, stream_options(args), context=context, cancel=cancel)


def _from_form(
    request: RunRequest, transport: Any, context: Any, cancel: CancelToken, sessions: Any
) -> Benchmark:
    from sambatune.bench.net import NetBenchmark

    method = Method(runs=request.runs, warmup=request.warmup)
    return NetBenchmark(transport, method, form_stream_options(request), context=context, cancel=cancel)


KIND = BenchKind(
    name="net",
    order=10,
    title="Network (raw TCP)",
    explanation="Raw TCP between the server and this computer over a connection of its own "
    "(not SSH), in the direction chosen.",
    rows=frozenset({"direction", "duration"}),
    build=_from_form,
    timed=True,
    cli=CommandLine(
        help="TCP throughput between this computer and the server "
        "(its own TCP connection, never through SSH)",
        add_arguments=_arguments,
        build=_from_arguments,
        seconds=5.0,
    ),
)
