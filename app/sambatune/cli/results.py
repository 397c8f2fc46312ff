"""``sambatune results list|show|compare|export``: the benchmark sessions kept on this computer.

sambatune results list [--server LABEL] [--test net] [--json]
sambatune results show 12 [--config] [--json]
sambatune results compare 12 15 [--series download] [--json]
sambatune results export 12 15 [--samples] [-o runs.csv]
sambatune results export 12 15 --format html -o report.html
sambatune results bottleneck fileserver [--direction write] [--session 12 --session 15] [--json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sambatune.cli.output import add_json_flag, data_stdout


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "results",
        help="benchmark sessions kept on this computer: list, show, compare, export, bottleneck",
    )
    verbs = parser.add_subparsers(dest="results_verb", metavar="ACTION", required=True)

    listing = verbs.add_parser("list", help="sessions, newest first")
    listing.add_argument("--server", help="only this server (its label or hostname)")
    listing.add_argument("--test", help="only this test (net, disk, smb, dirscale, sockbuf)")
    listing.add_argument("--limit", type=int, help="at most this many sessions")
    add_json_flag(listing)
    listing.set_defaults(handler=handle_list)

    show = verbs.add_parser("show", help="one session: every run, mean, deviation, notes")
    show.add_argument("session", type=int, metavar="SESSION")
    show.add_argument("--config", action="store_true", help="also print the recorded smb.conf")
    add_json_flag(show)
    show.set_defaults(handler=handle_show)

    compare = verbs.add_parser(
        "compare", help="before and after: significance test and what changed in smb.conf"
    )
    compare.add_argument("before", type=int, metavar="BEFORE")
    compare.add_argument("after", type=int, metavar="AFTER")
    compare.add_argument("--series", help="which series (default: the session's main one)")
    add_json_flag(compare)
    compare.set_defaults(handler=handle_compare)

    export = verbs.add_parser(
        "export", help="sessions as CSV (one row per run or per sample) or as an HTML report"
    )
    export.add_argument("sessions", type=int, nargs="+", metavar="SESSION")
    export.add_argument(
        "--format",
        choices=("csv", "html"),
        default="csv",
        help="csv (default), or html: one self-contained file with plots, the "
        "per-run tables, the comparison, the bottleneck table and each smb.conf",
    )
    export.add_argument("--samples", action="store_true", help="CSV: the samples instead of the runs")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of stdout")
    add_json_flag(export)
    export.set_defaults(handler=handle_export)

    bottleneck = verbs.add_parser(
        "bottleneck",
        help="which layer limits a server (disk, network, CPU, Samba), from its sessions on record",
        description="The Bottleneck tab's table from the server's newest sessions: by default "
        "those run with the newest session's smb.conf, in the direction SMB does worst in.",
    )
    bottleneck.add_argument("server", metavar="SERVER", help="the server's label or hostname")
    bottleneck.add_argument(
        "--direction", choices=("read", "write"), help="clients read or write (default: the worse one)"
    )
    bottleneck.add_argument(
        "--session",
        type=int,
        action="append",
        metavar="ID",
        help="combine exactly these sessions (repeat), even with different smb.conf files",
    )
    add_json_flag(bottleneck)
    bottleneck.set_defaults(handler=handle_bottleneck)


def handle_list(args: argparse.Namespace) -> int:
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.output import print_json
    from sambatune.units import format_figure
    from sambatune.visible_text import one_line

    sessions = ResultsDatabase().sessions(server=args.server, test=args.test, limit=args.limit)
    if args.json:
        print_json({"ok": True, "sessions": [s.to_json() for s in sessions]})
        return 0
    if not sessions:
        print("No benchmark sessions yet. Run one with: sambatune bench net (or disk, smb, ...)")
        return 0
    rows = [("ID", "Started", "Test", "Server", "Mean", "Runs", "Note")]
    for s in sessions:
        mean = format_figure(s.mean, s.unit, missing="-")
        rows.append((str(s.id), s.started_at, s.test, s.server[:40], mean, str(s.runs), s.note))
    # Each column as wide as its widest cell; numbers to the right.
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    right = {0, 4, 5}
    for row in rows:
        sized = enumerate(zip(row[:-1], widths, strict=True))
        cells = [cell.rjust(width) if i in right else cell.ljust(width) for i, (cell, width) in sized]
        print(one_line("  ".join([*cells, row[-1]]).rstrip()))
    return 0


def handle_show(args: argparse.Namespace) -> int:
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.bench_tables import format_result
    from sambatune.cli.output import print_json

    session = ResultsDatabase().load(args.session)
    if args.json:
        print_json(session.to_json(with_config=args.config))
        return 0
    heading = (
        f"Session {session.id}: {session.result.test} test on {session.server} "
        f"({session.result.started_at})" + (f" - {session.note}" if session.note else "")
    )
    print(format_result(session.result, heading))
    print(
        f"smb.conf: {session.smb_conf_path or 'not recorded'}"
        + (f", {len(session.smb_conf)} bytes" if session.smb_conf is not None else "")
        + (f"; {session.samba_version}" if session.samba_version else "")
    )
    if args.config and session.smb_conf is not None:
        print()
        sys.stdout.write(session.smb_conf.decode("utf-8", "replace"))
    return 0


def handle_compare(args: argparse.Namespace) -> int:
    from sambatune.bench.comparison import compare_sessions
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.output import print_json

    database = ResultsDatabase()
    result = compare_sessions(database.load(args.before), database.load(args.after), args.series)
    if args.json:
        print_json({"ok": True, **result.to_json()})
        return 0
    print(
        f"{result.after.result.test} test, series {result.series}: "
        f"session {result.before.id} (before) vs {result.after.id} (after)"
    )
    print(result.comparison.sentence)
    if result.changed_lines:
        print("\nChanged in smb.conf:")
        for line in result.changed_lines:
            print(f"  {line}")
    elif result.before.smb_conf is not None and result.after.smb_conf is not None:
        print("\nsmb.conf was the same in both sessions.")
    for warning in result.warnings:
        print(f"\nWarning: {warning}")
    return 0


def handle_export(args: argparse.Namespace) -> int:
    from sambatune.bench.csv_export import write_runs_csv, write_samples_csv
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.output import print_json

    database = ResultsDatabase()
    sessions = [database.load(number) for number in args.sessions]
    if args.format == "html":
        return _export_html(args, sessions)
    write = write_samples_csv if args.samples else write_runs_csv
    if args.output is None:
        write(sessions, data_stdout())
        return 0
    with open(args.output, "w", newline="", encoding="utf-8") as handle:
        rows = write(sessions, handle)
    if args.json:
        print_json({"ok": True, "file": str(args.output), "rows": rows})
    else:
        print(f"Wrote {rows} rows to {args.output}", file=sys.stderr)
    return 0


def _export_html(args: argparse.Namespace, sessions: list[Any]) -> int:
    from sambatune.bench.html_report import render_report
    from sambatune.cli.output import print_json

    text = render_report(sessions)
    if args.output is None:
        data_stdout().write(text)
        return 0
    args.output.write_text(text, encoding="utf-8")
    if args.json:
        print_json(
            {
                "ok": True,
                "file": str(args.output),
                "bytes": len(text.encode("utf-8")),
                "sessions": [s.id for s in sessions],
            }
        )
    else:
        print(f"Wrote the report of {len(sessions)} session(s) to {args.output}", file=sys.stderr)
    return 0


#: How many of a server's newest sessions the bottleneck table looks at.
BOTTLENECK_SESSIONS = 50


def handle_bottleneck(args: argparse.Namespace) -> int:
    from sambatune.bench.bottleneck import percent_digits, row_mark
    from sambatune.bench.bottleneck_inputs import LAYER_TESTS, figures_from_sessions
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.cli.output import print_json
    from sambatune.errors import InvalidInput
    from sambatune.visible_text import one_line

    database = ResultsDatabase()
    summaries = [
        s for s in database.sessions(server=args.server, limit=BOTTLENECK_SESSIONS) if s.test in LAYER_TESTS
    ]
    if args.session:
        missing = sorted(set(args.session) - {s.id for s in summaries})
        if missing:
            raise InvalidInput(
                f"Session {', '.join(map(str, missing))} is not among {args.server}'s "
                f"{BOTTLENECK_SESSIONS} newest disk, network or SMB sessions.",
                "List them with: sambatune results list --server " + args.server,
            )
    if not summaries:
        raise InvalidInput(
            f"No disk, network or SMB sessions of {args.server} are on record.",
            "Measure first: sambatune bench disk, bench net, bench smb-client (or the GUI's Benchmarks).",
        )
    sessions = [database.load(s.id) for s in summaries]
    figures = figures_from_sessions(sessions, args.direction, args.session)
    report = figures.report()
    if args.json:
        print_json({"ok": True, "server": args.server, "figures": figures.to_json(), **report.to_json()})
        return 0
    print(f"Bottleneck of {args.server}: clients {report.direction} ({report.workload})")
    rows = [("Layer", "MB/s", "Mbit/s", "% of link", "Session", "")]
    for row in report.rows:
        percent = row.percent_of_link
        mark = row_mark(report, row)
        mark = "<- limits" if mark == "limits" else mark
        rows.append(
            (
                row.name,
                f"{row.ceiling_mb_per_s:,.1f}",
                f"{row.ceiling_mbit_per_s:,.0f}",
                "-" if percent is None else f"{percent:,.{percent_digits(percent)}f}",
                figures.describe_source(row.name),
                mark,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for cells in rows:
        line = "  ".join(
            c.rjust(w) if i in (1, 2, 3) else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells[:-1], widths, strict=True))
        )
        print(one_line(f"{line}  {cells[-1]}".rstrip()))
    if figures.basis():
        print(one_line(figures.basis()))
    print(one_line(f"Limit: {report.limiting}. {report.reason}"))
    if report.smb_vs_raw_meaning:
        print(one_line(report.smb_vs_raw_meaning))
    for line in figures.left_out():
        print(one_line(line))
    for advice in report.advice:
        print(one_line(f"- {advice}"))
    return 0
