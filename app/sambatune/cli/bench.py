"""``sambatune bench net|disk|smb|dirscale|sockbuf``: measure a server by the method.

    sambatune bench net --host files1 --direction download --duration 10 --runs 5 --json
    sambatune bench disk --host files1 --share data --size 1GiB --block-size 1MiB
    sambatune bench smb --host files1 --share data --smb-user alice --smb-password-stdin
    sambatune bench dirscale --host files1 --share data --files 1000,10000,100000
    sambatune bench sockbuf --host files1 --duration 2 --runs 3
    sambatune bench smb-client --server files1 --share data --json   (from this computer)
    sambatune bench files --server files1 --share data --count 2000 --json   (small files, from here)

Every session is stored in the results database (``sambatune results ...``). A kind's
own arguments are in its module under ``bench/kinds/``; this module adds what verbs of the
same reach share and runs them.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag

if TYPE_CHECKING:
    from sambatune.bench.kinds.kind import BenchKind
    from sambatune.bench.records import BenchResult
    from sambatune.bench.smb_security import ServerSessions
    from sambatune.cancellation import CancelToken


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
    for kind in KINDS.values():
        _test_parser(tests, kind)


def _test_parser(tests: Any, kind: BenchKind) -> None:
    """The kind's verb: its own arguments, and those of every verb that reaches the server
    the same way (SSH, or SMB from this computer)."""
    cli = kind.cli
    names = [cli.verb, kind.name] if cli.verb else [kind.name]
    parser: argparse.ArgumentParser = tests.add_parser(
        names[0], aliases=names[1:], help=cli.help, description=cli.help
    )
    if cli.over == "smb":
        cli.add_arguments(parser)
        if kind.compares_sessions:
            _add_server_view_options(parser)
    else:
        add_connection_options(parser)
    method = add_method_options(parser, runs=cli.runs, warmup=cli.warmup, runs_why=cli.runs_why)
    if cli.over == "ssh":
        if cli.seconds is not None:
            method.add_argument(
                "--duration",
                type=float,
                default=cli.seconds,
                metavar="SECONDS",
                help=f"seconds per run (default {cli.seconds:g})",
            )
        method.add_argument("--config-path", help="the smb.conf to record (default: detected)")
        method.add_argument(
            "--link-speed",
            metavar="RATE",
            help="the link to set results against, e.g. 1gbit (default: the NIC's speed from the survey)",
        )
    add_json_flag(parser)
    if cli.over == "ssh":
        cli.add_arguments(parser)
    handler = handle_from_here if cli.over == "smb" else handle
    parser.set_defaults(handler=handler, bench_name=kind.name)


def _add_server_view_options(parser: argparse.ArgumentParser) -> None:
    server = parser.add_argument_group(
        "the server's view (optional): name what each session negotiated, from smbstatus over SSH"
    )
    server.add_argument("--ssh", metavar="DEST", help="the server over SSH: alias or user@host[:port]")
    server.add_argument("--ssh-identity", metavar="FILE", help="private key file (like ssh -i)")
    server.add_argument("--ssh-config", metavar="FILE", type=Path, help="like ssh -F")
    server.add_argument(
        "--ssh-known-hosts", metavar="FILE", type=Path, help="known_hosts file for the host key"
    )
    server.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and remember a host key never seen before (a changed key is always refused)",
    )
    server.add_argument(
        "--smb-conf",
        metavar="PATH",
        help="the smb.conf of the smbd serving the share (default: the one the survey finds)",
    )


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
    """A kind that runs on the server, over SSH."""
    from sambatune.bench.context import collect_context
    from sambatune.bench.kinds import KINDS
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_tables import BenchProgress
    from sambatune.cli.connect import connect_from_args
    from sambatune.errors import PortUnreachable

    kind = KINDS[args.bench_name]
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
        benchmark = kind.from_arguments(args, transport, context, cancel, smb_password)
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
    _print_result(kind, result, args.json)
    return 0


def handle_from_here(args: argparse.Namespace) -> int:
    """A kind where this computer reaches a share over SMB: no SSH, unless ``--ssh`` asks
    for the server's session list."""
    from sambatune.bench.kinds import KINDS
    from sambatune.bench.kinds.arguments import SECRET_KIND, arguments_secret_target
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.bench.runner import Method
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_tables import BenchProgress
    from sambatune.remote.secrets import save_secret

    kind = KINDS[args.bench_name]
    password = _share_password(args)
    # Checked before anything connects: a wrong argument costs no SSH login.
    options = kind.cli.options(args, None, password)
    cancel = CancelToken()
    progress = BenchProgress()
    with ExitStack() as stack:
        extra = {}
        if kind.compares_sessions and args.ssh:
            extra["server_sessions"] = _server_sessions(args, stack, cancel)
        method = Method(runs=args.runs, warmup=args.warmup)
        benchmark = kind.build(None, method, options, None, cancel, **extra)
        try:
            result = benchmark.run(progress.on_event)
        except KeyboardInterrupt:
            cancel.cancel()
            raise
        finally:
            progress.done()
    ResultsDatabase().save(result, note=args.note)
    if args.remember_password and args.user and password is not None:
        save_secret(SECRET_KIND, arguments_secret_target(args), password)
    _print_result(kind, result, args.json)
    return 0


