"""``sambatune survey``: what a server is, as JSON or as a short report."""

from __future__ import annotations

import argparse
from typing import Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "survey", help="connect and report what the server is (OS, NICs, Samba, shares, TCP)"
    )
    add_connection_options(parser)
    parser.add_argument("--config-path", help="the smb.conf to report on (default: detected)")
    add_json_flag(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from sambatune.cli.connect import connect_from_args
    from sambatune.cli.output import TerminalProgress, print_json
    from sambatune.remote.survey import run_survey

    progress = TerminalProgress()
    progress.update(None, "connecting...")
    transport = connect_from_args(args)
    try:
        survey = run_survey(
            transport,
            config_path=args.config_path,
            on_event=lambda e: progress.update(e.data.get("fraction"), e.data.get("message", "")),
        )
    finally:
        progress.done()
        transport.close()
    if args.json:
        print_json(survey.to_json())
    else:
        print(format_survey(survey.to_json()))
    return 0


def _running_words(samba: dict[str, Any]) -> str:
    from sambatune.remote.survey import untrusted_serving

    if samba.get("running"):
        return "running"
    return "served by an UNTRUSTED smbd (see below)" if untrusted_serving(samba) else "NOT running"


def format_survey(data: dict[str, Any]) -> str:
    from sambatune.units import format_bytes
    from sambatune.visible_text import one_line

    samba = data.get("samba") or {}
    cpu = data.get("cpu") or {}
    memory = data.get("memory") or {}
    lines = [
        f"{data['hostname']} ({data['target']})",
        f"  OS       {data['os']['distribution']}, kernel {data['os']['kernel']}",
        f"  CPU      {cpu.get('available')} x {cpu.get('model')}",
        f"  Memory   {format_bytes(memory.get('total_bytes'))}"
        f" ({format_bytes(memory.get('available_bytes'))} available)",
        f"  Samba    {samba.get('version_text') or 'not installed'}, {_running_words(samba)}",
        f"  smb.conf {samba.get('config_path') or 'not chosen'} ({samba.get('config_source')})",
    ]
    for instance in samba.get("instances") or []:
        ports = ", ".join(str(p["port"]) for p in instance.get("listening") or []) or "none"
        mark = "managed" if instance.get("managed") else "other"
        lines.append(f"  smbd     pid {instance['pid']} ({mark}): {instance.get('config')}, TCP {ports}")
    for process in samba.get("untrusted_processes") or []:
        lines.append(
            f"  smbd     pid {process.get('pid')} (UNTRUSTED, uid {process.get('uid')}): "
            f"{process.get('exe') or '?'}, {process.get('config') or '?'}"
        )
    for nic in data.get("nics") or []:
        speed = f"{nic['speed_mbit']} Mbit/s" if nic.get("speed_mbit") else "speed unknown"
        lines.append(
            f"  NIC      {nic['name']}: {nic['state']}, MTU {nic['mtu']}, {speed}, "
            f"{' '.join(nic.get('addresses') or [])}"
        )
    for share in samba.get("shares") or []:
        fs = share.get("filesystem") or {}
        free = f", {format_bytes(fs.get('free_bytes'))} free" if fs.get("exists") else ""
        lines.append(f"  Share    [{share['name']}] {share['path']}{free}")
    audit = data.get("client_audit")
    if audit:
        multichannel = {True: "on", False: "off"}.get(audit.get("multichannel"), "unknown")
        offered = ", ".join(i["name"] for i in audit.get("interfaces") or []) or "none"
        lines.append(f"  Clients  multichannel {multichannel}, offered on {offered}")
        for session in audit.get("sessions") or []:
            flags = f"  [{', '.join(session['flags'])}]" if session.get("flags") else ""
            channels = session.get("channels")
            lines.append(
                f"  Session  {session.get('machine')} as {session.get('user')}: {session.get('dialect')}, "
                f"signing {session.get('signing') or 'none'}, "
                f"encryption {session.get('encryption') or 'none'}, "
                f"{channels if channels is not None else '?'} channel(s){flags}"
            )
        for note in audit.get("notes") or []:
            lines.append(f"  Clients  {note}")
    for note in data.get("notes") or []:
        lines.append(f"  {note['severity'].upper():8} {note['subject']}: {note['message']}")
    # Nearly every value above is the server's text (a hostname, a path from a command
    # line, a client's machine name): each line stays one line, whatever it holds.
    return "\n".join(one_line(line) for line in lines)
