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
    "sambatune.cli.advise",
    "sambatune.cli.conf",
    "sambatune.cli.bench",
    "sambatune.cli.results",
    "sambatune.cli.wizard",
    "sambatune.cli.fleet",
)


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked for it."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from sambatune import __version__

        print(f"sambatune {__version__}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse builds a help formatter for every add_argument, and each one imports
    shutil and asks the terminal for its width; asking once makes the parser cheap."""

    _width: int | None = None

    def _get_formatter(self) -> argparse.HelpFormatter:
        if _Parser._width is None:
            import os

            try:
                columns = os.get_terminal_size(sys.stdout.fileno()).columns
            except (OSError, ValueError, AttributeError):
                columns = 80
            _Parser._width = int(os.environ.get("COLUMNS", columns)) - 2
        formatter: argparse.HelpFormatter = self.formatter_class(  # type: ignore[call-arg]
            prog=self.prog, width=_Parser._width
        )
        return formatter


def _remember_translations() -> None:
    """argparse looks its messages up through gettext every time, and each lookup
    searches the disk for catalogs (a dozen stat calls); the same dozen messages are
    asked for by every sub-parser, so remember the answers for this run."""
    import functools
    import gettext

    argparse._ = functools.lru_cache(maxsize=None)(gettext.gettext)  # type: ignore[attr-defined]


def _modules_for(argv: Sequence[str]) -> Sequence[str]:
    """The verb modules to register: only the one named like the verb asked for.

    Each module is named after its verb (``sambatune.cli.conf`` registers ``conf``);
    loading one instead of all keeps ``sambatune conf effective`` fast. Without a
    verb (``--help``, the GUI) or with one no module is named after, all load.
    """
    verb = next((arg for arg in argv if not arg.startswith("-")), None)
    chosen = [name for name in VERB_MODULES if name.rpartition(".")[2] == verb]
    return chosen or VERB_MODULES


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    _remember_translations()
    parser = _Parser(
        prog="sambatune",
        description="Measure and tune Samba file servers and the computers that use them. "
        "Without a verb, the desktop app starts.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="check that this installation is complete (agents, resources, libraries)",
    )
    parser.add_argument(
        "--gui",
        action="store_true",
        help="with --self-check: also open the main window offscreen and close it",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in VERB_MODULES if argv is None else _modules_for(argv):
        importlib.import_module(name).register(subparsers)
    return parser


def _desktop_app() -> int:
    from sambatune.ui.app import main as gui_main

    return gui_main([])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from sambatune.frozen_interpreter import run_python_command_line

    if run_python_command_line(argv):
        return 0
    if not argv:
        # The desktop app: building the parser would load every verb's module (and
        # SSH, for the fleet verbs' defaults) before the window could paint.
        return _desktop_app()
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.verb is None and not args.self_check:
        return _desktop_app()
    from sambatune.cli.output import run_verb, terminal_safe_streams

    with terminal_safe_streams(json_stdout=bool(args.json)):
        if args.self_check:
            from sambatune.cli.selfcheck import run_self_check

            return run_self_check(json_output=args.json, gui=args.gui)
        return run_verb(args)


if __name__ == "__main__":
    raise SystemExit(main())
