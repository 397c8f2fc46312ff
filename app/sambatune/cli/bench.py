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

TESTS = ("net", "disk", "smb", "dirscale", "sockbuf")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure a server: network, disk, SMB, directories, socket buffers, SMB from here",
        description="Run a benchmark by the classic method: warm-up runs that are not counted, "
        "then counted runs, each recorded, with mean and deviation. Every session is saved "
        "with the smb.conf it ran with (see 'sambatune results').",
    )
    tests = parser.add_subparsers(dest="bench_test", metavar="TEST", required=True)

    net = _test_parser(
        tests,
        "net",
        "TCP throughput between this computer and the server (its own TCP connection, never through SSH)",
        default_seconds=5.0,
    )
    _add_stream_options(net)
    net.add_argument("--sndbuf", metavar="BYTES", help="SO_SNDBUF to set, e.g. 256KiB")
    net.add_argument("--rcvbuf", metavar="BYTES", help="SO_RCVBUF to set, e.g. 256KiB")
    net.add_argument(
        "--size", metavar="BYTES", help="move this many bytes per run instead of streaming for --duration"
    )

    disk = _test_parser(
        tests,
        "disk",
        "sequential write and read of a test file on the server, and the small-file metadata rate",
    )
    _add_place_options(disk)
    disk.add_argument(
        "--size",
        metavar="BYTES",
        default="1GiB",
        help="test file size (default 1GiB; use more than the server's RAM to be sure)",
    )
    disk.add_argument(
        "--block-size", metavar="BYTES", default="1MiB", help="bytes per write/read call (default 1MiB)"
    )
    disk.add_argument(
        "--cache",
        choices=("bypass", "buffered"),
        default="bypass",
        help="bypass: O_DIRECT, or drop the file's cached pages (default); buffered: through the page cache",
    )
    disk.add_argument(
        "--drop-caches",
        action="store_true",
        help="as root, where O_DIRECT is refused: empty the whole page cache "
        "before each read (affects everything on the server)",
    )
    disk.add_argument(
        "--operations", default="write,read,metadata", help="any of write,read,metadata (default all)"
    )
    disk.add_argument(
        "--files", type=int, default=1000, metavar="N", help="files per metadata run (default 1000)"
    )

    smb = _test_parser(
        tests,
        "smb",
        "smbclient put and get through a share on the server's "
        "loopback, against its raw TCP and disk ceilings",
    )
    _add_place_options(smb)
    _add_smb_options(smb)
    smb.add_argument(
        "--size",
        metavar="BYTES",
        default="auto",
        help="test file size (default auto: a 4MiB probe copy first, then a size "
        "that keeps all SMB runs near a minute, at most 512MiB)",
    )
    smb.add_argument("--operations", default="put,get", help="put, get or both (default)")
    smb.add_argument(
        "--no-ceilings", action="store_true", help="skip the raw TCP and disk measurements the ratios need"
    )

    dirscale = _test_parser(
        tests,
        "dirscale",
        "listing and name lookups over SMB in a directory of 1k, 10k, 100k files (case-sensitivity costs)",
    )
    _add_place_options(dirscale)
    _add_smb_options(dirscale)
    dirscale.add_argument(
        "--files",
        default="1000,10000,100000",
        metavar="N[,N...]",
        help="file counts to reach (default 1000,10000,100000)",
    )
    dirscale.add_argument("--lookups", type=int, default=100, help="names looked up per run (default 100)")

    sockbuf = _test_parser(
        tests,
        "sockbuf",
        "throughput against SO_SNDBUF/SO_RCVBUF sizes, 4 KiB to 4 MiB and autotuned (the book's Figure B.1)",
        default_seconds=2.0,
        default_runs=3,
    )
    _add_stream_options(sockbuf)
    sockbuf.add_argument(
        "--sizes", metavar="BYTES[,BYTES...]", help="buffer sizes to try (default 4KiB,8KiB,...,4MiB)"
    )
    sockbuf.add_argument(
        "--no-autotuned", action="store_true", help="leave out the run with no buffer size set"
    )

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


def _add_stream_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("stream")
    group.add_argument(
        "--direction",
        choices=("download", "upload"),
        default="download",
        help="download = server to this computer (default), upload = the reverse",
    )
    group.add_argument("--nodelay", action="store_true", help="set TCP_NODELAY on both ends")
    group.add_argument(
        "--buffers-on",
        choices=("server", "both"),
        default="server",
        help="set buffer sizes on the server's socket only, as smb.conf would (default), or on both ends",
    )
    group.add_argument(
        "--through-ssh",
        action="store_true",
        help="stream through an SSH port forward when the direct connection is "
        "firewalled (measures SSH, not the network; the result says so)",
    )
    group.add_argument(
        "--data-address",
        metavar="ADDRESS",
        help="connect the stream to this server address (default: the one SSH reached)",
    )


