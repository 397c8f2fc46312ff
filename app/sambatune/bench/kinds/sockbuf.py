"""Throughput against fixed socket buffer sizes, and against autotuning."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import add_stream_options, form_stream_options, listed, stream_options
from sambatune.bench.kinds.kind import BenchKind, CommandLine, RunRequest
from sambatune.quantities import parse_size


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_stream_options(parser)
    parser.add_argument(
        "--sizes", metavar="BYTES[,BYTES...]", help="buffer sizes to try (default 4KiB,8KiB,...,4MiB)"
    )
    parser.add_argument(
        "--no-autotuned", action="store_true", help="leave out the run with no buffer size set"
    )


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> Any:
    from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufOptions

    return SockbufOptions(
        sizes=listed(args.sizes, parse_size) if args.sizes else DEFAULT_SIZES,
        include_autotuned=not args.no_autotuned,
        net=stream_options(args),
    )


def _from_form(request: RunRequest, context: Any) -> Any:
    from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufOptions

    return SockbufOptions(sizes=request.sizes or DEFAULT_SIZES, net=form_stream_options(request))


KIND = BenchKind(
    name="sockbuf",
    order=50,
    title="Socket buffer sweep",
    explanation="Throughput with fixed SO_SNDBUF/SO_RCVBUF sizes against autotuning.",
    rows=frozenset({"duration", "sizes"}),
    engine="sambatune.bench.sockbuf:SockbufBenchmark",
    options=_from_form,
    defaults={"duration": 2.0},
    result_view="sweep",
    cli=CommandLine(
        help="throughput against SO_SNDBUF/SO_RCVBUF sizes, 4 KiB to 4 MiB and autotuned "
        "(the book's Figure B.1)",
        add_arguments=_arguments,
        options=_from_arguments,
        seconds=2.0,
        runs=3,
    ),
)
