"""``sambatune conf get``: a server's live smb.conf as a local file to edit, remembered
as the version a change made from it starts from.

``conf apply --file F`` then knows what F was made from: when the live file has moved
on since (another admin's apply, a hand edit), the apply is refused and shows that
change instead of silently undoing it. The copies are remembered by their local path,
in SambaTune's private data folder, with the bytes they were made from.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag


def register_get_verb(verbs: Any) -> None:
    get = verbs.add_parser(
        "get", help="copy the live smb.conf here, to edit and apply (the apply checks it is still live)"
    )
    add_connection_options(get)
    get.add_argument("--remote-path", metavar="PATH", help="the smb.conf (default: the running smbd's)")
    get.add_argument("--sudo", action="store_true", help="read it with sudo (default: when needed)")
    get.add_argument("-o", "--output", required=True, metavar="FILE", help="the local file to write")
    add_json_flag(get)
    get.set_defaults(handler=handle_get)


def handle_get(args: argparse.Namespace) -> int:
    from sambatune.cli.connect import connect_from_args
    from sambatune.cli.fetched_copies import FetchedCopies
    from sambatune.cli.output import print_json
    from sambatune.conf.apply import read_live
    from sambatune.errors import InvalidInput
    from sambatune.remote.config_location import detect_config_path, needs_sudo
    from sambatune.remote.local import write_local_file_atomic

    output = Path(args.output)
    if output.is_dir():
        raise InvalidInput(f"{output} is a folder: name the file to write.")
    transport = connect_from_args(args)
    try:
        path = args.remote_path or detect_config_path(transport)
        sudo = bool(args.sudo) or needs_sudo(transport, path)
        if sudo:
            transport.check_sudo()
        live = read_live(transport, path, sudo=sudo)
        target = transport.label
    finally:
        transport.close()
    try:
        write_local_file_atomic(str(output), live.data, mode=0o600)
    except OSError as exc:
        raise InvalidInput(f"Cannot write {output}: {exc.strerror}") from exc
    FetchedCopies().remember(output, target, path, live.data)
    facts = {"file": str(output), "target": target, "path": path, "sha256": live.sha256}
    if args.json:
        print_json(facts)
    else:
        print(f"{output}: {path} on {target} ({len(live.data)} bytes, SHA-256 {live.sha256[:16]}…)")
    return 0
