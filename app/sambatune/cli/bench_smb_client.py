"""``sambatune bench smb-client``: write and read a test file on a share from this computer.

    sambatune bench smb-client --server files1 --share data --json
    sambatune bench smb-client --server files1 --share data --user alice --password-stdin
    sambatune bench smb-client --path /mnt/data            # the system's own SMB client
    sambatune bench smb-client --server files1 --share data --user alice --password-stdin \
        --security plain,signed,encrypted --ssh admin@files1 --json

No SSH is needed: this computer talks SMB to the server, as any client does. With
``--security``, one session of each kind runs the same test; ``--ssh`` lets the test read
the server's session list (smbstatus) to name what each session really negotiated. The
password is read from stdin, or from the system keyring where an earlier
``--remember-password`` put it; never from the command line.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.bench.kinds.arguments import SECRET_KIND
from sambatune.cli.bench import add_method_options
from sambatune.cli.output import add_json_flag

if TYPE_CHECKING:
    from sambatune.bench.smb_security import ServerSessions
    from sambatune.cancellation import CancelToken


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
    test.add_argument(
        "--security",
        default="",
        metavar="MODES",
        help="compare sessions: plain, signed and/or encrypted, e.g. plain,signed,encrypted "
        "(signed and encrypted need --user); each runs the whole test on the same share",
    )
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
    add_method_options(parser)
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
    from sambatune.quantities import parse_size
    from sambatune.remote.secrets import save_secret

    target = share_target_fields(args)
    options = SmbClientOptions(
        **target,
        size=None if args.size.strip().lower() == "auto" else parse_size(args.size),
        block_size=parse_size(args.block_size),
        outstanding=args.outstanding,
        operations=tuple(o.strip() for o in args.operations.split(",") if o.strip()),
        security=tuple(m.strip() for m in args.security.split(",") if m.strip()),
    )
    cancel = CancelToken()
    progress = BenchProgress()
    with ExitStack() as stack:
        sessions = _server_sessions(args, stack, cancel) if args.ssh else None
        bench = SmbClientBenchmark(
            None,
            Method(runs=args.runs, warmup=args.warmup),
            options,
            cancel=cancel,
            server_sessions=sessions,
        )
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
