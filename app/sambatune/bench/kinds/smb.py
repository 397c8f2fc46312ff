"""smbclient on the server copies a file through a share, against its TCP and disk."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.bench.kinds.arguments import (
    AUTO_SIZE_TIP,
    add_place_options,
    add_smb_options,
    form_login,
    listed,
    require_share,
    share,
    size_or_auto,
    smb_login,
)
from sambatune.bench.kinds.kind import AUTO, BenchKind, CommandLine, RunRequest


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_place_options(parser)
    add_smb_options(parser)
    parser.add_argument(
        "--size",
        metavar="BYTES",
        default="auto",
        help="test file size (default auto: a 4MiB probe copy first, then a size "
        "that keeps all SMB runs near a minute, at most 512MiB)",
    )
    parser.add_argument("--operations", default="put,get", help="put, get or both (default)")
    parser.add_argument(
        "--no-ceilings", action="store_true", help="skip the raw TCP and disk measurements the ratios need"
    )


def _from_arguments(args: argparse.Namespace, context: Any, password: str | None) -> Any:
    from sambatune.bench.smb import SmbOptions

    return SmbOptions(
        share=share(args, context),
        size=size_or_auto(args.size),
        operations=listed(args.operations, str),
        ceilings=not args.no_ceilings,
        **smb_login(args, password),
    )


def _from_form(request: RunRequest, context: Any) -> Any:
    from sambatune.bench.smb import SmbOptions

    return SmbOptions(share=request.share, size=request.size, **form_login(request))


KIND = BenchKind(
    name="smb",
    order=30,
    title="SMB on the server (smbclient)",
    explanation="smbclient on the server itself copies a file through the share, against raw TCP "
    "and the disk there.",
    rows=frozenset({"share", "user", "password", "size"}),
    engine="sambatune.bench.smb:SmbBenchmark",
    options=_from_form,
    check=require_share,
    defaults={"size": AUTO},
    tips={"size": AUTO_SIZE_TIP.format(what="a short probe copy", most="512MiB")},
    cli=CommandLine(
        help="smbclient put and get through a share on the server's "
        "loopback, against its raw TCP and disk ceilings",
        add_arguments=_arguments,
        options=_from_arguments,
    ),
)
