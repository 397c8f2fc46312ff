"""Raw TCP between the server and this computer, over a connection of its own."""

from __future__ import annotations

import argparse

from sambatune.bench.kinds.arguments import add_stream_options, form_stream_options, stream_options
from sambatune.bench.kinds.kind import BenchKind, CommandLine


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_stream_options(parser)
    parser.add_argument("--sndbuf", metavar="BYTES", help="SO_SNDBUF to set, e.g. 256KiB")
    parser.add_argument("--rcvbuf", metavar="BYTES", help="SO_RCVBUF to set, e.g. 256KiB")
    parser.add_argument(
        "--size", metavar="BYTES", help="move this many bytes per run instead of streaming for --duration"
    )


KIND = BenchKind(
    name="net",
    order=10,
    title="Network (raw TCP)",
    explanation="Raw TCP between the server and this computer over a connection of its own "
    "(not SSH), in the direction chosen.",
    rows=frozenset({"direction", "duration"}),
    engine="sambatune.bench.net:NetBenchmark",
    options=lambda request, context: form_stream_options(request),
    timed=True,
    cli=CommandLine(
        help="TCP throughput between this computer and the server "
        "(its own TCP connection, never through SSH)",
        add_arguments=_arguments,
        options=lambda args, context, password: stream_options(args),
        seconds=5.0,
    ),
)
