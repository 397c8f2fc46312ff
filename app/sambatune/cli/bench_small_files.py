"""``sambatune bench files``: many small files on a share from this computer.

    sambatune bench files --server files1 --share data --json
    sambatune bench files --server files1 --share data --count 10k --size 16KiB --outstanding 8
    sambatune bench files --server files1 --share data --outstanding 8 --connections 4
    sambatune bench files --path /mnt/data            # the system's own SMB client

Create+write, stat, open-read-close, rename, list and delete of N files, K at a time;
per operation the rate and the p50 and p99 latency. The login options are those of
``bench smb-client`` (guest by default; a password from stdin or the keyring).
"""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.cli.bench import add_method_options
from sambatune.cli.bench_smb_client import add_share_target_options
from sambatune.cli.output import add_json_flag


def add_parser(tests: Any) -> None:
    text = (
        "many small files from this computer: create+write, stat, read, rename, list and delete "
        "N files with SambaTune's own SMB client, or through a mounted path"
    )
    # Named "small-files" in results and the app: that name works here too.
    parser: argparse.ArgumentParser = tests.add_parser(
        "files", aliases=["small-files"], help=text, description=text
    )
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
    add_method_options(parser, runs=1, warmup=0, runs_why=": N files already give the percentiles")
    add_json_flag(parser)
    parser.set_defaults(handler=handle, bench_name="files")


def handle(args: argparse.Namespace) -> int:
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.bench.runner import Method
    from sambatune.bench.small_files import SmallFilesBenchmark, SmallFilesOptions, format_operations
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_smb_client import share_target_fields
    from sambatune.cli.bench_tables import BenchProgress, format_result
    from sambatune.cli.output import print_json
    from sambatune.quantities import parse_count, parse_size

    options = SmallFilesOptions(
        **share_target_fields(args),
        count=parse_count(args.count.strip()),
        size=parse_size(args.size),
        outstanding=args.outstanding,
        connections=args.connections,
    )
    cancel = CancelToken()
    bench = SmallFilesBenchmark(None, Method(runs=args.runs, warmup=args.warmup), options, cancel=cancel)
    progress = BenchProgress()
    try:
        result = bench.run(progress.on_event)
    except KeyboardInterrupt:
        cancel.cancel()
        raise
    finally:
        progress.done()
    ResultsDatabase().save(result, note=args.note)
    if args.json:
        print_json(result.to_json())
    else:
        table = "\n".join(format_operations(result.extra.get("operations", [])))
        if args.runs + args.warmup > 1:
            print(format_result(result) + "\n\n" + table)
        else:
            # One run: the per-run tables would repeat the summary (with a warning per
            # operation that one run shows no spread); the N calls give the percentiles.
            print(f"{result.test} test on {result.target}, session {result.session_id} ({result.started_at})")
            spread = f" over {options.connections} connections" if options.connections > 1 else ""
            files = f"{options.count:,} files of {options.size:,} bytes"
            print(f"{files}, {options.outstanding} in flight{spread}\n")
            print(table)
            for note in result.notes:
                print(f"Note: {note}")
    return 0
