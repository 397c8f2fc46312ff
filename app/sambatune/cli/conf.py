"""``sambatune conf ...``: read, lint, explain and edit smb.conf files; apply them to a server.

effective, lint, explain, set and unset work on local files and import only the
smb.conf engine (no Qt, no SSH stack), so they start fast. apply, history and
restore (cli/conf_apply.py) change a server's smb.conf safely; catalog reads a
server's parameter list through testparm.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from sambatune.cli.output import KEEPS_NO_LOG, add_json_flag, escape_json_controls

if TYPE_CHECKING:
    from sambatune.conf.catalog import ParameterCatalog
    from sambatune.conf.document import SmbConfDocument
    from sambatune.conf.effective import EffectiveConfig, IncludeReader


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conf",
        help="read, lint, explain and edit smb.conf; apply it to a server safely",
        description="Work with smb.conf files the way Samba reads them.",
    )
    verbs = parser.add_subparsers(dest="conf_verb", metavar="SUBVERB")
    verbs.required = True

    effective = verbs.add_parser("effective", help="what a file sets, per section, as Samba reads it")
    effective.add_argument("file", metavar="FILE")
    _add_version_option(effective)
    effective.add_argument(
        "--no-includes", action="store_true", help="do not read the files named by include ="
    )
    effective.add_argument(
        "--testparm-values",
        action="store_true",
        help="every value in the form testparm prints it (Yes/No, sizes in bytes, ...)",
    )
    add_json_flag(effective)
    effective.set_defaults(handler=handle_effective, **KEEPS_NO_LOG)

    lint = verbs.add_parser("lint", help="findings with line numbers for one Samba version")
    lint.add_argument("file", metavar="FILE")
    _add_version_option(lint)
    lint.add_argument("--no-includes", action="store_true", help="do not read the files named by include =")
    add_json_flag(lint)
    lint.set_defaults(handler=handle_lint, **KEEPS_NO_LOG)

    explain = verbs.add_parser("explain", help="what a parameter is and does, for one version")
    explain.add_argument("name", metavar="NAME", help="a parameter name (any spelling)")
    _add_version_option(explain)
    explain.add_argument(
        "--man", action="store_true", help="also show the entry from this computer's smb.conf(5)"
    )
    add_json_flag(explain)
    explain.set_defaults(handler=handle_explain, **KEEPS_NO_LOG)

    set_verb = verbs.add_parser("set", help="set a parameter in a local file (minimal edit)")
    set_verb.add_argument("file", metavar="FILE")
    set_verb.add_argument("section", metavar="SECTION", help="share name, or global")
    set_verb.add_argument("name", metavar="NAME")
    set_verb.add_argument("value", metavar="VALUE")
    _add_version_option(set_verb)
    set_verb.add_argument(
        "--no-includes",
        action="store_true",
        help="do not read the files named by include = (every include is then taken to open a share)",
    )
    add_json_flag(set_verb)
    set_verb.set_defaults(handler=handle_set, **KEEPS_NO_LOG)

    unset = verbs.add_parser("unset", help="remove a parameter (and its synonyms) from a section")
    unset.add_argument("file", metavar="FILE")
    unset.add_argument("section", metavar="SECTION", help="share name, or global")
    unset.add_argument("name", metavar="NAME")
    _add_version_option(unset)
    unset.add_argument("--no-includes", action="store_true", help="do not read the files named by include =")
    add_json_flag(unset)
    unset.set_defaults(handler=handle_unset, **KEEPS_NO_LOG)

    catalog = verbs.add_parser("catalog", help="read a server's parameter catalog through its testparm")
    from sambatune.cli.connect import add_connection_options

    add_connection_options(catalog)
    catalog.add_argument(
        "--refresh", action="store_true", help="run testparm again even when this version is cached"
    )
    catalog.add_argument(
        "--output",
        metavar="FILE",
        help="write the catalog as JSON to FILE (how the bundled snapshot is made)",
    )
    add_json_flag(catalog)
    catalog.set_defaults(handler=handle_catalog)

    from sambatune.cli.conf_apply import register_apply_verbs
    from sambatune.cli.conf_get import register_get_verb

    register_get_verb(verbs)
    register_apply_verbs(verbs)


def _add_version_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samba-version",
        metavar="V",
        help="read the file as this Samba version does (default: the testparm installed here, "
        "else the newest catalog bundled with SambaTune)",
    )


# -- shared steps ---------------------------------------------------------------------------


def choose_catalog(version: str | None) -> ParameterCatalog:
    """The catalog for ``--samba-version`` (cached live one, else bundled), or this computer's."""
    from sambatune.conf import catalog as catalogs

    if version:
        from sambatune.conf.knowledge import version_tuple

        wanted = version_tuple(version)
        if wanted == (0, 0, 0):
            from sambatune.errors import InvalidInput

            raise InvalidInput(f"{version!r} is not a Samba version (expected e.g. 4.17).")
        cached = catalogs.cached_catalog_for(wanted)
        return cached if cached is not None else catalogs.load_bundled(wanted)
    found = catalogs.cached_local_catalog()
    if found is not None:
        return found
    if catalogs.local_testparm() is not None:
        from sambatune.conf.catalog_build import live_catalog
        from sambatune.errors import SambaTuneError
        from sambatune.remote.local import LocalTransport

        try:
            return live_catalog(LocalTransport())
        except SambaTuneError:
            pass  # a broken local Samba: the bundled catalog still answers
    return catalogs.load_bundled()


