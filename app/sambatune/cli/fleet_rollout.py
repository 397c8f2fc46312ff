"""``sambatune fleet drift|export|run``: compare a fleet's smb.conf, and roll one change
out with Ansible (issue 20 items 3 and 5). Registered by :mod:`sambatune.cli.fleet`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.cli.output import add_json_flag
from sambatune.visible_text import one_line

if TYPE_CHECKING:
    from sambatune.fleet.drift import DriftReport
    from sambatune.fleet.export import ExportReport
    from sambatune.fleet.inventory import Fleet


#: fleet drift's exit status is a sum of these (a failed command is 1 as for every verb).
UNREAD_EXIT = 1
DRIFT_EXIT = 4


def register_rollout_verbs(verbs: Any) -> None:
    drift = verbs.add_parser(
        "drift",
        help="the parameters Samba uses on each host, compared across the fleet or with a golden file",
        description="Exit status, for scripts and monitoring: 0 when every host was read and none "
        f"drifts; {DRIFT_EXIT} when something drifts; {UNREAD_EXIT} when a host could not be read "
        f"(the others are compared); {DRIFT_EXIT | UNREAD_EXIT} when both.",
    )
    _add_fleet_options(drift)
    drift.add_argument(
        "--golden",
        metavar="FILE",
        help="compare with this smb.conf (a local file), each host's samba_overlay laid over it: "
        "an inventory variable holding a mapping ({global: {netbios name: FS1}}), a list of "
        "'[section] name = value' lines, or the name of an smb.conf fragment beside the inventory",
    )
    add_json_flag(drift)
    drift.set_defaults(handler=handle_drift)

    export = verbs.add_parser("export", help="write one smb.conf change as an Ansible project (site.yml)")
    _add_fleet_options(export)
    _add_change_options(export)
    export.add_argument("--out", required=True, metavar="DIR", help="the folder to write the project into")
    export.add_argument(
        "--wave", type=int, default=1, metavar="N", help="hosts changed at once (Ansible's serial; default 1)"
    )
    export.add_argument(
        "--allow-restart",
        action="store_true",
        help="let the playbook restart smbd where a changed parameter needs it (a restart "
        "ends every client's connection; without this such hosts are refused)",
    )
    export.add_argument(
        "--run",
        action="store_true",
        help="then run the playbook here through ansible-runner (Linux, macOS, WSL)",
    )
    add_json_flag(export)
    export.set_defaults(handler=handle_export)

    run = verbs.add_parser("run", help="run an exported project's playbook through ansible-runner")
    run.add_argument("project", metavar="DIR", help="a folder written by sambatune fleet export")
    run.add_argument("--limit", metavar="PATTERN", help="only these hosts (Ansible's --limit)")
    run.add_argument("--check", action="store_true", help="Ansible's --check --diff: show, change nothing")
    add_json_flag(run)
    run.set_defaults(handler=handle_run)


def _add_fleet_options(parser: argparse.ArgumentParser) -> None:
    from sambatune.cli.fleet import add_fleet_connection, add_fleet_source

    add_fleet_source(parser)
    add_fleet_connection(parser)
    parser.add_argument(
        "--concurrency", type=int, default=8, metavar="N", help="hosts read at once (default 8)"
    )


def _add_change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar='"[SECTION] NAME = VALUE"',
        help="set a parameter (repeat for more)",
    )
    parser.add_argument(
        "--unset",
        action="append",
        default=[],
        metavar='"[SECTION] NAME"',
        help="take a parameter out, so Samba's default applies (repeat for more)",
    )


def _fleet(args: argparse.Namespace) -> Fleet:
    from sambatune.cli.fleet import fleet_from_args
    from sambatune.errors import InvalidInput

    fleet = fleet_from_args(args)
    if not fleet.hosts:
        raise InvalidInput("No hosts to work on.")
    return fleet


def _connector(args: argparse.Namespace, fleet: Fleet) -> Any:
    from sambatune.fleet.live import connect
    from sambatune.fleet.survey import FleetPrompts

    prompts = FleetPrompts(accept_new_host_key=args.accept_new_host_key)
    return lambda host: connect(
        host, known_hosts=args.known_hosts, ssh_config=fleet.ssh_config, prompts=prompts
    )


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- drift --------------------------------------------------------------------------------


def handle_drift(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.errors import InvalidInput
    from sambatune.fleet.drift import fleet_drift

    fleet = _fleet(args)
    golden = None
    if args.golden:
        try:
            golden = Path(args.golden).read_bytes()
        except OSError as error:
            raise InvalidInput(f"Cannot read {args.golden}: {error.strerror}") from error
    report = fleet_drift(
        fleet.hosts,
        golden=golden,
        golden_name=args.golden,
        base_dir=args.inventory.resolve().parent if args.inventory else None,
        connector=_connector(args, fleet),
        concurrency=args.concurrency,
        on_host=None
        if args.json
        else lambda s: _progress(f"{s.host}: {'read' if s.reachable else s.error} ({s.seconds:.1f} s)"),
    )
    if args.json:
        print_json(report.to_json())
    else:
        print_drift(report)
    return (DRIFT_EXIT if report.drifts else 0) | (UNREAD_EXIT if report.unreachable else 0)


def _short(value: str | None, width: int = 28) -> str:
    if value is None:
        return "(no share)"
    text = value or '""'
    return text if len(text) <= width else text[: width - 1] + "…"


def print_drift(report: DriftReport) -> None:
    reachable = [h for h in report.hosts if h.reachable]
    against = f"the golden file {report.golden}" if report.golden else "the majority"
    read = f"{len(reachable)} of {len(report.hosts)} hosts read in {report.seconds:.1f} s"
    print(f"{read}; compared with {against}.")
    for host in report.unreachable:
        print(one_line(f"  {host.host}: {host.error}"))
    drifting = [p for p in report.parameters if p.differing]
    per_host = [p for p in report.parameters if not p.differing and not p.version_defaults]
    by_version = [p for p in report.parameters if p.version_defaults]
    if drifting:
        print()
        rows = [("parameter", "expected", "differs on", "to fix")]
        for p in drifting:
            where = f"[{p.section}] {p.parameter}"
            expected = _short(p.reference) if p.reference is not None else "(per host)"
            hosts = ", ".join(f"{d.host}={_short(d.value, 20)}" for d in p.differing)
            rows.append((where, expected, hosts, "restart" if p.needs_restart else "reload"))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            print(one_line(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}"))
    elif not report.shares:
        print("No drift: every host reads the same values.")
    for share in report.shares:
        parts = []
        if share.missing_on:
            parts.append("missing on " + ", ".join(share.missing_on))
        if share.not_in_golden_on:
            parts.append("not in the golden file but on " + ", ".join(share.not_in_golden_on))
        if share.present_on and not share.not_in_golden_on:
            parts.append("present on " + ", ".join(share.present_on))
        print(one_line(f"share [{share.share}]: " + "; ".join(parts)))
    if per_host:
        names = ", ".join(f"[{p.section}] {p.parameter}" for p in per_host[:12])
        more = f" and {len(per_host) - 12} more" if len(per_host) > 12 else ""
        print(one_line(f"Different on hosts with no majority (names, paths, ports): {names}{more}."))
    if by_version:
        names = ", ".join(f"[{p.section}] {p.parameter}" for p in by_version[:12])
        more = f" and {len(by_version) - 12} more" if len(by_version) > 12 else ""
        print(one_line(f"Not drift, each host has its Samba release's default: {names}{more}."))


# -- export and run -----------------------------------------------------------------------


def handle_export(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.fleet.change import parse_edit
    from sambatune.fleet.export import fleet_export

    edits = [parse_edit(text) for text in args.set] + [parse_edit(text, unset=True) for text in args.unset]
    fleet = _fleet(args)
    report = fleet_export(
        fleet.hosts,
        edits,
        Path(args.out),
        wave=args.wave,
        allow_restart=args.allow_restart,
        connector=_connector(args, fleet),
        concurrency=args.concurrency,
        on_host=None if args.json else lambda host, error: _progress(f"{host}: {error or 'candidate made'}"),
    )
    result: dict[str, Any] = {"export": report.to_json()}
    code = 0 if report.ok else 1
    if not args.json:
        print_export(report)
    if args.run and report.exported:
        run_code, run_json = _run(Path(args.out), args.json, limit=None, check=False)
        result["run"] = run_json
        code = code or run_code
    if args.json:
        print_json(result)
    return code


def print_export(report: ExportReport) -> None:
    print(f"Wrote {report.out} for {len(report.exported)} host(s) in {report.seconds:.1f} s:")
    for candidate in report.exported:
        how = "no change" if candidate.unchanged else "restart" if candidate.restart_changes else "reload"
        # The path and the notes are the server's text: each stays on its line.
        print(one_line(f"  {candidate.host.name}: {candidate.path} ({how})"))
        for warning in candidate.warnings:
            print(one_line(f"    note: {warning}"))
    for host, error in report.refused.items():
        print(one_line(f"  {host}: left out: {error}"))
    if report.exported:
        print(f"Run it: cd {report.out} && ansible-playbook site.yml (see README.md there).")


def _run(project: Path, wants_json: bool, *, limit: str | None, check: bool) -> tuple[int, dict[str, Any]]:
    from sambatune.errors import InvalidInput
    from sambatune.fleet.ansible_run import ansible_unavailable, run_project

    reason = ansible_unavailable()
    if reason is not None:
        raise InvalidInput(reason, details=f"The project is in {project}: run it where Ansible is.")
    events: list[dict[str, Any]] = []

    def show(event: Any) -> None:
        events.append(event.to_json())
        if not wants_json:
            print(event.line(), flush=True)

    result = run_project(project, on_event=show, limit=limit, check=check)
    if not wants_json:
        verdict = "done" if result.ok else f"halted: failed on {', '.join(result.failed_hosts) or 'a host'}"
        print(f"Rollout {verdict} (ansible-playbook {result.status}, exit {result.exit_code}).")
    return (0 if result.ok else 1), {**result.to_json(), "events": events}


def handle_run(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json

    code, result = _run(Path(args.project), args.json, limit=args.limit, check=args.check)
    if args.json:
        print_json(result)
    return code
