"""``sambatune wizard status|report``: the tuning wizards kept on this computer.

    sambatune wizard status [--server LABEL] [--json]      every wizard, newest first
    sambatune wizard status 3 [--json]                      one wizard: where it is, each step
    sambatune wizard report 3 [-o wizard-3.html] [--json]   its self-contained HTML report

The wizard itself is driven from the GUI (Server > Tuning wizard); these read what it
recorded in the results database.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sambatune.cli.output import add_json_flag, data_stdout


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "wizard", help="tuning wizards kept on this computer: where each is, and its report")
    verbs = parser.add_subparsers(dest="wizard_verb", metavar="ACTION", required=True)

    status = verbs.add_parser("status", help="every wizard, or one wizard's steps")
    status.add_argument("wizard", type=int, nargs="?", metavar="WIZARD")
    status.add_argument("--server", help="only this server (its label)")
    status.add_argument("--unfinished", action="store_true", help="only wizards that can resume")
    add_json_flag(status)
    status.set_defaults(handler=handle_status)

    report = verbs.add_parser("report", help="one wizard as a self-contained HTML report")
    report.add_argument("wizard", type=int, metavar="WIZARD")
    report.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write here instead of stdout")
    add_json_flag(report)
    report.set_defaults(handler=handle_report)


def handle_status(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.wizard.machine import STEP_TITLES, TuningWizard
    from sambatune.wizard.store import WizardStore

    store = WizardStore()
    if args.wizard is None:
        found = store.summaries(server=args.server, unfinished=args.unfinished)
        if args.json:
            print_json({"ok": True, "wizards": [w.to_json() for w in found]})
            return 0
        for item in found:
            state = "finished" if item.finished_at else f"after '{item.last_step}'"
            print(f"{item.id:>4}  {item.created_at}  {item.server}  {state}")
        if not found:
            print("No wizards yet: start one in the GUI (Server > Tuning wizard).")
        return 0
    wizard = TuningWizard.resume(store, args.wizard)
    if args.json:
        print_json({"ok": True, **wizard.record.to_json(), "stage": wizard.stage,
                    "changes_tried": wizard.round})
        return 0
    record = wizard.record
    print(f"Wizard {record.id} on {record.server} ({record.config_path or 'smb.conf unknown'})")
    print(f"Next step: {STEP_TITLES[wizard.stage]}")
    for step in record.steps:
        print(f"  {step.position:>3}. {step.finished_at}  {STEP_TITLES[step.step]}")
    return 0


def handle_report(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.store import WizardStore

    text = TuningWizard.resume(WizardStore(), args.wizard).report_html()
    if args.output is None:
        data_stdout().write(text)
        return 0
    args.output.write_text(text, encoding="utf-8")
    if args.json:
        print_json({"ok": True, "file": str(args.output), "bytes": len(text.encode("utf-8"))})
    else:
        print(f"Wrote the report of wizard {args.wizard} to {args.output}", file=sys.stderr)
    return 0
