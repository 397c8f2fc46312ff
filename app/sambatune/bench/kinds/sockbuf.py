"""Throughput against fixed socket buffer sizes, and against autotuning."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import add_stream_options, form_stream_options, listed, stream_options
from sambatune.bench.kinds.kind import BenchKind, CommandLine, RunRequest
from sambatune.bench.runner import Benchmark, Method
from sambatune.cancellation import CancelToken
from sambatune.quantities import parse_size


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_stream_options(parser)
    parser.add_argument(
        "--sizes", metavar="BYTES[,BYTES...]", help="buffer sizes to try (default 4KiB,8KiB,...,4MiB)"
    )
    parser.add_argument(
        "--no-autotuned", action="store_true", help="leave out the run with no buffer size set"
    )


def _from_arguments(
    args: argparse.Namespace, transport: Any, context: Any, cancel: CancelToken, password: str | None
) -> Benchmark:
    from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufBenchmark, SockbufOptions

    options = SockbufOptions(
        sizes=listed(args.sizes, parse_size) if args.sizes else DEFAULT_SIZES,
        include_autotuned=not args.no_autotuned,
        net=stream_options(args),
    )
    method = Method(runs=args.runs, warmup=args.warmup)
    return SockbufBenchmark(transport, method, options, context=context, cancel=cancel)


def _from_form(
    request: RunRequest, transport: Any, context: Any, cancel: CancelToken, sessions: Any
) -> Benchmark:
    from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufBenchmark, SockbufOptions

    options = SockbufOptions(sizes=request.sizes or DEFAULT_SIZES, net=form_stream_options(request))
    method = Method(runs=request.runs, warmup=request.warmup)
    return SockbufBenchmark(transport, method, options, context=context, cancel=cancel)


KIND = BenchKind(
    name="sockbuf",
    order=50,
    title="Socket buffer sweep",
    explanation="Throughput with fixed SO_SNDBUF/SO_RCVBUF sizes against autotuning.",
    rows=frozenset({"duration", "sizes"}),
    build=_from_form,
    defaults={"duration": 2.0},
    result_view="sweep",
    cli=CommandLine(
        help="throughput against SO_SNDBUF/SO_RCVBUF sizes, 4 KiB to 4 MiB and autotuned "
        "(the book's Figure B.1)",
        add_arguments=_arguments,
        build=_from_arguments,
        seconds=2.0,
        runs=3,
    ),
)