def _add_place_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("where")
    group.add_argument("--share", help="a share of the server (its path is taken from smb.conf)")
    group.add_argument("--directory", help="a directory on the server (default: the share's path)")


def _add_smb_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("SMB")
    group.add_argument("--smb-user", help="connect to the share as this user (default: guest)")
    group.add_argument(
        "--smb-password-stdin",
        action="store_true",
        help="read the SMB password from stdin (the line after any SSH/sudo password)",
    )
    group.add_argument("--smb-domain", help="the user's domain or workgroup")
    group.add_argument("--smb-port", type=int, help="smbd's port (default: from 'smb ports')")
    group.add_argument("--protocol", help="highest SMB protocol for smbclient, e.g. SMB3")


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
        benchmark = build_benchmark(args, transport, context, cancel, smb_password)
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


def _size(text: str) -> int:
    from sambatune.quantities import parse_size

    return parse_size(text)


def _bandwidth(text: str) -> int:
    from sambatune.quantities import parse_bandwidth

    return int(parse_bandwidth(text))


def _list(text: str, parse: Any) -> tuple[Any, ...]:
    return tuple(parse(part.strip()) for part in text.split(",") if part.strip())


def _place(args: argparse.Namespace, context: Any, what: str) -> str:
    from sambatune.errors import InvalidInput

    if args.directory:
        return str(args.directory)
    if args.share:
        return str(context.share_path(args.share))
    raise InvalidInput(f"Where should the {what} run? Give --share NAME or --directory PATH.")


def _share(args: argparse.Namespace, context: Any) -> str:
    from sambatune.errors import InvalidInput

    if args.share:
        return str(args.share)
    shares = [s for s in (context.survey.shares if context.survey else []) if not s.get("printable")]
    if len(shares) == 1:
        return str(shares[0]["name"])
    names = ", ".join(str(s["name"]) for s in shares) or "none found"
    raise InvalidInput("Which share? Give --share NAME.", details=f"Shares: {names}.")


def build_benchmark(
    args: argparse.Namespace, transport: Any, context: Any, cancel: Any, smb_password: str | None
) -> Any:
    from sambatune.bench.runner import Method

    method = Method(runs=args.runs, warmup=args.warmup)
    common = {"context": context, "cancel": cancel}
    name = args.bench_name
    if name in ("net", "sockbuf"):
        from sambatune.bench.net import NetOptions

        net = NetOptions(
            direction=args.direction,
            seconds=args.duration,
            size=_size(args.size) if getattr(args, "size", None) else None,
            sndbuf=_size(args.sndbuf) if getattr(args, "sndbuf", None) else None,
            rcvbuf=_size(args.rcvbuf) if getattr(args, "rcvbuf", None) else None,
            nodelay=args.nodelay,
            buffers_on=args.buffers_on,
            through_ssh=args.through_ssh,
            data_address=args.data_address,
        )
        if name == "net":
            from sambatune.bench.net import NetBenchmark

            return NetBenchmark(transport, method, net, **common)
        from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufBenchmark, SockbufOptions

        sizes = _list(args.sizes, _size) if args.sizes else DEFAULT_SIZES
        return SockbufBenchmark(
            transport,
            method,
            SockbufOptions(sizes=sizes, include_autotuned=not args.no_autotuned, net=net),
            **common,
        )
    if name == "disk":
        from sambatune.bench.disk import DiskBenchmark, DiskOptions

        disk = DiskOptions(
            directory=_place(args, context, "disk test"),
            size=_size(args.size),
            block_size=_size(args.block_size),
            cache=args.cache,
            drop_caches=args.drop_caches,
            operations=_list(args.operations, str),
            metadata_files=args.files,
        )
        return DiskBenchmark(transport, method, disk, **common)
    smb_login = {
        "user": args.smb_user,
        "password": smb_password,
        "domain": args.smb_domain,
        "port": args.smb_port,
        "directory": args.directory,
        "protocol": args.protocol,
    }
    if name == "smb":
        from sambatune.bench.smb import SmbBenchmark, SmbOptions

        smb = SmbOptions(
            share=_share(args, context),
            size=None if args.size.strip().lower() == "auto" else _size(args.size),
            operations=_list(args.operations, str),
            ceilings=not args.no_ceilings,
            **smb_login,
        )
        return SmbBenchmark(transport, method, smb, **common)
    from sambatune.bench.dirscale import DirscaleBenchmark, DirscaleOptions
    from sambatune.quantities import parse_count

    dirscale = DirscaleOptions(
        share=_share(args, context),
        counts=_list(args.files, parse_count),
        lookups=args.lookups,
        **smb_login,
    )
    return DirscaleBenchmark(transport, method, dirscale, **common)