def _print_result(kind: BenchKind, result: BenchResult, as_json: bool) -> None:
    from sambatune.cli.bench_tables import format_operations_result, format_result
    from sambatune.cli.output import print_json

    if as_json:
        print_json(result.to_json())
    elif kind.result_view == "operations":
        print(format_operations_result(result))
    else:
        print(format_result(result))


def _share_password(args: argparse.Namespace) -> str | None:
    """The SMB user's password: the first line of stdin, else the keyring's; never an argument."""
    from sambatune.bench.kinds.arguments import SECRET_KIND, arguments_secret_target
    from sambatune.errors import SecretRequired
    from sambatune.remote.secrets import load_secret

    if not args.user:
        return None
    if args.password_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    stored = load_secret(SECRET_KIND, arguments_secret_target(args))
    if stored is None:
        raise SecretRequired(
            f"The SMB password of {args.user} is needed.",
            details="Pipe it in with --password-stdin (it never goes on the command line).",
        )
    return stored


def _server_sessions(args: argparse.Namespace, stack: ExitStack, cancel: CancelToken) -> ServerSessions:
    """Read the session list of the smbd serving the share, over SSH (root by sudo when it
    needs no password: the test's SMB user is rarely the SSH account)."""
    from sambatune.bench.smb_security import server_sessions
    from sambatune.cli.connect import TerminalPrompts
    from sambatune.errors import InvalidInput
    from sambatune.remote.config_location import several_smbd
    from sambatune.remote.connection import ConnectionOptions, open_target
    from sambatune.remote.survey import run_survey

    options = ConnectionOptions(
        host=args.ssh,
        identity_file=args.ssh_identity,
        known_hosts=args.ssh_known_hosts,
        ssh_config=args.ssh_config,
    )
    transport = open_target(options, TerminalPrompts(args.accept_new_host_key, None, None), cancel=cancel)
    stack.callback(transport.close)
    config_path = args.smb_conf
    if not config_path:
        survey = run_survey(transport, cancel=cancel, audit_clients=False)
        config_path = survey.config_path
        if survey.ambiguous:
            raise several_smbd(transport.label, survey.config_candidates, "serves the share with --smb-conf")
    if not config_path:
        raise InvalidInput(
            f"Which smbd serves the share on {transport.label}? The survey could not tell: "
            "name its smb.conf with --smb-conf."
        )
    return server_sessions(transport, config_path)


def _smb_password(args: argparse.Namespace) -> str | None:
    if not getattr(args, "smb_password_stdin", False):
        return None
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def _bandwidth(text: str) -> int:
    from sambatune.quantities import parse_bandwidth

    return int(parse_bandwidth(text))
