"""What several kinds share: command-line argument groups, and reading them or the form
into the engines' options."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.kind import AUTO, RunRequest, share_secret_target
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_size

#: The size tip of a test that sizes its own file: ``what`` it probes with, at ``most``.
AUTO_SIZE_TIP = (
    "auto: {what} first, then a file sized so that all the runs take about a minute "
    "(at most {most}). A size you give is always used."
)
#: The keyring's kind for SMB passwords, shared by the form and the command line.
SECRET_KIND = "smb"


def add_stream_options(parser: argparse.ArgumentParser) -> None:
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


def add_place_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("where")
    group.add_argument("--share", help="a share of the server (its path is taken from smb.conf)")
    group.add_argument("--directory", help="a directory on the server (default: the share's path)")


def add_smb_options(parser: argparse.ArgumentParser) -> None:
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


def add_share_target_options(parser: argparse.ArgumentParser, share_help: str) -> None:
    """Where a test from this computer runs and how it logs in (``ShareTarget``); the
    CLI reads the password from stdin or the keyring, never from the command line."""
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
    login.add_argument(
        "--remember-password",
        action="store_true",
        help="after a successful run, keep the password in the system keyring",
    )


def share_target_arguments(args: argparse.Namespace, password: str | None) -> dict[str, Any]:
    """The ``ShareTarget`` part of a test's options, from ``add_share_target_options``."""
    from sambatune.bench.smb_wire import SmbLogin

    return {
        "server": args.server,
        "share": args.share,
        "port": args.port,
        "path": args.path,
        "login": SmbLogin(user=args.user, password=password, domain=args.domain),
    }


def arguments_secret_target(args: argparse.Namespace) -> str:
    """Whom the keyring keeps the password under, from ``add_share_target_options``."""
    return share_secret_target(args.user, args.server, args.port, args.share)


def size_or_auto(text: str) -> int | None:
    """``--size``: None for "auto" (the test sizes its file from a probe)."""
    return None if text.strip().lower() == AUTO else parse_size(text)


def stream_options(args: argparse.Namespace) -> Any:
    """The stream's options from ``add_stream_options`` (and net's own size and buffers)."""
    from sambatune.bench.net import NetOptions

    return NetOptions(
        direction=args.direction,
        seconds=args.duration,
        size=parse_size(args.size) if getattr(args, "size", None) else None,
        sndbuf=parse_size(args.sndbuf) if getattr(args, "sndbuf", None) else None,
        rcvbuf=parse_size(args.rcvbuf) if getattr(args, "rcvbuf", None) else None,
        nodelay=args.nodelay,
        buffers_on=args.buffers_on,
        through_ssh=args.through_ssh,
        data_address=args.data_address,
    )


def form_stream_options(request: RunRequest) -> Any:
    from sambatune.bench.net import NetOptions

    return NetOptions(
        direction=request.direction, seconds=request.seconds, sample_interval=request.sample_interval
    )


def listed(text: str, parse: Any) -> tuple[Any, ...]:
    """``"4KiB, 1MiB"`` parsed item by item."""
    return tuple(parse(part.strip()) for part in text.split(",") if part.strip())


def place(args: argparse.Namespace, context: Any, what: str) -> str:
    if args.directory:
        return str(args.directory)
    if args.share:
        return str(context.share_path(args.share))
    raise InvalidInput(f"Where should the {what} run? Give --share NAME or --directory PATH.")


def share(args: argparse.Namespace, context: Any) -> str:
    if args.share:
        return str(args.share)
    shares = [s for s in (context.survey.shares if context.survey else []) if not s.get("printable")]
    if len(shares) == 1:
        return str(shares[0]["name"])
    names = ", ".join(str(s["name"]) for s in shares) or "none found"
    raise InvalidInput("Which share? Give --share NAME.", details=f"Shares: {names}.")


def smb_login(args: argparse.Namespace, password: str | None) -> dict[str, Any]:
    """How smbclient on the server logs on, from ``add_smb_options``."""
    return {
        "user": args.smb_user,
        "password": password,
        "domain": args.smb_domain,
        "port": args.smb_port,
        "directory": args.directory,
        "protocol": args.protocol,
    }


def form_password(request: RunRequest) -> str | None:
    """The typed password, else one the keyring keeps for this share (worker thread)."""
    if not request.user:
        return None
    if request.password:
        return request.password
    from sambatune.remote.secrets import load_secret

    return load_secret(SECRET_KIND, request.secret_target) or ""


def form_login(request: RunRequest) -> dict[str, Any]:
    return {"user": request.user or None, "password": form_password(request)}


def share_target(request: RunRequest) -> dict[str, Any]:
    """Where a test from this computer goes: the mounted path, else server, share and port."""
    if request.path:
        return {"path": request.path}
    return {"server": request.server, "share": request.share, "port": request.port}


def require_share(request: RunRequest) -> None:
    if not request.share and not request.path:
        raise InvalidInput("Which share? Choose one of the server's shares.")


def require_share_target(request: RunRequest) -> None:
    require_share(request)
    if not request.path and not request.server:
        raise InvalidInput("Which SMB server? Give its name or address.")
