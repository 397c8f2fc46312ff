"""``sambatune advise``: what to change on a server, and why, one finding at a time."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag

LOCAL_WINDOW = "local"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "advise",
        help="judge a server's smb.conf, survey and measurements: findings, each with the "
        "one change it proposes",
    )
    add_connection_options(parser)
    parser.add_argument(
        "--config-path", metavar="PATH", help="the smb.conf to judge (default: the one smbd uses)"
    )
    parser.add_argument(
        "--sudo", action="store_true", help="read the file with sudo (default: only when it is not readable)"
    )
    measured = parser.add_argument_group(
        "measurements (optional; the benchmarks on record that ran with this smb.conf are "
        "read too; without any, those judgements say what to measure)"
    )
    measured.add_argument(
        "--ignore-recorded",
        action="store_true",
        help="judge without the benchmark results stored on this computer",
    )
    measured.add_argument(
        "--measurements",
        type=Path,
        metavar="FILE.json",
        help="figures from the benchmarks (see sambatune.advisor.measurements)",
    )
    measured.add_argument("--bandwidth", help="bandwidth between clients and server, e.g. 1gbit")
    measured.add_argument("--rtt", help="round trip between clients and server, e.g. 0.4ms")
    measured.add_argument(
        "--client-window",
        metavar="SIZE|local",
        help=f"the client's largest TCP receive window, e.g. 64KiB; '{LOCAL_WINDOW}' reads this computer's",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle)


def measurements_from_args(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from sambatune.advisor.client_window import this_computer_window
    from sambatune.advisor.measurements import ClientWindow, Measurements, NetworkPath
    from sambatune.errors import InvalidInput
    from sambatune.quantities import parse_bandwidth, parse_duration, parse_size

    measurements = Measurements()
    if args.measurements is not None:
        try:
            data = json.loads(args.measurements.read_text(encoding="utf-8"))
        except OSError as error:
            raise InvalidInput(f"Cannot read {args.measurements}: {error.strerror}.") from error
        except ValueError as error:
            raise InvalidInput(f"{args.measurements} is not JSON: {error}.") from error
        measurements = Measurements.from_json(data)
    if (args.bandwidth is None) != (args.rtt is None):
        raise InvalidInput("Give both --bandwidth and --rtt: the window the path needs is their product.")
    if args.bandwidth is not None:
        path = NetworkPath(
            parse_bandwidth(args.bandwidth),
            parse_duration(args.rtt),
            "given with --bandwidth",
            "given with --rtt",
        )
        measurements = replace(measurements, path=path)
    if args.client_window == LOCAL_WINDOW:
        window = this_computer_window()
        if window is None:
            raise InvalidInput(
                "This computer's receive window cannot be read here; give it "
                "as a size (--client-window 64KiB)."
            )
        measurements = replace(measurements, client_window=window)
    elif args.client_window is not None:
        measurements = replace(
            measurements,
            client_window=ClientWindow(parse_size(args.client_window), "given with --client-window"),
        )
    return measurements


def handle(args: argparse.Namespace) -> int:
    from sambatune.advisor.advice import advise
    from sambatune.advisor.gather import gather_inputs
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.connect import connect_from_args
    from sambatune.cli.output import TerminalProgress, print_json

    measurements = measurements_from_args(args)
    recorded = None if args.ignore_recorded else ResultsDatabase()
    progress = TerminalProgress()
    progress.update(None, "connecting...")
    transport = connect_from_args(args)
    try:
        progress.update(None, "surveying the server and reading smb.conf...")
        inputs = gather_inputs(
            transport,
            config_path=args.config_path,
            sudo=True if args.sudo else None,
            measurements=measurements,
            recorded=recorded,
            on_event=lambda e: progress.update(e.data.get("fraction"), e.data.get("message", "")),
        )
    finally:
        progress.done()
        transport.close()
    advice = advise(inputs)
    if args.json:
        print_json(advice.to_json())
    else:
        print(format_advice(advice.to_json()))
    return 0


_HEADINGS = {
    "problem": "PROBLEMS",
    "warning": "WARNINGS",
    "suggestion": "SUGGESTIONS",
    "info": "FOR INFORMATION",
}


_NOUNS = {"problem": "problem", "warning": "warning", "suggestion": "suggestion", "info": "note"}


def _plural(count: int, severity: str) -> str:
    return f"{count} {_NOUNS[severity]}{'' if count == 1 else 's'}"


def _change_text(change: dict[str, Any] | None) -> str:
    if change is None:
        return "none yet: measure first"
    from sambatune.advisor.findings import describe_change

    where = {"smb.conf": "", "client": "on the client: "}.get(change["kind"], "on the server: ")
    return where + describe_change(change)


def format_advice(data: dict[str, Any], width: int | None = None) -> str:
    """The advice as a terminal report, grouped by severity."""
    width = width or min(100, shutil.get_terminal_size((100, 24)).columns)
    counts = data["counts"]
    summary = ", ".join(_plural(counts[s], s) for s in _HEADINGS if counts.get(s))
    lines = [f"Advice for {data['target']}: {data['judged_as']}", f"smb.conf: {data['config_path']}"]
    recorded = data.get("recorded_sessions") or []
    if recorded:
        lines.append(
            "Measured: stored benchmark session"
            f"{'' if len(recorded) == 1 else 's'} "
            f"{', '.join(str(s) for s in recorded)}, run with this smb.conf"
        )
    lines.append(summary or "No findings.")
    label_width = 9
    for severity, heading in _HEADINGS.items():
        findings = [f for f in data["findings"] if f["severity"] == severity]
        if not findings:
            continue
        lines += ["", heading]
        for finding in findings:
            # Shares are named in brackets; NICs, the client and the like are in the title.
            sections = {e.get("section") for e in finding["evidence"]}
            subject = finding["subject"]
            where = f" [{subject}]" if subject != "global" and subject in sections else ""
            lines.append(f"  {finding['title']}{where}")
            lines.append(f"    ({finding['id']})")
            rows = [
                ("saw", "; ".join(e["text"] for e in finding["evidence"])),
                ("change", _change_text(finding["change"])),
                ("effect", finding["expected_effect"]),
                ("basis", finding["effect_source"]),
                ("risk", finding["risk"]),
            ]
            if finding["applies_to_version"]:
                rows.append(("version", finding["applies_to_version"]))
            for label, text in rows:
                wrapped = textwrap.wrap(text, max(40, width - 4 - label_width)) or [""]
                lines.append(f"    {label:<{label_width}}{wrapped[0]}")
                lines += [f"    {'':<{label_width}}{rest}" for rest in wrapped[1:]]
    return "\n".join(lines)