def read_document(path: str) -> SmbConfDocument:
    from sambatune.conf.document import SmbConfDocument
    from sambatune.conf.includes import FILE_SIZE_LIMIT, size_text
    from sambatune.errors import InvalidInput
    from sambatune.remote.regular_file import described, read_local

    try:
        found = read_local(path, FILE_SIZE_LIMIT)
    except OSError as exc:
        raise InvalidInput(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if found.kind == "file":
        return SmbConfDocument(found.data, path)
    if found.kind == "missing":
        raise InvalidInput(f"Cannot read {path}: no such file.")
    if found.kind == "too large":
        raise InvalidInput(
            f"{path} is larger than {size_text(FILE_SIZE_LIMIT)}, more than "
            "SambaTune reads of an smb.conf file."
        )
    raise InvalidInput(f"{path} is {described(found.kind)}, not an smb.conf file.")


def _view(args: argparse.Namespace, document: SmbConfDocument, catalog: ParameterCatalog) -> EffectiveConfig:
    from sambatune.conf.effective import effective_view

    return effective_view(document, catalog, read_include=_includes(args))


def _write_json(value: Any) -> None:
    """Compact UTF-8 JSON (a 50,000-line file gives megabytes); bytes that were not
    UTF-8 in the file (kept as lone surrogates) come out as U+FFFD."""
    import json

    # Raw DEL and C1 characters of a hostile file would reach a terminal showing it.
    text = escape_json_controls(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    text += "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        text = _shown(text)
        data = text.encode("utf-8")
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # stdout replaced by a text stream (embedding, tests)
        sys.stdout.write(text)
        return
    # UTF-8 whatever the console's encoding, as JSON requires.
    sys.stdout.flush()
    binary.write(data)
    binary.flush()


def _shown(text: str) -> str:
    """Text safe to print: undecodable bytes of the file become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# -- effective -----------------------------------------------------------------------------


def _no_collector() -> None:
    """These commands build one large acyclic structure and exit: the cyclic collector
    would only rescan it again and again (a third of the run time on a big file)."""
    import gc

    gc.disable()


def handle_effective(args: argparse.Namespace) -> int:
    _no_collector()
    document = read_document(args.file)
    catalog = choose_catalog(args.samba_version)
    view = _view(args, document, catalog)
    result = view.samba_reading() if args.testparm_values else view.to_json()
    if args.json:
        _write_json(result)
        return 0
    out = []
    for section_name, section_values in result.items():
        out.append(f"[{section_name}]")
        out.extend(f"\t{name} = {value}" for name, value in section_values.items())
        out.append("")
    sys.stdout.write(_shown("\n".join(out)))
    for problem in view.problems:
        print(f"sambatune: {problem.origin.file}:{problem.origin.line}: {problem.message}", file=sys.stderr)
    return 0


# -- lint ------------------------------------------------------------------------------------


def handle_lint(args: argparse.Namespace) -> int:
    from sambatune.conf.lint import lint

    _no_collector()
    document = read_document(args.file)
    catalog = choose_catalog(args.samba_version)
    findings = lint(document, catalog, view=_view(args, document, catalog))
    if args.json:
        _write_json([finding.to_json() for finding in findings])
    else:
        for finding in findings:
            where = f"{finding.file or args.file}:{finding.line}"
            print(
                _shown(f"{where}: {finding.severity}: [{finding.section}] {finding.message} ({finding.code})")
            )
        errors = sum(1 for f in findings if f.severity == "error")
        print(
            f"{len(findings)} finding(s), {errors} error(s), read as Samba {catalog.version_label}.",
            file=sys.stderr,
        )
    return 1 if any(f.severity == "error" for f in findings) else 0


# -- explain -----------------------------------------------------------------------------------


def handle_explain(args: argparse.Namespace) -> int:
    from sambatune.conf.explain import explain

    catalog = choose_catalog(args.samba_version)
    explanation = explain(args.name, catalog)
    manual = None
    if args.man:
        from sambatune.conf.manpage import parameter_entry

        manual = parameter_entry(explanation.name)
    if args.json:
        data = explanation.to_json()
        if args.man:
            data["man_page"] = manual
        _write_json(data)
        return 0 if explanation.status != "unknown" else 1
    print(format_explanation(explanation.to_json()))
    if args.man:
        print()
        print(manual or "(smb.conf(5) is not installed here, or has no entry for it)")
    return 0 if explanation.status != "unknown" else 1


def format_explanation(data: dict[str, Any]) -> str:
    import textwrap

    def wrap(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(text, 88, initial_indent=indent, subsequent_indent=indent)

    title = data["name"]
    if data["synonym_of"]:
        kind = "inverse synonym" if data["inverse"] else "synonym"
        title = f"{data['asked']}: {kind} of '{data['synonym_of']}'"
    lines = [f"{title}  [Samba {data['samba_version']}: {data['status']}]"]
    if data["type"]:
        lines.append(f"  type {data['type']}, {data['scope']} parameter, default {data['default']!r}")
    if data["values"]:
        lines.extend(wrap("values: " + ", ".join(data["values"])))
    if data.get("aliases"):
        lines.extend(
            wrap(
                "also accepted: "
                + ", ".join(f"{alias} (= {meaning})" for alias, meaning in data["aliases"].items())
            )
        )
    if data["synonyms"]:
        lines.append(
            "  synonyms: "
            + ", ".join(s["name"] + (" (inverse)" if s["inverse"] else "") for s in data["synonyms"])
        )
    if data["removed_in"]:
        instead = f" Use '{data['replacement']}' instead." if data["replacement"] else ""
        lines.extend(wrap(f"removed in {data['removed_in']}: {data['removal_note']}{instead}"))
    if data["suggestions"]:
        lines.append("  did you mean: " + ", ".join(data["suggestions"]))
    for label, key in (
        ("What it does", "summary"),
        ("Performance", "performance"),
        ("When to change it", "when_to_change"),
    ):
        if data[key]:
            lines.append(f"{label}:")
            lines.extend(wrap(data[key]))
    for item in data["classic_advice"]:
        lines.append(f"Old advice ({item['verdict']}): {item['claim']}")
        lines.extend(wrap(item["today"], "    "))
    if data["advice_on_this_version"]:
        lines.append("On this version:")
        lines.extend(wrap(data["advice_on_this_version"]))
    return "\n".join(lines)


# -- set / unset -------------------------------------------------------------------------------


def _save(path: str, document: SmbConfDocument) -> None:
    from sambatune.errors import InvalidInput
    from sambatune.remote.local import write_local_file_atomic

    try:
        write_local_file_atomic(path, document.render())
    except OSError as exc:
        raise InvalidInput(f"Cannot write {path}: {exc.strerror or exc}.") from exc


def _report_changes(args: argparse.Namespace, changes: list[Any], message: str) -> None:
    if args.json:
        _write_json(
            {
                "ok": True,
                "file": args.file,
                "message": message,
                "changes": [
                    {
                        "line": change.first,
                        "removed": change.removed,
                        "inserted": [line.rstrip("\r") for line in change.inserted],
                    }
                    for change in changes
                ],
            }
        )
    else:
        print(message)


def _includes(args: argparse.Namespace) -> IncludeReader | None:
    if args.no_includes:
        return None
    from sambatune.conf.includes import LocalIncludes

    return LocalIncludes()


def handle_set(args: argparse.Namespace) -> int:
    from sambatune.conf.placement import placed_set

    document = read_document(args.file)
    catalog = choose_catalog(args.samba_version)
    changes = placed_set(document, args.section, args.name, args.value, catalog, _includes(args))
    _save(args.file, document)
    first = changes[0].first
    _report_changes(
        args, changes, f"{args.file}:{first}: [{args.section}] {args.name} = {args.value.strip()}"
    )
    return 0


def handle_unset(args: argparse.Namespace) -> int:
    from sambatune.conf.placement import placed_unset

    document = read_document(args.file)
    catalog = choose_catalog(args.samba_version)
    changes = placed_unset(document, args.section, args.name, catalog, _includes(args))
    if not changes:
        _report_changes(args, [], f"[{args.section}] does not set {args.name}; nothing changed.")
        return 0
    _save(args.file, document)
    lines = ", ".join(str(change.first) for change in reversed(changes))
    _report_changes(
        args,
        changes,
        f"{args.file}: removed {args.name} from [{args.section}] "
        f"(line{'s' if len(changes) > 1 else ''} {lines}).",
    )
    return 0


# -- catalog ------------------------------------------------------------------------------------


def handle_catalog(args: argparse.Namespace) -> int:
    import json

    from sambatune.cli.connect import connect_from_args
    from sambatune.conf.catalog_build import live_catalog

    transport = connect_from_args(args)
    try:
        catalog = live_catalog(
            transport, refresh=args.refresh, on_progress=lambda m: print(f"{m}...", file=sys.stderr)
        )
    finally:
        transport.close()
    data = catalog.to_json()
    if args.output:
        from sambatune.errors import InvalidInput

        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
        except OSError as exc:
            raise InvalidInput(f"Cannot write {args.output}: {exc.strerror or exc}.") from exc
    if args.json:
        _write_json(data)
    else:
        deprecated = sum(1 for p in catalog if p.deprecated)
        computer = "this computer" if transport.is_local else transport.label
        print(
            f"{len(catalog)} {catalog.origin_text(computer)}, "
            f"{deprecated} deprecated" + (f"; written to {args.output}" if args.output else "")
        )
    return 0
