"""``sambatune client ...``: tune this computer (the PC that talks to Samba).

sambatune client show --json
sambatune client plan [--bandwidth 1gbit --rtt 20ms | --server H] [--os windows-10] --json
sambatune client apply PLAN.json [--dry-run] --json
sambatune client restore BACKUP --json
sambatune client backups --json
sambatune client window --bandwidth 1gbit --rtt 10ms [--current 64KiB] --json
sambatune client check PLAN_ID --before|--after --path /mnt/data [--test smb-client|files] --json
"""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from sambatune.cli.output import KEEPS_NO_LOG, add_json_flag


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "client",
        help="tune this computer's TCP window and MTU (Windows, Linux, macOS)",
        description="Plan, apply and undo client-side TCP window and MTU settings, "
        "labelled honoured or ignored for this OS version.",
    )
    verbs = parser.add_subparsers(dest="client_verb", metavar="ACTION", required=True)

    show = verbs.add_parser("show", help="OS, interfaces and current values of the settings")
    _add_os(show)
    _add_sysctl_dir(show)
    add_json_flag(show)
    show.set_defaults(handler=handle_show)

    plan = verbs.add_parser("plan", help="what to change, from bandwidth and RTT, and why")
    plan.add_argument("--bandwidth", help="e.g. 1gbit, 100mbit, 940Mbit/s, 125MB/s")
    plan.add_argument(
        "--bandwidth-from",
        metavar="FILE",
        type=Path,
        help="take the bandwidth from a benchmark result (iperf3 -J or SambaTune)",
    )
    plan.add_argument("--rtt", help="round-trip time to the server, e.g. 20ms, 0.5s")
    plan.add_argument(
        "--server",
        metavar="HOST",
        help="measure the RTT (TCP connects) and probe the path MTU to this server",
    )
    plan.add_argument(
        "--port",
        type=int,
        action="append",
        dest="ports",
        metavar="PORT",
        help="TCP port(s) to time connects to (default: 445, 22, 139)",
    )
    plan.add_argument("--samples", type=int, default=5, help="TCP connects to time (default 5)")
    plan.add_argument("--mtu", type=int, help="plan this MTU (e.g. 9000) instead of probing")
    plan.add_argument("--no-mtu-probe", action="store_true", help="do not probe the path MTU")
    plan.add_argument("--interface", help="the interface to tune (default: the one to the server)")
    plan.add_argument(
        "--server-multichannel",
        choices=("yes", "no"),
        help="whether the server offers SMB multichannel (its 'server multi channel support'); "
        "without it, multichannel is not planned",
    )
    plan.add_argument(
        "--server-signing",
        metavar="SETTING",
        help="the server's 'server signing' (mandatory/required, auto, ...): a client setting "
        "that requires less is planned only where the server does not require signing",
    )
    plan.add_argument(
        "-o", "--output", type=Path, metavar="PLAN.json", help="also save the plan to this file"
    )
    plan.add_argument(
        "--reg-file",
        type=Path,
        metavar="FILE.reg",
        help="Windows: also write the registry part as a .reg file",
    )
    _add_os(plan)
    _add_sysctl_dir(plan)
    add_json_flag(plan)
    plan.set_defaults(handler=handle_plan)

    apply = verbs.add_parser("apply", help="back up, then apply a plan (needs admin/root)")
    apply.add_argument("plan_file", type=Path, metavar="PLAN.json")
    apply.add_argument(
        "--dry-run", action="store_true", help="show exactly what would be written or run; change nothing"
    )
    apply.add_argument(
        "--force", action="store_true", help="apply even if a setting changed since the plan was made"
    )
    apply.add_argument(
        "--elevate",
        action="store_true",
        help="Linux/macOS: ask for root with pkexec or sudo (Windows always asks through the UAC prompt)",
    )
    _add_sysctl_dir(apply)
    add_json_flag(apply)
    apply.set_defaults(handler=handle_apply)

    restore = verbs.add_parser("restore", help="put back the settings a backup recorded")
    restore.add_argument("backup", help="backup id (see 'client backups'), folder, or 'latest'")
    restore.add_argument("--dry-run", action="store_true")
    restore.add_argument("--elevate", action="store_true")
    _add_sysctl_dir(restore)
    add_json_flag(restore)
    restore.set_defaults(handler=handle_restore)

    backups = verbs.add_parser("backups", help="list the backups of this computer's settings")
    add_json_flag(backups)
    backups.set_defaults(handler=handle_backups)

    window = verbs.add_parser("window", help="the bandwidth-delay calculator")
    window.add_argument("--bandwidth", required=True)
    window.add_argument("--rtt", required=True)
    window.add_argument("--current", help="a window to judge, e.g. 64KiB or 65535")
    add_json_flag(window)
    window.set_defaults(handler=handle_window)

    check = verbs.add_parser(
        "check",
        help="measure a plan's effect from this computer: before the apply, then after",
        description="Run the test a plan's items name (large files, or many small files) through "
        "the share as this computer mounted it, before the plan is applied and again after; "
        "the after run is judged against the before one with Welch's test.",
    )
    check.add_argument(
        "plan", metavar="PLAN_ID", help="the plan's id (see 'client plan'), or a PLAN.json file"
    )
    phase = check.add_mutually_exclusive_group(required=True)
    phase.add_argument(
        "--before", dest="phase", action="store_const", const="before", help="before the apply"
    )
    phase.add_argument(
        "--after",
        dest="phase",
        action="store_const",
        const="after",
        help="after the apply and a new mount of the share: same test, path and runs as before",
    )
    check.add_argument(
        "--path",
        help="the share as this computer mounted it (mount point, or UNC path on Windows); "
        "default: the one the plan names, if real; after: the before's",
    )
    check.add_argument(
        "--any-directory",
        action="store_true",
        help="measure a folder that is not on an SMB share (for comparison); without it such a "
        "path is refused",
    )
    check.add_argument(
        "--test",
        choices=("smb-client", "files"),
        help="large-file write and read, or many small files (default: what the plan's changes name)",
    )
    check.add_argument("--runs", type=int, help="counted runs (default 5; after: the before's)")
    check.add_argument("--warmup", type=int, help="warm-up runs first (default 1; after: the before's)")
    check.add_argument(
        "--size",
        metavar="BYTES",
        help="smb-client: the test file (default auto, sized by a probe); "
        "files: bytes per file (default 4KiB)",
    )
    check.add_argument("--count", metavar="N", help="files: how many (default 2000)")
    add_json_flag(check)
    check.set_defaults(handler=handle_check)

    helper = verbs.add_parser(
        "apply-elevated", help="(internal) the one-shot elevated helper: REQUEST -> RESULT"
    )
    helper.add_argument("request", type=Path)
    helper.add_argument("result", type=Path)
    helper.set_defaults(handler=handle_apply_elevated, **KEEPS_NO_LOG)


