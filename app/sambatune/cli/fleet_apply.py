"""``sambatune fleet apply|rollouts|report``: one change rolled out over a fleet, canary
first, then waves; halted and put back on any failure or a slowdown (issue 20 item 4).
Registered by :mod:`sambatune.cli.fleet`.

Exit status of ``fleet apply``: 0 when the rollout is done (or, without ``--yes``, when
the plan could go ahead), 1 when it halted or was refused, 3 when it was interrupted
(resume it with ``--resume``), 4 when it is done without the hosts ``--skip-unreachable``
left out (ansible-playbook's status for unreachable hosts).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.cli.output import add_json_flag, ctrl_c_cancels

# Ctrl-C stops the rollout between host steps, never a pipeline mid-swap; the record
# then says 'interrupted' and --resume continues it.
STOPPING_ROLLOUT = "Stopping after the hosts being changed now are checked…"

if TYPE_CHECKING:
    from sambatune.fleet.inventory import Fleet, FleetHost
    from sambatune.fleet.live import Connector
    from sambatune.fleet.rollout import RolloutEvent, RolloutPlan
    from sambatune.fleet.rollout_store import RolloutRecord

EXIT_HALTED = 1
EXIT_INTERRUPTED = 3
#: Done, without the hosts --skip-unreachable left out: ansible-playbook says 4 for those.
EXIT_LEFT_OUT = 4


def register_apply_verbs(verbs: Any) -> None:
    apply = verbs.add_parser(
        "apply",
        help="roll one smb.conf change out: a measured canary first, then waves; halts and puts back",
        description="Without --yes, print the plan and change nothing. Exit status 0 when the "
        "rollout is done, 1 when it halted or was refused, 3 when it was interrupted "
        f"(continue it with --resume ROLLOUT_ID), {EXIT_LEFT_OUT} when it is done but left out "
        "unreachable hosts (--skip-unreachable).",
    )
    _add_source(apply)
    apply.add_argument(
        "--set",
        action="append",
        default=[],
        metavar='"[SECTION] NAME = VALUE"',
        help="set a parameter (repeat for more)",
    )
    apply.add_argument(
        "--unset",
        action="append",
        default=[],
        metavar='"[SECTION] NAME"',
        help="take a parameter out, so Samba's default applies (repeat for more)",
    )
    apply.add_argument(
        "--canary", metavar="HOST", help="the host changed and measured first (default: the first)"
    )
    apply.add_argument(
        "--wave", type=int, default=2, metavar="N", help="hosts changed at once after it (default 2)"
    )
    apply.add_argument(
        "--allow-restart",
        action="store_true",
        help="allow restarting smbd where a changed parameter needs it (a restart ends every "
        "client's connection; without this such a rollout is refused before it starts)",
    )
    apply.add_argument(
        "--skip-unreachable",
        action="store_true",
        help="leave out hosts that cannot be reached when planning, as Ansible carries on "
        f"without them (the plan lists them; the exit status is then {EXIT_LEFT_OUT}); "
        "without this one unreachable host refuses the rollout",
    )
    apply.add_argument(
        "--measure",
        choices=("none", "quick", "full"),
        default="quick",
        help="the canary's before/after test: quick (4 MiB, 1+5 runs, default), full (the "
        "wizard's 64 MiB, 1+5 runs) or none",
    )
    apply.add_argument(
        "--share", help="the share the canary is measured through (default: its samba_measure_share)"
    )
    apply.add_argument("--yes", action="store_true", help="carry the rollout out (without: the plan only)")
    apply.add_argument(
        "--resume",
        type=int,
        metavar="ROLLOUT_ID",
        help="continue an interrupted rollout (its hosts come from the source it was started with)",
    )
    add_json_flag(apply)
    apply.set_defaults(handler=handle_apply)

    rollouts = verbs.add_parser("rollouts", help="the rollouts on record, newest first")
    add_json_flag(rollouts)
    rollouts.set_defaults(handler=handle_rollouts)

    report = verbs.add_parser("report", help="a rollout's report: per host and the timeline")
    report.add_argument("rollout_id", type=int, metavar="ROLLOUT_ID")
    report.add_argument("-o", "--output", type=Path, metavar="FILE", help="write it as HTML to FILE")
    add_json_flag(report)
    report.set_defaults(handler=handle_report)


def _add_source(parser: argparse.ArgumentParser) -> None:
    from sambatune.cli.fleet import add_fleet_source

    # A resume takes the hosts from the rollout's record unless they are given.
    add_fleet_source(parser, required=False)
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--known-hosts",
        metavar="FILE",
        type=Path,
        help="trust only the host keys in this file (default: ~/.ssh/known_hosts and SambaTune's own); "
        "an unknown key is refused: survey the fleet first",
    )


def _source(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "inventory": str(args.inventory.resolve()) if args.inventory else None,
        "ssh_config": str(args.ssh_config.resolve()) if args.ssh_config else None,
        "hosts": args.hosts,
        "limit": args.limit,
        "known_hosts": str(args.known_hosts.resolve()) if args.known_hosts else None,
    }


def _fleet(source: dict[str, Any], args: argparse.Namespace) -> Fleet:
    from sambatune.cli.fleet import fleet_from_args
    from sambatune.errors import InvalidInput

    if not (source.get("inventory") or source.get("ssh_config") or source.get("hosts")):
        raise InvalidInput("Which hosts? Give --inventory, --ssh-config or --hosts.")
    return fleet_from_args(
        argparse.Namespace(
            inventory=Path(source["inventory"]) if source.get("inventory") else None,
            ssh_config=Path(source["ssh_config"]) if source.get("ssh_config") else None,
            hosts=source.get("hosts"),
            limit=source.get("limit"),
            ask_vault_pass=args.ask_vault_pass,
            vault_password_file=args.vault_password_file,
        )
    )


def _connector(fleet: Fleet, known_hosts: str | None) -> Connector:
    from sambatune.fleet.live import connect

    def open_host(host: FleetHost) -> Any:
        return connect(
            host, known_hosts=Path(known_hosts) if known_hosts else None, ssh_config=fleet.ssh_config
        )

    return open_host


def _progress(args: argparse.Namespace) -> Any:
    lock = threading.Lock()

    def show(event: RolloutEvent) -> None:
        from sambatune.fleet.rollout_store import now_iso

        where = f"{event.host}: " if event.host else ""
        with lock:
            print(
                f"{now_iso()[11:19]} {where}{event.what}" + (f": {event.message}" if event.message else ""),
                file=sys.stderr,
                flush=True,
            )

    return None if args.json else show


def handle_apply(args: argparse.Namespace) -> int:
    from sambatune.cancellation import CancelToken
    from sambatune.errors import InvalidInput
    from sambatune.fleet.change import parse_edit
    from sambatune.fleet.rollout import MeasureLevel, Rollout, RolloutOptions, plan_rollout, start_rollout
    from sambatune.fleet.rollout_store import RolloutStore

    store = RolloutStore()
    cancel = CancelToken()
    if args.resume is not None:
        if args.set or args.unset:
            raise InvalidInput("A resumed rollout keeps its change: leave out --set and --unset.")
        record = store.load(args.resume)
        source = _source(args) if (args.inventory or args.ssh_config or args.hosts) else record.source
        fleet = _fleet(source, args)
        rollout = Rollout(
            record,
            {h.name: h for h in fleet},
            _connector(fleet, source.get("known_hosts")),
            store,
            on_event=_progress(args),
            cancel=cancel,
        )
        with ctrl_c_cancels(cancel, STOPPING_ROLLOUT):
            record = rollout.run()
        return _finish(args, record)

    edits = [parse_edit(text) for text in args.set] + [parse_edit(text, unset=True) for text in args.unset]
    source = _source(args)
    fleet = _fleet(source, args)
    if not fleet.hosts:
        raise InvalidInput("No hosts to work on.")
    options = RolloutOptions(
        canary=args.canary,
        wave=args.wave,
        allow_restart=args.allow_restart,
        skip_unreachable=args.skip_unreachable,
        measure=MeasureLevel(args.measure),
        share=args.share,
    )
    connector = _connector(fleet, source.get("known_hosts"))
    plan = plan_rollout(fleet.hosts, edits, options, connector=connector, cancel=cancel)
    if not args.yes:
        return _print_plan(args, plan)
    if not args.json:
        print(_plan_text(plan), file=sys.stderr)
    with ctrl_c_cancels(cancel, STOPPING_ROLLOUT):
        record = start_rollout(
            plan,
            edits,
            options,
            source,
            {h.name: h for h in fleet},
            connector,
            store,
            on_event=_progress(args),
            cancel=cancel,
        )
    return _finish(args, record)


def _exit_status(record: RolloutRecord) -> int:
    from sambatune.fleet.rollout_store import HostState, RolloutStatus

    if record.status is RolloutStatus.DONE:
        return EXIT_LEFT_OUT if any(h.state is HostState.LEFT_OUT for h in record.hosts) else 0
    if record.status in (RolloutStatus.INTERRUPTED, RolloutStatus.RUNNING):
        return EXIT_INTERRUPTED
    return EXIT_HALTED


def _finish(args: argparse.Namespace, record: RolloutRecord) -> int:
    from sambatune.cli.output import print_json
    from sambatune.fleet.rollout_report import report_text

    if args.json:
        print_json({**record.to_json(with_bytes=False), "exit_status": _exit_status(record)})
    else:
        print(report_text(record))
        if _exit_status(record) == EXIT_INTERRUPTED:
            print(f"Continue it with: sambatune fleet apply --resume {record.id} --yes")
    return _exit_status(record)


def _plan_text(plan: RolloutPlan) -> str:
    from sambatune.fleet.rollout_report import activation_text, table

    rows: list[tuple[str, ...]] = [("HOST", "ROLE", "PLAN", "ACTIVATION", "A RESTART ENDS", "DIFF")]
    for host in plan.hosts:
        role = "-" if host.wave is None else "canary" if host.wave == 0 else f"wave {host.wave}"
        refusal = plan.refusals.get(host.name)
        what = "refused" if refusal else host.state.value if host.wave is None else "change"
        added = sum(
            1 for line in host.diff.splitlines() if line.startswith("+") and not line.startswith("+++")
        )
        removed = sum(
            1 for line in host.diff.splitlines() if line.startswith("-") and not line.startswith("---")
        )
        rows.append(
            (
                host.name,
                role,
                what,
                activation_text(host),
                (host.clients or "-") if host.restart_reasons else "-",
                f"+{added} -{removed}" if host.diff else "-",
            )
        )
    lines = [table(rows)]
    for name, why in plan.refusals.items():
        lines.append(f"{name}: {why}")
    return "\n".join(lines)


def _print_plan(args: argparse.Namespace, plan: RolloutPlan) -> int:
    from sambatune.cli.output import print_json

    if args.json:
        print_json({"status": "planned", **plan.to_json()})
    else:
        for host in plan.hosts:
            if host.diff:
                print(host.diff)
        print(_plan_text(plan))
        if plan.refusals:
            print("The rollout would be refused: nothing was changed.")
        else:
            print("Nothing was changed. Run again with --yes to carry it out.")
    return EXIT_HALTED if plan.refusals else 0


def handle_rollouts(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.fleet.rollout_report import table
    from sambatune.fleet.rollout_store import RolloutStore

    summaries = RolloutStore().summaries()
    if args.json:
        print_json({"rollouts": [s.to_json() for s in summaries]})
        return 0
    if not summaries:
        print("No rollouts on record.")
        return 0
    rows: list[tuple[str, ...]] = [("ID", "STATUS", "STARTED", "HOSTS", "APPLIED", "CHANGE")]
    rows += [
        (str(s.id), s.status, s.created_at, str(s.hosts), str(s.applied), "; ".join(s.edits))
        for s in summaries
    ]
    print(table(rows))
    return 0


def handle_report(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.fleet.rollout_report import report_html, report_text
    from sambatune.fleet.rollout_store import RolloutStore

    record = RolloutStore().load_shown(args.rollout_id)
    if args.output is not None:
        args.output.write_text(report_html(record), encoding="utf-8")
        if not args.json:
            print(f"Wrote {args.output}")
    if args.json:
        print_json(record.to_json(with_bytes=False))
    elif args.output is None:
        print(report_text(record))
    return 0
