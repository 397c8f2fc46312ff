"""``sambatune bench smb-client``: write and read a test file on a share from this computer.

    sambatune bench smb-client --server files1 --share data --json
    sambatune bench smb-client --server files1 --share data --user alice --password-stdin
    sambatune bench smb-client --path /mnt/data            # the system's own SMB client

No SSH is involved: this computer talks SMB to the server, as any client does. The
password is read from stdin, or from the system keyring where an earlier
``--remember-password`` put it; never from the command line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sambatune.cli.output import add_json_flag

SECRET_KIND = "smb"


def add_share_target_options(parser: argparse.ArgumentParser, share_help: str) -> Any:
    """Where a test from this computer runs and how it logs in (bench.smb_client.ShareTarget);
    returns the login group for the options a test adds to it."""
    where = parser.add_argument_group("where")
    where.add_argument("--server", help="the SMB server's name or address")
    where.add_argument("--share", help=share_help)
    where.add_argument("--port", type=int, default=445, help="SMB port (default 445)")
    where.add_argument(
        "--path",
        help="instead of --server/--share: a directory on the share as "
        "this computer mounted it (mount point, or UNC path on Windows)",
    )
    login = parser.add_argument_group("login (default: guest)")
    login.add_argument("--user", help="the SMB user")
    login.add_argument("--domain", help="the user's domain or workgroup")
    login.add_argument(
        "--password-stdin", action="store_true", help="read the password from the first line of stdin"
    )
    return login


def add_parser(tests: Any) -> None:
    text = (
        "SMB from this computer: write and read a test file on a share with SambaTune's "
        "own SMB client (several requests in flight), or through a mounted path"
    )
    parser: argparse.ArgumentParser = tests.add_parser("smb-client", help=text, description=text)
    login = add_share_target_options(parser, "the share to write the test file to")
    login.add_argument(
        "--remember-password",
        action="store_true",
        help="after a successful run, keep the password in the system keyring",
    )
    test = parser.add_argument_group("test")
    test.add_argument(
        "--size",
        default="auto",
        metavar="BYTES",
        help="test file size (default auto: a 4MiB probe write and read first, then "
        "a size that keeps all runs near a minute, at most 256MiB)",
    )
    test.add_argument(
        "--block-size",
        default="4MiB",
        metavar="BYTES",
        help="bytes per request (default 4MiB, capped at what the server allows)",
    )
    test.add_argument(
        "--outstanding",
        type=int,
        default=4,
        help="requests in flight at once (default 4; SambaTune's client only)",
    )
    test.add_argument("--operations", default="write,read", help="write, read or both (default)")
    method = parser.add_argument_group("method")
    method.add_argument("--runs", type=int, default=5, help="counted runs (default 5)")
    method.add_argument("--warmup", type=int, default=1, help="warm-up runs first (default 1)")
    method.add_argument("--note", default="", help="a note stored with the session")
    add_json_flag(parser)
    parser.set_defaults(handler=handle, bench_name="smb-client")


def secret_target(args: argparse.Namespace) -> str:
    return f"{args.user}@{args.server}:{args.port}/{args.share}"


def _password(args: argparse.Namespace) -> str | None:
    from sambatune.errors import SecretRequired
    from sambatune.remote.secrets import load_secret

    if not args.user:
        return None
    if args.password_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    stored = load_secret(SECRET_KIND, secret_target(args))
    if stored is None:
        raise SecretRequired(
            f"The SMB password of {args.user} is needed.",
            details="Pipe it in with --password-stdin (it never goes on the command line).",
        )
    return stored


def share_target_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The ShareTarget part of a test's options, from add_share_target_options' flags
    (the password from stdin, else the keyring's)."""
    from sambatune.bench.smb_wire import SmbLogin

    return {
        "server": args.server,
        "share": args.share,
        "port": args.port,
        "path": args.path,
        "login": SmbLogin(user=args.user, password=_password(args), domain=args.domain),
    }


def handle(args: argparse.Namespace) -> int:
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.bench.runner import Method
    from sambatune.bench.smb_client import SmbClientBenchmark, SmbClientOptions
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_tables import BenchProgress, format_result
    from sambatune.cli.output import print_json
    from sambatune.client.quantities import parse_size
    from sambatune.remote.secrets import save_secret

    target = share_target_fields(args)
    options = SmbClientOptions(
        **target,
        size=None if args.size.strip().lower() == "auto" else parse_size(args.size),
        block_size=parse_size(args.block_size),
        outstanding=args.outstanding,
        operations=tuple(o.strip() for o in args.operations.split(",") if o.strip()),
    )
    cancel = CancelToken()
    bench = SmbClientBenchmark(None, Method(runs=args.runs, warmup=args.warmup), options, cancel=cancel)
    progress = BenchProgress()
    try:
        result = bench.run(progress.on_event)
    except KeyboardInterrupt:
        cancel.cancel()
        raise
    finally:
        progress.done()
    ResultsDatabase().save(result, note=args.note)
    if args.remember_password and args.user and target["login"].password is not None:
        save_secret(SECRET_KIND, secret_target(args), target["login"].password)
    if args.json:
        print_json(result.to_json())
    else:
        print(format_result(result))
    return 0