def _add_os(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--os",
        dest="os_profile",
        metavar="PROFILE",
        help="plan for another machine: windows-10, windows-11, windows-7, windows-xp, "
        "windows-2003, windows-98, linux, macos, ... (default: this computer)",
    )


def _add_sysctl_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sysctl-dir",
        type=Path,
        metavar="DIR",
        help="Linux: where the persistence file goes (default /etc/sysctl.d)",
    )
    parser.add_argument(
        "--etc-dir",
        type=Path,
        metavar="DIR",
        help="read fstab, systemd/system/*.mount, auto.master (Linux) and nsmb.conf (macOS) "
        "below DIR instead of /etc (for tests and staged configurations)",
    )


def _system(args: argparse.Namespace) -> Any:
    import os

    from sambatune.client.system import system_for

    etc_dir = getattr(args, "etc_dir", None)
    if etc_dir is not None:
        # The backends read it from the environment, so the elevated helper sees it too.
        os.environ["SAMBATUNE_ETC_DIR"] = str(etc_dir)
    return system_for(getattr(args, "os_profile", None), getattr(args, "sysctl_dir", None))


# -- show --------------------------------------------------------------------------------


def handle_show(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.client.snapshot import take_snapshot

    snapshot = take_snapshot(_system(args))
    data = snapshot.to_json()
    if args.json:
        print_json(data)
        return 0
    os_info = data["os"]
    print(
        f"{os_info['name']} ({os_info['version'] or os_info['profile']}), "
        f"generation {os_info['generation']}; admin: {'yes' if data['admin'] else 'no'}"
    )
    print(textwrap.fill(snapshot.system.os.summary, 92, initial_indent="  ", subsequent_indent="  "))
    for nic in data["interfaces"]:
        print(f"  interface {nic['name']}: MTU {nic['mtu']}, {' '.join(nic['addresses'])}")
    for item in data["settings"]:
        print(f"  [{item['label']:8}] {item['title']}: {item['current']['display']}")
    return 0


# -- plan --------------------------------------------------------------------------------


def handle_plan(args: argparse.Namespace) -> int:
    import json

    from sambatune.cli.output import TerminalProgress, print_json
    from sambatune.client.measure import DEFAULT_RTT_PORTS, bandwidth_from_file
    from sambatune.client.planner import PlanRequest, make_plan
    from sambatune.errors import InvalidInput
    from sambatune.quantities import parse_bandwidth, parse_duration

    request = PlanRequest(
        bandwidth_bps=parse_bandwidth(args.bandwidth) if args.bandwidth else None,
        rtt_seconds=parse_duration(args.rtt) if args.rtt else None,
        server=args.server,
        rtt_ports=tuple(args.ports) if args.ports else DEFAULT_RTT_PORTS,
        rtt_samples=max(1, args.samples),
        mtu=args.mtu,
        probe_mtu=not args.no_mtu_probe,
        interface=args.interface,
        server_multichannel=None if args.server_multichannel is None else args.server_multichannel == "yes",
        server_signing=args.server_signing,
    )
    if args.bandwidth_from:
        request.benchmark_bandwidth = bandwidth_from_file(args.bandwidth_from)
    system = _system(args)
    progress = TerminalProgress()
    try:
        plan = make_plan(system, request, report=lambda event: progress.update(event.fraction, event.message))
    finally:
        progress.done()
    from sambatune.client.plan_store import PlanStore

    # Kept by id: 'client check PLAN_ID' finds it after the apply, a reboot or a remount.
    PlanStore().save(plan)
    data = plan.to_json()
    if args.output:
        args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.reg_file:
        regfile = plan.reg_file()
        if regfile is None:
            raise InvalidInput("This plan changes no registry values; no .reg file written.")
        args.reg_file.write_bytes(regfile.encode())
    if args.json:
        print_json(data)
    else:
        print(format_plan(data))
    return 0


def format_plan(data: dict[str, Any]) -> str:
    from sambatune.units import format_bits

    window = data.get("window") or {}
    measurements = data.get("measurements") or {}
    lines = [
        f"Plan {data['id']} for {data['os']['name']}"
        + ("" if data["os"]["detected"] else " (a profile, not this computer)"),
        f"  bandwidth {measurements.get('bandwidth')} ({measurements.get('bandwidth_source')})",
        f"  RTT       {measurements.get('rtt')} ({measurements.get('rtt_source')})",
    ]
    if window:
        lines.append(
            f"  window    {window['required_window']:,} bytes needed (BDP), scale factor "
            f"{window['scale_shift']}; 65,535 bytes without scaling allow "
            f"{format_bits(window['unscaled_throughput_bps'])}"
        )
    for change in data["changes"]:
        mark = {"set": "CHANGE", "delete": "DELETE", "keep": "ok", "none": "info"}[change["action"]]
        lines.append(f"\n[{mark}] {change['title']}  ({change['label']} on this OS)")
        lines.append(f"    now: {change['current']['display']}")
        if change["action"] in ("set", "delete"):
            lines.append(f"    new: {change['recommended_display']}   restart: {change['restart']}")
        for piece in textwrap.wrap(change["reason"], 92):
            lines.append(f"    {piece}")
        if change.get("measure"):
            lines.append(f"    measure before and after: {change['measure']['command']}")
    for note in data.get("notes") or []:
        lines.append(f"\nnote: {note}")
    for warning in data.get("warnings") or []:
        lines.append(f"\nWARNING: {warning}")
    if data.get("after_apply"):
        lines.append("\nAfter the apply (for the changes to take effect; not run by SambaTune):")
        lines += [f"  {command}" for command in data["after_apply"]]
    linked = [change["measure"]["path"] for change in data["changes"] if change.get("measure")]
    if linked:
        from sambatune.wizard.client_check import is_example_share

        real = list(dict.fromkeys(path for path in linked if not is_example_share(path)))
        path = shlex.quote(real[0]) if len(real) == 1 else "MOUNTED_SHARE"
        lines.append(
            f"\nBefore and after, from this computer: sambatune client check {data['id']} --before "
            f"--path {path} (before the apply), then --after (once the share is mounted again)."
        )
    if data.get("diff"):
        lines.append("\nDiff:")
        for entry in data["diff"]:
            lines.append(f"  - {entry['setting']}: {entry['before']}")
            lines.append(f"  + {entry['setting']}: {entry['after']}")
    return "\n".join(lines)


# -- apply / restore ---------------------------------------------------------------------


def _print_result(result: Any, wants_json: bool) -> int:
    from sambatune.cli.output import print_json
    from sambatune.client.reports import result_text

    if wants_json:
        print_json(result.to_json())
    else:
        print(result_text(result))
    return 0 if result.ok else 1


def _elevated_or_direct(args: argparse.Namespace, request: Any, direct: Any) -> Any:
    """Run directly with rights; otherwise through the one-shot elevated helper."""
    from sambatune.client.elevation import run_elevated

    system = _system(args)
    if args.dry_run or system.is_admin() or system.apply_blocker():
        return direct(system)
    if sys.platform == "win32" or getattr(args, "elevate", False):
        return run_elevated(request)
    return direct(system)  # raises NeedsAdmin with the sudo hint


def handle_apply(args: argparse.Namespace) -> int:
    import json

    from sambatune.client.apply import apply_plan
    from sambatune.client.backups import BackupStore
    from sambatune.client.elevation import ElevatedRequest
    from sambatune.client.plan import ClientPlan
    from sambatune.errors import InvalidInput

    try:
        raw = json.loads(args.plan_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"Cannot read the plan {args.plan_file}: {exc}") from exc
    plan = ClientPlan.from_json(raw)
    store = BackupStore()
    request = ElevatedRequest(
        "apply",
        str(store.root),
        plan=raw,
        dry_run=args.dry_run,
        force=args.force,
        sysctl_dir=str(args.sysctl_dir) if args.sysctl_dir else None,
    )
    result = _elevated_or_direct(
        args,
        request,
        lambda system: apply_plan(system, plan, dry_run=args.dry_run, store=store, force=args.force),
    )
    return _print_result(result, args.json)


def handle_restore(args: argparse.Namespace) -> int:
    from sambatune.client.apply import restore_backup
    from sambatune.client.backups import BackupStore
    from sambatune.client.elevation import ElevatedRequest

    store = BackupStore()
    backup = store.load(args.backup)
    request = ElevatedRequest(
        "restore",
        str(store.root),
        backup=str(backup.folder),
        dry_run=args.dry_run,
        sysctl_dir=str(args.sysctl_dir) if args.sysctl_dir else None,
    )
    result = _elevated_or_direct(
        args, request, lambda system: restore_backup(system, backup, dry_run=args.dry_run, store=store)
    )
    return _print_result(result, args.json)


def handle_backups(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.client.backups import BackupStore

    store = BackupStore()
    entries = store.list()
    if args.json:
        print_json({"folder": str(store.root), "backups": entries})
        return 0
    if not entries:
        print(f"No backups yet (they go in {store.root}).")
    for entry in entries:
        restored = f", restored {entry['restored_at']}" if entry.get("restored_at") else ""
        print(f"{entry['id']}  {entry['kind']:14} {entry['os']}: {entry['summary']}{restored}")
    return 0


def handle_window(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.client.window import size_window
    from sambatune.quantities import parse_bandwidth, parse_duration, parse_size
    from sambatune.units import format_bits

    sizing = size_window(
        parse_bandwidth(args.bandwidth),
        parse_duration(args.rtt),
        parse_size(args.current) if args.current else None,
    )
    data = sizing.to_json()
    if args.json:
        print_json(data)
        return 0
    print(
        f"bandwidth-delay product {data['bdp_bytes']:,.0f} bytes; window needed "
        f"{data['required_window']:,} bytes; scale factor {data['scale_shift']}"
        + (" (capped: larger than any TCP window)" if data["capped"] else "")
    )
    print(f"without scaling (65,535 bytes): at most {format_bits(data['unscaled_throughput_bps'])}")
    if data["current_window"]:
        print(
            f"a {data['current_window']:,}-byte window: at most {format_bits(data['current_throughput_bps'])}"
        )
    return 0


# -- check (before and after) -----------------------------------------------------------

STOPPING_CHECK = "Stopping: the test's files are being removed from the share…"


def handle_check(args: argparse.Namespace) -> int:
    from sambatune.cancellation import CancelToken
    from sambatune.cli.bench_tables import BenchProgress
    from sambatune.cli.output import ctrl_c_cancels, print_json
    from sambatune.client.plan_store import load_plan
    from sambatune.errors import InvalidInput
    from sambatune.quantities import parse_count, parse_size
    from sambatune.wizard.client_check import AFTER, CheckRequest, CheckStore, measure_phase

    try:
        plan = load_plan(args.plan)
    except InvalidInput as missing:
        # The plan store keeps the newest plans only; a check keeps its own plan's copy,
        # so an after run still finds a plan that has since been pruned.
        try:
            check = CheckStore().load(args.plan) if args.phase == AFTER else None
        except InvalidInput:
            check = None
        if check is None:
            raise missing from None
        plan = check.client_plan()
    size = None
    if args.size is not None and args.size.strip().lower() != "auto":
        size = parse_size(args.size)
    if args.count is not None:
        count: int | None = parse_count(args.count.strip())
    else:
        count = None
    request = CheckRequest(
        args.phase,
        path=args.path,
        test=args.test,
        runs=args.runs,
        warmup=args.warmup,
        size=size,
        count=count,
        any_directory=args.any_directory,
    )
    cancel = CancelToken()
    progress = BenchProgress()
    try:
        with ctrl_c_cancels(cancel, STOPPING_CHECK):
            measured = measure_phase(plan, request, cancel=cancel, on_event=progress.on_event)
    except KeyboardInterrupt:
        # Off the main thread Ctrl-C stays KeyboardInterrupt: the test still has to stop.
        cancel.cancel()
        raise
    finally:
        progress.done()
    check = measured.check
    if args.json:
        print_json(check.to_json())
        return 0
    print(format_check(measured))
    return 0


def format_check(measured: Any) -> str:
    """The per-run tables as the bench verbs print them, then where the check stands."""
    from sambatune.bench.small_files import format_operations
    from sambatune.cli.bench_tables import format_result

    check, result = measured.check, measured.result
    lines = [
        f"Plan {check.plan_id}, measured {measured.phase} the change: {check.test} through {check.path} "
        f"({check.describe_method()})",
        "",
        format_result(result),
    ]
    operations = result.extra.get("operations")
    if operations:
        lines += ["", *format_operations(operations)]
    if measured.phase == "before":
        lines += [
            "",
            f"Saved as the before measurement (session {result.session_id}). Now apply the plan, "
            "mount the share again, then:",
            f"  sambatune client check {check.plan_id} --after",
        ]
        return "\n".join(lines)
    verdict = check.verdict or {}
    lines += [
        "",
        f"Before (session {check.before.session_id}) against after (session {result.session_id}): "
        f"{str(verdict.get('overall', '')).upper()}, recommendation: {verdict.get('recommendation')}.",
    ]
    lines += [f"  {piece}" for piece in textwrap.wrap(str(verdict.get("explanation", "")), 92)]
    for series in verdict.get("series") or []:
        lines.append(f"- {series['label']}:")
        # One line: a wrap could part "(p =" from its value, which people and scripts look for.
        lines.append(f"    {series['sentence']}")
        for warning in series.get("warnings") or []:
            lines += [f"    Note: {piece}" for piece in textwrap.wrap(warning, 84)]
    for note in check.notes:
        lines += ["", *textwrap.wrap(f"Note: {note}", 92)]
    return "\n".join(lines)


def handle_apply_elevated(args: argparse.Namespace) -> int:
    from sambatune.client.elevation import run_helper

    return run_helper(args.request, args.result)
