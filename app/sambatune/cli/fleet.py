"""``sambatune fleet ...``: many servers at once (issue 20).

The servers come from an Ansible inventory (``--inventory``), the hosts of an ssh
config (``--ssh-config``) or a list (``--hosts user@h:p,...``), narrowed by Ansible's
``--limit`` patterns. Each sub-verb has one ``add_*_parser`` function listed in
``SUBVERB_PARSERS``: a new verb adds its function there.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.cli.output import add_json_flag
from sambatune.visible_text import one_line

if TYPE_CHECKING:
    from sambatune.fleet.ansible_inventory import VaultPasswords
    from sambatune.fleet.inventory import Fleet
    from sambatune.fleet.survey import FleetSurvey, HostSurvey


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fleet",
        help="many servers at once, from an Ansible inventory, an ssh config or a list",
        description="Work on many Samba servers at once. Hosts come from --inventory (Ansible, "
        "INI or YAML), --ssh-config or --hosts, narrowed with --limit as in Ansible.",
    )
    verbs = parser.add_subparsers(dest="fleet_verb", metavar="SUBVERB")
    verbs.required = True
    for add_parser in SUBVERB_PARSERS:
        add_parser(verbs)


def add_fleet_source(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Where the hosts come from, and which of them: every fleet verb takes these (a
    resumed rollout without them takes its record's)."""
    group = parser.add_argument_group("hosts (one of --inventory, --ssh-config, --hosts)")
    source = group.add_mutually_exclusive_group(required=required)
    source.add_argument(
        "--inventory",
        "-i",
        metavar="INV",
        type=Path,
        help="an Ansible inventory: a file or folder, with its group_vars/ and host_vars/, read by Ansible",
    )
    source.add_argument(
        "--ssh-config",
        metavar="FILE",
        type=Path,
        help="every Host of this ssh config that names one host (no wildcards)",
    )
    source.add_argument("--hosts", metavar="LIST", help="user@host:port,... typed by hand")
    group.add_argument(
        "--limit",
        "-l",
        metavar="PATTERN",
        help="Ansible's host patterns: names, groups, 'a:b', '!x', '&g', '*' globs, '@file'",
    )
    vault = parser.add_argument_group(
        "vault (an inventory's encrypted variables; ANSIBLE_VAULT_PASSWORD_FILE is read too)"
    )
    vault.add_argument("--ask-vault-pass", action="store_true", help="ask for the vault password")
    vault.add_argument(
        "--vault-password-file",
        metavar="FILE",
        type=Path,
        action="append",
        default=[],
        help="the vault password, or a script that prints it (as Ansible runs it); repeatable",
    )


def add_fleet_connection(parser: argparse.ArgumentParser) -> None:
    """How every host of the fleet is reached (the inventory says the rest)."""
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--known-hosts",
        metavar="FILE",
        type=Path,
        help="use this known_hosts file instead of ~/.ssh/known_hosts and SambaTune's own",
    )
    group.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and remember host keys never seen before (a changed key is always refused)",
    )


def fleet_from_args(args: argparse.Namespace) -> Fleet:
    from sambatune.fleet.ansible_inventory import load_inventory
    from sambatune.fleet.inventory import fleet_by_hand, fleet_from_ssh_config

    if args.inventory is not None:
        fleet = load_inventory(args.inventory, vault_passwords(args))
    elif args.ssh_config is not None:
        fleet = fleet_from_ssh_config(args.ssh_config)
    else:
        fleet = fleet_by_hand(args.hosts.split(","))
    return fleet.select(args.limit)


def vault_passwords(args: argparse.Namespace) -> VaultPasswords:
    """The vault secrets the command line gives; a typed password is asked for once."""
    import getpass

    from sambatune.fleet.ansible_inventory import VaultPasswords

    password = getpass.getpass("Vault password: ") if args.ask_vault_pass else None
    return VaultPasswords(password=password, files=tuple(args.vault_password_file))


# --- fleet hosts -----------------------------------------------------------------------


def add_hosts_parser(verbs: Any) -> None:
    parser = verbs.add_parser(
        "hosts", help="the hosts a fleet verb would work on, with their resolved variables"
    )
    add_fleet_source(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=handle_hosts)


def handle_hosts(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json

    fleet = fleet_from_args(args)
    if args.json:
        print_json({**fleet.to_json(), "limit": args.limit})
        return 0
    rows = [("HOST", "CONNECT AS", "GROUPS", "SAMBA_CONF")]
    rows += [
        (host.name, host.destination, ",".join(host.groups) or "-", host.samba_conf or "(detected)")
        for host in fleet
    ]
    print(_table(rows))
    print(f"{len(fleet)} host{'' if len(fleet) == 1 else 's'} from {fleet.source}")
    return 0


# --- fleet survey ----------------------------------------------------------------------


def add_survey_parser(verbs: Any) -> None:
    from sambatune.fleet.survey import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT

    parser = verbs.add_parser(
        "survey",
        help="survey every server in parallel: Samba version, instances, smb.conf digest, NICs, findings",
        description="Exit status 0 when every host was surveyed, 1 when some were not "
        "(unreachable, refused, timed out or failed: the summary names them).",
    )
    add_fleet_source(parser)
    add_fleet_connection(parser)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"hosts surveyed at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="a host that answers nothing for this long (connecting included) is failed; each "
        f"answer starts the time again (default {DEFAULT_TIMEOUT:g})",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle_survey)


