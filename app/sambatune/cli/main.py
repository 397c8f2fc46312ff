"""Entry point of the ``sambatune`` command.

Kept light on purpose: only argparse is imported up front, and each verb imports
what it needs when it runs, so ``sambatune conf effective`` starts fast and no
non-GUI verb ever imports Qt.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module registers its verbs with ``register(subparsers)``.
VERB_MODULES = (
    "sambatune.cli.survey",
    "sambatune.cli.client",
    "sambatune.cli.bench",
    "sambatune.cli.results",
)


def build_parser() -> argparse.ArgumentParser:
    from sambatune import __version__

    parser = argparse.ArgumentParser(
        prog="sambatune",
        description="Measure and tune Samba file servers and the computers that use them. "
        "Without a verb, the desktop app starts.",
    )
    parser.add_argument("--version", action="version", version=f"sambatune {__version__}")
    parser.add_argument(
        "--self-check", action="store_true",
        help="check that this installation is complete (agents, resources, libraries)",
    )
    parser.add_argument(
        "--gui", action="store_true",
        help="with --self-check: also open the main window offscreen and close it",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in VERB_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.self_check:
        from sambatune.cli.selfcheck import run_self_check

        return run_self_check(json_output=args.json, gui=args.gui)
    if args.verb is None:
        from sambatune.ui.app import main as gui_main

        return gui_main([])
    from sambatune.cli.output import run_verb

    return run_verb(args)


if __name__ == "__main__":
    raise SystemExit(main())
