"""This computer writes and reads a file on a share: SambaTune's own SMB client, or the
system's through a mounted path. Its verb, ``sambatune bench smb-client``, needs no SSH;
``--ssh`` only lets it name what each session negotiated from the server's session list.

    sambatune bench smb-client --server files1 --share data --json
    sambatune bench smb-client --path /mnt/data            # the system's own SMB client
    sambatune bench smb-client --server files1 --share data --user alice --password-stdin \
        --security plain,signed,encrypted --ssh admin@files1 --json
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from sambatune.bench.kinds.arguments import (
    AUTO_SIZE_TIP,
    add_share_target_options,
    form_login,
    listed,
    require_share_target,
    share_target,
    share_target_arguments,
    size_or_auto,
)
from sambatune.bench.kinds.kind import AUTO, SHARE_TARGET_ROWS, BenchKind, CommandLine, RunRequest
from sambatune.quantities import parse_size

if TYPE_CHECKING:
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_security import ServerSessions

#: Said under the explanation: where the limit may be SambaTune's own.
PURE_PYTHON_HINT = (
    " SambaTune's own SMB client reads and writes as fast as smbclient; when it is "
    "the limit itself, the result says so. Give a mounted "
    "path to measure through this computer's own client instead."
)


def smb_client_options(request: RunRequest, login: dict[str, Any]) -> SmbClientOptions:
    """The test's options; :class:`InvalidInput` says what is wrong (e.g. a signed
    session with no user)."""
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_wire import SmbLogin

    return SmbClientOptions(
        login=SmbLogin(**login),
        size=request.size,
        block_size=request.block,
        outstanding=request.outstanding,
        security=request.security,
        **share_target(request),
    )


def server_session_reader(transport: Any, survey: Any) -> ServerSessions | None:
    """Reads the session list of the smbd SambaTune manages on this server, or None when
    the survey knows no running smbd for its smb.conf (worker thread: it may ask sudo).

    Root sees every session; without it smbstatus lists only the SSH account's own, which
    rarely holds the test's SMB user: the test then says it named the session from this
    computer's side. Decided as the survey's client audit does.
    """
    if survey is None or survey.ambiguous or not survey.config_path or survey.managed_instance is None:
        return None
    from sambatune.bench.smb_security import server_sessions

    return server_sessions(transport, survey.config_path)


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_share_target_options(parser, "the share to write the test file to")
    test = parser.add_argument_group("test")
    test.add_argument(
        "--size",
        default=AUTO,
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


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> SmbClientOptions:
    from sambatune.bench.smb_client import SmbClientOptions

    return SmbClientOptions(
        **share_target_arguments(args, password),
        size=size_or_auto(args.size),
        block_size=parse_size(args.block_size),
        outstanding=args.outstanding,
        operations=listed(args.operations, str),
        security=listed(args.security, str),
    )


def _check(request: RunRequest) -> None:
    require_share_target(request)
    # The core's own checks (size, requests in flight, a user for signed and encrypted
    # sessions); no password yet: the keyring is read in the worker.
    smb_client_options(request, {"user": request.user or None})


KIND = BenchKind(
    name="smb-client",
    order=60,
    title="SMB from this computer",
    explanation="This computer writes and reads a file on the share: your network and the "
    "server together, as users see them." + PURE_PYTHON_HINT,
    rows=SHARE_TARGET_ROWS | {"size", "block", "outstanding", "security"},
    compares_sessions=True,
    engine="sambatune.bench.smb_client:SmbClientBenchmark",
    options=lambda request, context: smb_client_options(request, form_login(request)),
    check=_check,
    defaults={"size": AUTO, "outstanding": 4},
    tips={
        "size": AUTO_SIZE_TIP.format(what="a short probe write and read", most="256MiB"),
        "outstanding": "Read or write requests SambaTune's client keeps going at once.",
    },
    cli=CommandLine(
        help="SMB from this computer: write and read a test file on a share with SambaTune's "
        "own SMB client (several requests in flight), or through a mounted path",
        add_arguments=_arguments,
        options=_from_arguments,
        over="smb",
    ),
)