def handle_survey(args: argparse.Namespace) -> int:
    from sambatune.cancellation import CancelToken
    from sambatune.cli.output import print_json
    from sambatune.fleet.survey import FleetPrompts, survey_fleet

    fleet = fleet_from_args(args)
    cancel = CancelToken()
    on_result = None if args.json else _printer(len(fleet))
    try:
        survey = survey_fleet(
            fleet,
            concurrency=args.concurrency,
            timeout=args.timeout,
            cancel=cancel,
            on_result=on_result,
            prompts=FleetPrompts(accept_new_host_key=args.accept_new_host_key),
            known_hosts=args.known_hosts,
        )
    except KeyboardInterrupt:
        cancel.cancel()  # close every connection: the workers end at once
        raise
    if args.json:
        print_json(survey.to_json())
    else:
        print()
        print(format_fleet_survey(survey))
    return 0 if all(r.status == "ok" for r in survey.results) else 1


def _printer(total: int) -> Callable[[HostSurvey], None]:
    """One line per host as it finishes (workers call this from their threads)."""
    lock = threading.Lock()
    done = [0]

    def show(result: HostSurvey) -> None:
        with lock:
            done[0] += 1
            print(one_line(f"[{done[0]:>{len(str(total))}}/{total}] {_host_line(result)}"), flush=True)

    return show


def _host_line(result: HostSurvey) -> str:
    from sambatune.fleet.survey import findings_words
    from sambatune.units import format_seconds

    head = f"{result.host.name}: {result.status}"
    if result.error is not None:
        return f"{head} after {format_seconds(result.seconds)}: {result.error.message}"
    parts = [f"Samba {result.samba_version or 'not installed'}", f"{len(result.instances)} smbd"]
    if result.untrusted:
        pids = ", ".join(str(p.get("pid")) for p in result.untrusted)
        parts.append(f"UNTRUSTED process(es) named smbd ignored: pid {pids}")
    if result.findings is not None:
        parts.append(findings_words(result.findings))
    elif result.advice_error is not None:
        parts.append(f"not judged: {result.advice_error.message}")
    return f"{head}, {', '.join(parts)} ({format_seconds(result.seconds)})"


def _nic_speeds(result: HostSurvey) -> str:
    speeds = [
        f"{nic['name']} {nic['speed_mbit']}M" if nic.get("speed_mbit") else f"{nic['name']} ?"
        for nic in result.nics
        if not nic.get("loopback") and not nic.get("virtual")
    ]
    return ", ".join(speeds) or "-"


def format_fleet_survey(survey: FleetSurvey) -> str:
    """The summary table after the per-host lines."""
    from sambatune.fleet.survey import findings_counts, summarize
    from sambatune.units import format_seconds

    rows = [("HOST", "STATUS", "SAMBA", "SMBD", "SMB.CONF SHA-256", "NICS", "P/W/S/I", "TIME")]
    for result in survey.results:
        judged = findings_counts(result.findings)
        managed = "managed" if result.managed_instance else "none managed"
        rows.append(
            (
                result.host.name,
                str(result.status),
                result.samba_version or "-",
                f"{len(result.instances)} ({managed})" if result.reachable and result.survey else "-",
                result.config_sha256[:16] if result.config_sha256 else "-",
                _nic_speeds(result) if result.survey else "-",
                judged,
                format_seconds(result.seconds),
            )
        )
    lines = [_table(rows)]
    lines.append(f"{summarize(survey.results)}; {format_seconds(survey.seconds)} in all")
    if survey.cancelled:
        lines.append("Cancelled: hosts not finished are marked cancelled.")
    digests = {r.config_sha256 for r in survey.results if r.config_sha256}
    if len(digests) > 1:
        lines.append(f"{len(digests)} different smb.conf files among the hosts surveyed.")
    return "\n".join(lines)


def _table(rows: Sequence[Sequence[str]]) -> str:
    rows = [[one_line(cell) for cell in row] for row in rows]  # a cell holds no line break
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


#: One function per sub-verb, each adding its parser to ``fleet``'s sub-verbs.
SUBVERB_PARSERS: list[Callable[[Any], None]] = [add_hosts_parser, add_survey_parser]


def add_apply_parsers(verbs: Any) -> None:
    """fleet apply|rollouts|report (the staged rollout), from their own module."""
    from sambatune.cli.fleet_apply import register_apply_verbs

    register_apply_verbs(verbs)


SUBVERB_PARSERS.append(add_apply_parsers)


def add_rollout_parsers(verbs: Any) -> None:
    """fleet drift|export|run (drift, and a change as an Ansible project), from their own module."""
    from sambatune.cli.fleet_rollout import register_rollout_verbs

    register_rollout_verbs(verbs)


SUBVERB_PARSERS.append(add_rollout_parsers)
