"""``sambatune conf apply|history|restore``: change a server's smb.conf safely."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag, ctrl_c_cancels
from sambatune.states import LiveState

# Before the swap the pipeline stops at once with nothing changed; after it, it finishes
# its checks (or rolls back) and records what is live.
STOPPING_APPLY = (
    "Stopping safely: nothing more is changed; if the new file is already live, "
    "SambaTune finishes checking it first…"
)

if TYPE_CHECKING:
    from sambatune.conf.apply import StepEvent


def register_apply_verbs(verbs: Any) -> None:
    apply = verbs.add_parser("apply", help="validate, back up, swap, reload and verify a new smb.conf")
    add_connection_options(apply)
    apply.add_argument("--file", required=True, metavar="NEW_SMB_CONF", help="the new version (a local file)")
    apply.add_argument(
        "--base",
        metavar="OLD_SMB_CONF",
        help="the copy of the live file the new version was made from: when the live file "
        "is no longer that, the apply is refused and shows what changed (default: what "
        "'conf get' wrote to NEW_SMB_CONF, else the version SambaTune last applied there "
        "from this computer, else the live file)",
    )
    apply.add_argument(
        "--force",
        action="store_true",
        help="apply even when the live file changed since the version it was made from "
        "(that change is replaced)",
    )
    _add_target_options(apply)
    apply.add_argument("--summary", default="", help="one line saying what the change is")
    _add_consent_options(apply)
    apply.add_argument("--yes", action="store_true", help="apply without asking")
    add_json_flag(apply)
    apply.set_defaults(handler=handle_apply)

    history = verbs.add_parser("history", help="the server's smb.conf backups, newest first")
    add_connection_options(history)
    _add_target_options(history)
    history.add_argument("--diff", metavar="BACKUP_ID", help="show this backup against the live file")
    add_json_flag(history)
    history.set_defaults(handler=handle_history)

    restore = verbs.add_parser("restore", help="put a backup back, through the same safe steps")
    add_connection_options(restore)
    restore.add_argument("backup_id", metavar="BACKUP_ID")
    _add_target_options(restore)
    _add_consent_options(restore)
    restore.add_argument("--yes", action="store_true", help="restore without asking")
    add_json_flag(restore)
    restore.set_defaults(handler=handle_restore)


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--remote-path",
        metavar="PATH",
        help="the smb.conf to change (default: the running smbd's, or smbd -b's)",
    )
    parser.add_argument(
        "--sudo", action="store_true", help="use sudo for the file and smbd (default: when needed)"
    )
    parser.add_argument(
        "--backup-dir",
        metavar="DIR",
        help="where backups go on the server (default: sambatune-backups/ beside the file)",
    )
    parser.add_argument(
        "--keep", type=int, default=30, metavar="N", help="how many backups to keep (default: 30)"
    )


def _add_consent_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-restart",
        action="store_true",
        help="allow restarting smbd when a changed parameter needs it (a "
        "restart ends every client's connection; without this the apply "
        "is refused and says which parameters need it)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="show the plan (diff, testparm, how each changed parameter "
        "takes effect, who a restart would cut off) and change nothing",
    )


def _open(args: argparse.Namespace) -> tuple[Any, str, bool, Callable[[], Any]]:
    from sambatune.cli.connect import reconnectable_from_args
    from sambatune.remote.config_location import detect_config_path, needs_sudo

    transport, reconnect = reconnectable_from_args(args)
    try:
        path = args.remote_path or detect_config_path(transport)
        sudo = bool(args.sudo) or needs_sudo(transport, path)
        if sudo:
            transport.check_sudo()
    except BaseException:
        transport.close()
        raise
    return transport, path, sudo, reconnect


def _confirm(question: str, args: argparse.Namespace) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        from sambatune.errors import InvalidInput

        raise InvalidInput("Not applied: confirm with --yes when not at a terminal.")
    from sambatune.cli.output import visible

    # input() writes its prompt to the terminal itself, past the streams' filter.
    answer = input(visible(f"{question} [y/N] ")).strip().lower()
    return answer in ("y", "yes")


def _run_pipeline(
    args: argparse.Namespace,
    transport: Any,
    path: str,
    sudo: bool,
    original: bytes,
    candidate: bytes,
    summary: str,
    reconnect: Callable[[], Any],
    *,
    force: bool = False,
) -> int:
    from sambatune.applied_versions import AppliedVersions
    from sambatune.cancellation import CancelToken
    from sambatune.cli.output import TerminalProgress, print_json
    from sambatune.conf.apply import (
        PLANNED,
        REFUSED,
        STEP_TITLES,
        ApplyRequest,
        StepState,
        apply_config,
        unified_diff,
    )

    diff = unified_diff(original, candidate, path)
    if not args.json:
        print(diff or "(no difference)")
    if not diff:
        if args.json:
            # "unchanged" is no ApplyStatus: the pipeline never ran.
            print_json(
                {
                    "ok": True,
                    "status": "unchanged",
                    "live": LiveState.OLD,
                    "message": "Nothing to apply: the new version is identical.",
                    "diff": "",
                }
            )
        else:
            print("Nothing to apply: the new version is identical.")
        return 0
    if not args.dry_run and not _confirm(f"Apply this change to {path} on {transport.label}?", args):
        print("Not applied.", file=sys.stderr)
        return 1
    progress = TerminalProgress()

    def on_event(event: StepEvent) -> None:
        if event.state is StepState.RUNNING:
            progress.update(None, STEP_TITLES.get(event.step, event.step) + "…")
        elif not args.json:
            progress.done()
            print(step_line(event), file=sys.stderr)

    request = ApplyRequest(
        path,
        original,
        candidate,
        summary=summary,
        sudo=sudo,
        backup_dir=args.backup_dir,
        retention=args.keep,
        allow_restart=args.allow_restart,
        dry_run=args.dry_run,
        force=force,
    )
    cancel = CancelToken()
    opened = [transport]

    def reconnect_and_track() -> Any:
        opened.append(reconnect())
        return opened[-1]

    with ctrl_c_cancels(cancel, STOPPING_APPLY):
        outcome = apply_config(
            transport,
            request,
            on_event=on_event,
            cancel=cancel,
            reconnect=reconnect_and_track,
            journal=AppliedVersions().journal(transport.label, path),
        )
    for extra in opened[1:]:
        extra.close()
    progress.done()
    if args.json:
        print_json({**outcome.to_json(), "diff": diff, "path": path, "target": transport.label})
    else:
        _print_changes(outcome)
        print(outcome.message)
        if outcome.live_diff:
            print("What changed on the server since:\n" + outcome.live_diff)
            if outcome.status is REFUSED:
                print("To apply yours over it anyway (replacing that change): add --force.")
    return 0 if outcome.ok or outcome.status is PLANNED else 1


def step_line(event: StepEvent) -> str:
    """A step that ended, as the terminal lists it (also the wizard's)."""
    from sambatune.conf.apply import STEP_TITLES, StepState

    marks = {StepState.DONE: "ok", StepState.WARNING: "warn", StepState.SKIPPED: "skip"}
    line = f"  [{marks.get(event.state, 'FAIL'):>4}] {STEP_TITLES.get(event.step, event.step)}"
    return line + (f": {event.message}" if event.message else "")


def _print_changes(outcome: Any) -> None:
    """How smbd takes each changed parameter, as a short table."""
    if not outcome.changes:
        return
    print("How each change takes effect:")
    for change in outcome.changes:
        print(f"  {change.activation.value:<16} {change.describe()}  ({change.why})")


def handle_apply(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sambatune.cli.fetched_copies import FetchedCopies
    from sambatune.conf.apply import read_live
    from sambatune.errors import InvalidInput

    def read(name: str) -> bytes:
        try:
            return Path(name).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"Cannot read {name}: {exc.strerror}") from exc

    candidate = read(args.file)
    given_base = read(args.base) if args.base else None
    transport, path, sudo, reconnect = _open(args)
    copies = FetchedCopies()
    try:
        live = read_live(transport, path, sudo=sudo)
        base = (
            given_base
            if given_base is not None
            else copies.base_of(Path(args.file), transport.label, path)
            or _last_applied(transport.label, path, live.data)
        )
        summary = args.summary or f"applied {Path(args.file).name}"
        code = _run_pipeline(
            args, transport, path, sudo, base, candidate, summary, reconnect, force=args.force
        )
        if code == 0 and not args.dry_run and candidate != base:
            # The file is now what is live: a further edit of it starts from there.
            copies.remember(Path(args.file), transport.label, path, candidate)
        return code
    finally:
        transport.close()


def _last_applied(target: str, path: str, live: bytes) -> bytes:
    """What a new version given without --base was made from, as far as this computer
    knows: the version SambaTune last made live there from here, else the live file.
    A change someone else made since (from another computer, by hand) is then found,
    not silently replaced."""
    from sambatune.applied_versions import AppliedVersions
    from sambatune.states import LiveState

    # The newest run that left its version live (refused and rolled back runs did not).
    made_live = next((r for r in AppliedVersions().for_server(target, path) if r.live == LiveState.NEW), None)
    return made_live.content if made_live is not None and made_live.content else live


def handle_history(args: argparse.Namespace) -> int:
    from sambatune.applied_versions import AppliedVersions
    from sambatune.cli.output import print_json
    from sambatune.conf.apply import read_live, unified_diff
    from sambatune.remote.config_backups import BackupStore
    from sambatune.units import format_bytes

    transport, path, sudo, _reconnect = _open(args)
    try:
        store = BackupStore(transport, path, backup_dir=args.backup_dir, retention=args.keep, sudo=sudo)
        backups = store.entries()
        diff = None
        if args.diff:
            diff = unified_diff(
                read_live(transport, path, sudo=sudo).data,
                store.read(args.diff),
                path,
                "live",
                f"backup {args.diff}",
            )
        local = AppliedVersions().for_server(transport.label, path)
    finally:
        transport.close()
    if args.json:
        result: dict[str, Any] = {
            "target": transport.label,
            "path": path,
            "backup_dir": store.directory,
            "backups": [b.to_json() for b in backups],
            # Every run this computer made, each with what happened; and those of them
            # that left their version live (a rolled-back or failed run did not).
            "runs_from_this_computer": [v.to_json() for v in local],
            "applied_by_this_computer": [v.to_json() for v in local if v.live == LiveState.NEW],
        }
        if diff is not None:
            result["diff"] = diff
        print_json(result)
        return 0
    print(f"Backups of {path} on {transport.label} ({store.directory}):")
    for backup in backups:
        print(
            f"  {backup.id}  {backup.created}  {format_bytes(backup.size):>9}  "
            f"{backup.applied_by}  {backup.summary}"
        )
    if not backups:
        print("  (none yet)")
    if local:
        print(f"Runs from this computer ({len(local)}):")
        for version in local:
            print(
                f"  {version.applied_at}  {version.outcome:<12} {_live_words(version.live):<14}"
                f"{version.summary}"
            )
    if diff is not None:
        print(diff or "(identical to the live file)")
    return 0


def _live_words(live: str) -> str:
    """``live`` as read back from the record: "" in old rows, a LiveState value otherwise."""
    # Keyed by str: the record's plain strings look the members up.
    words: dict[str, str] = {
        LiveState.NEW: "now live",
        LiveState.OLD: "old file kept",
        LiveState.UNKNOWN: "live unknown",
    }
    return words.get(live, "live not recorded")


def handle_restore(args: argparse.Namespace) -> int:
    from sambatune.conf.apply import read_live
    from sambatune.remote.config_backups import BackupStore

    transport, path, sudo, reconnect = _open(args)
    try:
        store = BackupStore(transport, path, backup_dir=args.backup_dir, retention=args.keep, sudo=sudo)
        backup = store.get(args.backup_id)
        content = store.read(backup.id)
        live = read_live(transport, path, sudo=sudo)
        return _run_pipeline(
            args, transport, path, sudo, live.data, content, f"restored backup {backup.id}", reconnect
        )
    finally:
        transport.close()
