"""``sambatune bench net|disk|smb|dirscale|sockbuf``: measure a server by the method.

    sambatune bench net --host files1 --direction download --duration 10 --runs 5 --json
    sambatune bench disk --host files1 --share data --size 1GiB --block-size 1MiB
    sambatune bench smb --host files1 --share data --smb-user alice --smb-password-stdin
    sambatune bench dirscale --host files1 --share data --files 1000,10000,100000
    sambatune bench sockbuf --host files1 --duration 2 --runs 3
    sambatune bench smb-client --server files1 --share data --json   (from this computer)
    sambatune bench files --server files1 --share data --count 2000 --json   (small files, from here)

Every session is stored in the results database (``sambatune results ...``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag


def register(subparsers: Any) -> None:
    from sambatune.bench.kinds import KINDS

    parser = subparsers.add_parser(
        "bench",
        help="measure a server: network, disk, SMB, directories, socket buffers, SMB from here",
        description="Run a benchmark by the classic method: warm-up runs that are not counted, "
        "then counted runs, each recorded, with mean and deviation. Every session is saved "
        "with the smb.conf it ran with (see 'sambatune results').",
    )
    tests = parser.add_subparsers(dest="bench_test", metavar="TEST", required=True)
    # The kinds that run on the server over SSH, each with its own arguments.
    for kind in KINDS.values():
        if kind.cli is not None:
            verb = _test_parser(
                tests, kind.name, kind.cli.help, default_seconds=kind.cli.seconds, default_runs=kind.cli.runs
            )
            kind.cli.add_arguments(verb)

    from sambatune.cli.bench_smb_client import add_parser as add_smb_client

    add_smb_client(tests)

    from sambatune.cli.bench_small_files import add_parser as add_small_files

    add_small_files(tests)


def _test_parser(
    tests: Any, name: str, help_text: str, *, default_seconds: float | None = None, default_runs: int = 5
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = tests.add_parser(name, help=help_text, description=help_text)
    add_connection_options(parser)
    method = add_method_options(parser, runs=default_runs)
    if default_seconds is not None:
        method.add_argument(
            "--duration",
            type=float,
            default=default_seconds,
            metavar="SECONDS",
            help=f"seconds per run (default {default_seconds:g})",
        )
    method.add_argument("--config-path", help="the smb.conf to record (default: detected)")
    method.add_argument(
        "--link-speed",
        metavar="RATE",
        help="the link to set results against, e.g. 1gbit (default: the NIC's speed from the survey)",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle, bench_name=name)
    return parser


def add_method_options(
    parser: argparse.ArgumentParser, *, runs: int = 5, warmup: int = 1, runs_why: str = ""
) -> Any:
    """The method every benchmark verb shares: counted runs, warm-up runs, a note."""
    method = parser.add_argument_group("method")
    method.add_argument("--runs", type=int, default=runs, help=f"counted runs (default {runs}{runs_why})")
    method.add_argument(
        "--warmup", type=int, default=warmup, help=f"warm-up runs first, not counted (default {warmup})"
    )
    method.add_argument(
        "--note", default="", help="a note stored with the session, e.g. 'before: socket options removed'"
    )
    return method


# --------------------------------------------------------------------------------------


def handle(args: argparse.Namespace) -> int:
    from sambatune.bench.context import collect_context
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_tables import BenchProgress, format_result
    from sambatune.cli.connect import connect_from_args
    from sambatune.cli.output import print_json
    from sambatune.errors import PortUnreachable

    link_speed = _bandwidth(args.link_speed) if args.link_speed else None
    progress = BenchProgress()
    cancel = CancelToken()
    progress.message("connecting...")
    transport = connect_from_args(args, cancel)
    try:
        smb_password = _smb_password(args)
        progress.message("surveying the server...")
        context = collect_context(
            transport, config_path=args.config_path, link_speed_bits=link_speed, cancel=cancel
        )
        from sambatune.bench.kinds import KINDS

        benchmark = KINDS[args.bench_name].from_arguments(args, transport, context, cancel, smb_password)
        try:
            result = benchmark.run(progress.on_event)
        except PortUnreachable as error:
            error.details += "\nOn the command line: add --through-ssh."
            raise
        except KeyboardInterrupt:
            cancel.cancel()
            raise
        ResultsDatabase().save(result, context, note=args.note)
    finally:
        progress.done()
        transport.close()
    if args.json:
        print_json(result.to_json())
    else:
        print(format_result(result))
    return 0


def _smb_password(args: argparse.Namespace) -> str | None:
    if not getattr(args, "smb_password_stdin", False):
        return None
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def _bandwidth(text: str) -> int:
    from sambatune.quantities import parse_bandwidth

    return int(parse_bandwidth(text))
