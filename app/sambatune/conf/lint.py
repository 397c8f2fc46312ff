"""Findings about an smb.conf, with line numbers and stable codes, for one Samba version.

:func:`lint` reports, in file order:

- what makes Samba refuse the file (severity ``error``): a section header without
  ``]``, a line starting with ``=``, a boolean, enum, size, octal or list value
  Samba cannot read, ``copy =`` of a share not defined above, an include loop or
  includes nested deeper than Samba allows;
- what Samba silently ignores or reads differently from what the line suggests
  (``warning``): unknown, removed or deprecated names, a global parameter in a
  share, a line without ``=``, a value that carries an "inline comment" (Samba has
  none), a parameter set twice in a section (saying which line wins), a number with
  a tail Samba drops, a [global] value that shares defined above it never see,
  includes that cannot be followed or are not read (a device, FIFO or directory, or
  a file too large to read);
- performance findings: fixed socket buffers, a high log level, strict sync with
  sync always, long hide/veto pattern lists, SMB1-only parameters while SMB1 is off,
  SMB2 read/write sizes below the default, receivefile with signing or encryption
  required;
- settings that do not do what they say: ``wide links = yes`` while smb1 unix
  extensions silently turn it off, a K/M/G suffix on a size counted in KiB or MiB.

Every finding has ``line`` (1-based), ``section``, ``parameter`` (canonical name
when known, else as written, or None), ``severity``, ``code`` and ``message``, and
``file`` when it is about an included file rather than the one linted. The codes
are listed in :data:`CODES` and never change meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from sambatune.cancellation import CancelToken, checked
from sambatune.conf.catalog import Lookup, Parameter, ParameterCatalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import (
    EffectiveConfig,
    IncludeReader,
    Section,
    Setting,
    effective_view,
)
from sambatune.conf.knowledge import explanations
from sambatune.conf.normalize import enum_form, stored_form, testparm_form
from sambatune.conf.testparm_checks import testparm_checks
from sambatune.conf.values import (
    SIZE_UNITS,
    integer_is_clean,
    parse_boolean,
    parse_bytes,
    parse_integer,
    parse_octal,
    split_name_array,
)
from sambatune.remote.regular_file import described
from sambatune.units import format_bytes

Severity = Literal["error", "warning", "info"]

CODES: dict[str, str] = {
    "bad-section": "a section header without its closing bracket; Samba refuses the file",
    "empty-section": "a section header [] without a name; Samba refuses the file",
    "empty-name": "a line that starts with '='; Samba refuses the file",
    "copy-missing": "copy = names no share defined above; Samba refuses the file",
    "copy-self": "a share copies itself; Samba refuses the file",
    "copy-in-global": "copy = in [global]; Samba refuses the file",
    "include-loop": "a file includes itself; Samba refuses the file",
    "include-too-deep": "includes nested more than 100 deep; Samba refuses the file",
    "include-registry-in-share": "include = registry outside [global]; Samba refuses the file",
    "max-open-files-aborts": "max open files of 100 or less: testparm passes it, smbd aborts at start",
    "invalid-boolean": "not yes/no/true/false/on/off/1/0; Samba refuses the file",
    "invalid-enum": "not one of the values the parameter accepts; Samba refuses the file",
    "invalid-size": "not a size Samba reads (digits, optional K/M/G/T/P, at most 2 GiB-1)",
    "invalid-octal": "not an octal number; Samba refuses the file",
    "invalid-list": "a plain item after +item/-item edits; Samba refuses the file",
    "invalid-port": "smb ports must be numbers from 1 to 65535; Samba refuses the file",
    "invalid-resolve-order": "name resolve order takes lmhosts, host, wins, bcast; else refused",
    "unknown-parameter": "not a parameter of this Samba version; ignored",
    "not-in-older-catalog": "unknown to the older release's catalog used for a newer Samba: unjudged",
    "removed-parameter": "a parameter this Samba version no longer has; ignored",
    "deprecated-parameter": "still works but is going away",
    "global-in-share": "a global-only parameter inside a share; ignored",
    "no-equals": "a line without '=' that is not a comment; ignored",
    "parametric-dropped": "a share's x:y option forgotten when the section is opened again",
    "inline-comment": "the value contains what looks like a comment; Samba keeps it in the value",
    "duplicate-parameter": "set more than once in a section; the last one wins",
    "integer-not-clean": "a number followed by text, or no number; Samba reads what strtol reads",
    "global-after-share": "a share-level default in [global] below shares that never see it",
    "include-missing": "the included file does not exist; Samba skips it silently",
    "include-unreadable": "the included file could not be read",
    "include-not-regular": "the include names a directory, device, FIFO or socket; not read",
    "include-too-large": "the included file is larger than SambaTune reads; not checked",
    "include-too-many": "the includes name files more often than SambaTune follows; not checked",
    "include-not-followed": "an include whose target depends on the client or the registry",
    "include-relative": "a relative include path, resolved against smbd's working directory",
    "socket-buffer-fixed": "SO_RCVBUF/SO_SNDBUF in socket options turn off Linux TCP autotuning",
    "log-level-high": "log level 3 or more: much logging on every request",
    "strict-sync-sync-always": "strict sync with sync always: every write waits for the disk",
    "many-hide-veto-patterns": "many hide/veto patterns, checked against every directory entry",
    "smb1-only-parameter": "only affects SMB1, which this server refuses",
    "wide-links-ignored": "wide links = yes, turned off by smb1 unix extensions (the default)",
    "smb2-size-below-default": "smb2 max read/write below the default: only slows transfers",
    "receivefile-signed": "min receivefile size while every connection is signed or sealed",
    "size-unit-suffix": "a K/M/G suffix on a size Samba counts in KiB or MiB",
}

# Protocols in the order Samba ranks them (lib/param/param_table.c enum_protocol).
_PROTOCOL_RANK = {
    "CORE": 0,
    "COREPLUS": 1,
    "LANMAN1": 2,
    "LANMAN2": 3,
    "NT1": 4,
    "SMB2_02": 5,
    "SMB2": 6,
    "SMB2_10": 6,
    "SMB3_00": 7,
    "SMB3_02": 8,
    "SMB3": 9,
    "SMB3_11": 9,
}
_INLINE_COMMENT = re.compile(r"[ \t][#;]")
# lib/param/loadparm.c lpcfg_server_signing_allowed(): ROLE_ACTIVE_DIRECTORY_DC and above.
_DC_ROLES = frozenset({"active directory domain controller", "IPA primary domain controller"})
_BUFFER_OPTION = re.compile(r"\bSO_(RCV|SND)BUF\s*=", re.IGNORECASE)
#: Name patterns in one hide or veto list at which directory listings slow down
#: measurably: 6 were within noise, 100 made listing take 1.7-2x as long, 500 about 5x.
#: The advisor's hide-veto-patterns rule speaks at the same count.
MANY_NAME_PATTERNS = 25
LOG_LEVEL_LIMIT = 3
_NO_DUPLICATE_WARNING = frozenset({"include", "copy"})


@dataclass(frozen=True)
class Finding:
    line: int
    section: str
    parameter: str | None
    severity: Severity
    code: str
    message: str
    file: str | None = None  # set when the line is in an included file

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "line": self.line,
            "section": self.section,
            "parameter": self.parameter,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        if self.file is not None:
            data["file"] = self.file
        return data


def _not_regular(path: str, kind: str) -> str:
    if kind == "fifo":
        # lib/util/util.c file_exist() accepts S_ISFIFO, so Samba opens it and waits.
        return (
            f"{path} is a FIFO, not a file: smbd and testparm wait at this line until "
            "something writes to it. SambaTune does not read it."
        )
    # file_exist() is false for anything but a regular file or FIFO: "Can't find include file".
    return (
        f"{path} is {described(kind)}, not a file: Samba skips the include as if the "
        "file did not exist. SambaTune does not read it."
    )


class _Linter:
    def __init__(
        self,
        document: SmbConfDocument,
        catalog: ParameterCatalog,
        view: EffectiveConfig,
        cancel: CancelToken | None = None,
    ) -> None:
        self.catalog = catalog
        self.cancel = cancel
        self.view = view
        self.root = document.path or "<document>"
        self.findings: list[Finding] = []
        self.version = ".".join(str(part) for part in catalog.version)
        self._lookups: dict[str, Lookup | None] = {}

    def lookup(self, written: str) -> Lookup | None:
        if written not in self._lookups:
            self._lookups[written] = self.catalog.lookup(written)
        return self._lookups[written]

    def add(
        self,
        file: str,
        line: int,
        section: str,
        parameter: str | None,
        severity: Severity,
        code: str,
        message: str,
    ) -> None:
        self.findings.append(
            Finding(line, section, parameter, severity, code, message, None if file == self.root else file)
        )

    def add_at(self, setting: Setting, section: str, severity: Severity, code: str, message: str) -> None:
        """A finding on the line of ``setting``, about its own parameter."""
        self.add(setting.file, setting.line, section, setting.name, severity, code, message)

    def run(self) -> list[Finding]:
        view = self.view
        for problem in view.problems:
            self.add(
                problem.origin.file,
                problem.origin.line,
                problem.section,
                None,
                "error",
                problem.code,
                problem.message,
            )
        if view.loads:
            for check in testparm_checks(view):
                self.add(
                    check.origin.file,
                    check.origin.line,
                    "global",
                    check.parameter,
                    "error",
                    check.code,
                    check.message,
                )
        self._ignored()
        self._includes()
        self._samba_corrections()
        for section in checked(view.sections.values(), self.cancel, every=64):
            self._section(section)
        self._global_after_share()
        self._max_open_files()
        self._smb1_only()
        self._socket_options()
        self._log_level()
        self._wide_links()
        self._smb2_sizes()
        self._receivefile()
        order = {doc.path or "<document>": index for index, doc in enumerate(view.documents)}
        self.findings.sort(key=lambda f: (order.get(f.file or self.root, 0), f.line))
        return self.findings

    # -- what Samba corrects on its own (lpcfg_service_ok) --------------------------------
    def _samba_corrections(self) -> None:
        """testparm warns about these two and loads the file anyway; a share nobody can
        reach is easy to miss in a long file, so lint says it too, on the share's header.
        A registry backend makes the whole file moot, which testparm only hints at."""
        origin = self.view.registry_backend
        if origin is not None:
            self.add(
                origin.file,
                origin.line,
                "global",
                "config backend",
                "warning",
                "registry-backend",
                "With 'config backend = registry' Samba ignores every other setting and share "
                "in this file and reads them from the registry instead: change them with "
                "'net conf', or remove this line to use the file.",
            )
        for section in self.view.shares():
            forced = section.forced.get("available")  # only a missing path forces it (lpcfg_service_ok)
            if forced is not None:
                self.add(
                    forced.origin.file,
                    forced.origin.line,
                    section.name,
                    "path",
                    "warning",
                    "share-without-path",
                    "This share has no path, so Samba makes it unavailable: clients cannot "
                    "connect to it. Give it a path, or remove the share.",
                )
            forced = section.forced.get("printable")
            if forced is not None and section.key == "printers":
                self.add(
                    forced.origin.file,
                    forced.origin.line,
                    section.name,
                    "printable",
                    "warning",
                    "printers-not-printable",
                    "Samba always makes [printers] a printer share: it turns 'printable' on "
                    "whatever the file says.",
                )

    # -- what Samba ignores ----------------------------------------------------------
    def _ignored(self) -> None:
        for item in self.view.ignored:
            file, line = item.origin
            name = item.written_name
            if item.reason == "unknown":
                suggestions = self.catalog.suggest(name)
                hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
                if self.catalog.version[:2] > self.catalog.base_version[:2]:
                    # A newer release may have added it: the older catalog cannot say.
                    self.add(
                        file,
                        line,
                        item.section,
                        name,
                        "info",
                        "not-in-older-catalog",
                        f"'{name}' is not in the Samba {self.catalog.version_text} catalog, the "
                        f"newest SambaTune has for Samba {self.version}, which may know it: "
                        f"releases since have added parameters. testparm on a {self.version} "
                        f"server tells for sure.{hint}",
                    )
                    continue
                self.add(
                    file,
                    line,
                    item.section,
                    name,
                    "warning",
                    "unknown-parameter",
                    f"'{name}' is not a parameter of Samba {self.version}; Samba ignores this line.{hint}",
                )
            elif item.reason == "removed":
                removed = self.catalog.removed(name)
                assert removed is not None
                replacement = f" Use '{removed.replacement}' instead." if removed.replacement else ""
                self.add(
                    file,
                    line,
                    item.section,
                    removed.name,
                    "warning",
                    "removed-parameter",
                    f"'{removed.name}' was removed in Samba {removed.removed_in_text}; "
                    f"Samba {self.version} ignores it. {removed.note}{replacement}",
                )
            elif item.reason == "global-in-share":
                lookup = self.catalog.lookup(name)
                canonical = lookup.parameter.name if lookup else name
                self.add(
                    file,
                    line,
                    item.section,
                    canonical,
                    "warning",
                    "global-in-share",
                    f"'{canonical}' only works in [global]; in [{item.section}] Samba ignores it.",
                )
            elif item.reason == "no-equals" and name.startswith("\ufeff"):
                self.add(
                    file,
                    line,
                    item.section,
                    None,
                    "warning",
                    "no-equals",
                    "The file starts with a byte order mark (an editor's UTF-8 marker), "
                    f"so Samba does not see {name[1:]!r} as written and ignores the line. "
                    "Save the file without BOM.",
                )
            elif item.reason == "no-equals":
                self.add(
                    file,
                    line,
                    item.section,
                    None,
                    "warning",
                    "no-equals",
                    f"Samba ignores this line: it has no '=' and is not a comment "
                    f"(comments start with # or ;): {name!r}",
                )
            elif item.reason == "parametric-dropped":
                self.add(
                    file,
                    line,
                    item.section,
                    name.lower(),
                    "warning",
                    "parametric-dropped",
                    f"[{item.section}] is opened again further down, and Samba then "
                    f"forgets '{name}' set here; set it in the last block.",
                )

    def _includes(self) -> None:
        for link in self.view.includes:
            file, line = link.origin
            if link.status == "missing":
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "warning",
                    "include-missing",
                    f"{link.path} does not exist; Samba skips the include silently.",
                )
            elif link.status == "unreadable":
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "warning",
                    "include-unreadable",
                    f"{link.path} could not be read: {link.detail}",
                )
            elif link.status == "not-regular":
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "warning",
                    "include-not-regular",
                    _not_regular(link.path, link.detail),
                )
            elif link.status == "too-many":
                if not any(f.code == "include-too-many" for f in self.findings):
                    self.add(
                        file,
                        line,
                        link.section,
                        "include",
                        "warning",
                        "include-too-many",
                        f"Not followed from here on: {link.detail}. The includes name the same "
                        "files over and over; what SambaTune shows of them is incomplete.",
                    )
            elif link.status == "too-large":
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "warning",
                    "include-too-large",
                    f"{link.path} was not read ({link.detail}), so its settings are "
                    "not checked. Samba reads it whole.",
                )
            elif link.status in ("macro", "registry", "not-followed"):
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "info",
                    "include-not-followed",
                    f"Not followed: {link.path} ({link.detail or 'includes were not read'}).",
                )
            elif link.status == "relative":
                self.add(
                    file,
                    line,
                    link.section,
                    "include",
                    "warning",
                    "include-relative",
                    f"{link.path} is relative: smbd resolves it against its own working "
                    "directory, not this file's folder. Use an absolute path.",
                )

    # -- every assignment Samba applied --------------------------------------------------
    def _section(self, section: Section) -> None:
        assignments = sorted(
            [*section.settings.values(), *section.overridden], key=lambda s: (s.file, s.line)
        )
        winners = {setting.name: setting for setting in section.settings.values()}
        winners.update(section.parametric)
        for setting in assignments:
            lookup = self.lookup(setting.written_name)
            if lookup is None:
                continue
            parameter = lookup.parameter
            self._value(section, setting, parameter, lookup.inverse)
            if parameter.deprecated:
                self.add(
                    setting.file,
                    setting.line,
                    section.name,
                    parameter.name,
                    "warning",
                    "deprecated-parameter",
                    f"'{parameter.name}' is deprecated in Samba {self.version}: it still "
                    "works but a later release drops it.",
                )
            winner = winners.get(setting.name)
            if winner is not None and winner is not setting and (setting.name not in _NO_DUPLICATE_WARNING):
                spelled = "" if name_of(winner) == name_of(setting) else f" (as '{winner.written_name}')"
                self.add(
                    setting.file,
                    setting.line,
                    section.name,
                    parameter.name,
                    "warning",
                    "duplicate-parameter",
                    f"'{parameter.name}' is set again in [{section.name}] on line "
                    f"{winner.line}{spelled}; that later value wins and this line has "
                    "no effect.",
                )
        self._patterns(section)
        self._sync(section)

    def _value(self, section: Section, setting: Setting, parameter: Parameter, inverse: bool) -> None:
        text = setting.written_value
        kind = parameter.type
        where = (setting.file, setting.line, section.name, parameter.name)
        comment = _INLINE_COMMENT.search(text)
        if comment:
            self.add(
                *where,
                "warning",
                "inline-comment",
                f"Samba has no inline comments: the value of '{setting.written_name}' is "
                f"{text!r}, including {text[comment.start() :].strip()!r}. Put the "
                "comment on its own line.",
            )
        if kind in ("boolean", "boolean-rev") or inverse:
            if parse_boolean(text) is None:
                self.add(
                    *where,
                    "error",
                    "invalid-boolean",
                    f"'{setting.written_name}' needs yes or no (true/false, on/off, 1/0), "
                    f"not {text!r}; Samba refuses to load the file.",
                )
        elif kind == "enum":
            if enum_form(parameter, text) is None:
                self.add(
                    *where,
                    "error",
                    "invalid-enum",
                    f"{text!r} is not a value of '{parameter.name}'; it accepts "
                    f"{_enum_choices(parameter)}. Samba refuses to load the file.",
                )
        elif kind == "bytes":
            size = parse_bytes(text)
            unit = SIZE_UNITS.get(parameter.name)
            if size is None:
                self.add(
                    *where,
                    "error",
                    "invalid-size",
                    f"{text!r} is not a size Samba reads for '{parameter.name}': digits "
                    f"with an optional K, M or G, at most 2147483647 {unit or 'bytes'}. "
                    "Samba refuses to load the file.",
                )
            elif unit is not None and text.strip(" \t")[-1:].isalpha():
                factor = 1024 if unit == "KiB" else 1024**2
                self.add(
                    *where,
                    "warning",
                    "size-unit-suffix",
                    f"'{parameter.name}' counts {unit}, and a suffix multiplies that: "
                    f"{text.strip()!r} means {size:,} {unit}, "
                    f"{format_bytes(size * factor)}. Write the number of {unit} alone.",
                )
        elif kind == "octal":
            if parse_octal(text) is None:
                self.add(
                    *where,
                    "error",
                    "invalid-octal",
                    f"'{parameter.name}' needs an octal number such as 0644, not {text!r}; "
                    "Samba refuses to load the file.",
                )
        elif kind == "integer":
            if not integer_is_clean(text):
                read = testparm_form(parameter, text)
                self.add(
                    *where,
                    "warning",
                    "integer-not-clean",
                    f"{text!r} is not a plain number; Samba reads it as {read}.",
                )
        elif kind == "list" and (
            testparm_form(parameter, text, self._current_list(section, setting)) is None
        ):
            self.add(
                *where,
                "error",
                "invalid-list",
                f"'{parameter.name}' mixes +item/-item edits with a plain item "
                f"({text!r}); Samba refuses to load the file.",
            )
        if parameter.name == "name resolve order" and not _valid_resolve_order(text):
            self.add(
                *where,
                "error",
                "invalid-resolve-order",
                f"name resolve order lists lmhosts, host, wins or bcast (lower case), not "
                f"{text!r}; Samba refuses to load the file.",
            )
        if parameter.name == "smb ports" and not _valid_ports(text):
            self.add(
                *where,
                "error",
                "invalid-port",
                f"smb ports must list port numbers from 1 to 65535, not {text!r}; "
                "Samba refuses to load the file.",
            )

    def _current_list(self, section: Section, setting: Setting) -> str | None:
        """The list value in force just before ``setting`` (for +item/-item checks)."""
        parameter = self.catalog.parameters[setting.name]
        earlier = [
            s
            for s in [*section.overridden, *section.settings.values()]
            if s.name == setting.name and (s.file, s.line) < (setting.file, setting.line)
        ]
        if earlier:
            return stored_form(parameter, max(earlier, key=lambda s: s.line).value)
        if not section.is_global:
            inherited = section.inherited.get(setting.name)
            if inherited is not None:
                return stored_form(parameter, inherited.value)
        return parameter.default

    # -- ordering traps -------------------------------------------------------------------
    def _global_after_share(self) -> None:
        view = self.view
        shares = list(view.shares())
        for setting in view.global_section.settings.values():
            parameter = self.catalog.parameters.get(setting.name)
            if parameter is None or parameter.scope != "share" or setting.name == "include":
                continue
            missed = [
                share.name
                for share in shares
                if setting.name not in share.settings
                and setting.name not in share.copied
                and share.inherited.get(setting.name) is not setting
            ]
            if missed:
                listed = ", ".join(f"[{name}]" for name in missed[:5])
                more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
                self.add_at(
                    setting,
                    "global",
                    "warning",
                    "global-after-share",
                    f"{listed}{more} {'is' if len(missed) == 1 else 'are'} defined above "
                    f"this line and keep{'s' if len(missed) == 1 else ''} the earlier "
                    f"value of '{setting.name}': Samba copies the [global] defaults into a "
                    "share when it reads the share's header. Move this line into the "
                    "[global] section at the top.",
                )

    # -- performance ----------------------------------------------------------------------
    def _socket_options(self) -> None:
        setting = self.view.global_section.settings.get("socket options")
        if setting is None:
            return
        fixed = sorted(
            {match.group(0).rstrip("= ").upper() for match in _BUFFER_OPTION.finditer(setting.value)}
        )
        if fixed:
            self.add(
                setting.file,
                setting.line,
                "global",
                "socket options",
                "warning",
                "socket-buffer-fixed",
                f"{' and '.join(fixed)} fix the socket buffer size, which turns off the "
                "Linux kernel's TCP buffer autotuning for every SMB connection; on fast or "
                "long links that lowers throughput. Remove them and measure.",
            )

    def _log_level(self) -> None:
        setting = self.view.global_section.settings.get("log level")
        if setting is None:
            return
        levels = []
        for token in setting.value.replace(",", " ").split():
            level = token.rpartition(":")[2].partition("@")[0]
            if level.isdigit():
                levels.append(int(level))
        if levels and max(levels) >= LOG_LEVEL_LIMIT:
            self.add(
                setting.file,
                setting.line,
                "global",
                "log level",
                "warning",
                "log-level-high",
                f"log level {setting.value!r} makes smbd write detailed logs for every "
                "request, which costs CPU and disk time. Use 1 (or 0) outside debugging.",
            )

    def _global_enum(self, name: str) -> str | None:
        """The value of a global enum as testparm prints it (``mandatory`` -> ``required``)."""
        parameter = self.catalog.parameters.get(name)
        value = self.view.resolve("global", name).value if parameter is not None else None
        return None if parameter is None or value is None else testparm_form(parameter, value)

    def _wide_links(self) -> None:
        """source3/param/loadparm.c lp_widelinks(): while smb1 unix extensions is on, wide
        links is off on every share and for every protocol unless allow insecure wide links."""
        if not {"smb1 unix extensions", "allow insecure wide links"} <= set(self.catalog.parameters):
            return
        unix = self.view.resolve("global", "smb1 unix extensions")
        insecure = self.view.resolve("global", "allow insecure wide links")
        if parse_boolean(unix.value or "") is not True or parse_boolean(insecure.value or ""):
            return
        why = f"set on line {unix.setting.line}" if unix.setting is not None else "the default"
        for section in self.view.sections.values():
            setting = section.settings.get("wide links")
            if setting is None or parse_boolean(setting.value) is not True:
                continue
            self.add(
                setting.file,
                setting.line,
                section.name,
                "wide links",
                "warning",
                "wide-links-ignored",
                f"wide links = yes has no effect: smb1 unix extensions is on ({why}), and "
                "then smbd keeps every symlink inside the share, for SMB2/3 clients too, "
                "unless allow insecure wide links = yes. If links out of the share are "
                "really needed, set smb1 unix extensions = no (SMB1 is off by default "
                "anyway) or use a bind mount.",
            )

    def _max_open_files(self) -> None:
        """source3/smbd/files.c file_init_global() asserts that more than 100 files can be
        open, at smbd's start, after testparm has passed the file: 100 aborts, 101 runs
        (measured on 4.17; the assertion is the same in every 4.x)."""
        setting = self.view.global_section.settings.get("max open files")
        if setting is None:
            return
        number = parse_integer(setting.value)
        if number > 100:
            return
        self.add(
            setting.file,
            setting.line,
            "global",
            "max open files",
            "error",
            "max-open-files-aborts",
            f"max open files = {setting.written_value}: smbd stops at start with a panic "
            "(it needs room for more than 100 open files) although testparm accepts the "
            "line. Remove it: the computed default is at least 16384.",
        )

    def _smb2_sizes(self) -> None:
        """source3/smbd/smb2_negprot.c offers what is set (up to 0xFFFF00); less than the
        8 MiB default only makes clients split large transfers into more requests."""
        for name, what in (("smb2 max read", "reads"), ("smb2 max write", "writes")):
            setting = self.view.global_section.settings.get(name)
            parameter = self.catalog.parameters.get(name)
            if setting is None or parameter is None or parameter.default is None:
                continue
            size, default = parse_bytes(setting.value), parse_bytes(parameter.default)
            if size is None or default is None or size >= default:
                continue
            self.add(
                setting.file,
                setting.line,
                "global",
                name,
                "warning",
                "smb2-size-below-default",
                f"{name} = {setting.written_value} is below the default "
                f"{format_bytes(default)}: SMB2/3 clients split large {what} into more, "
                f"smaller requests, which only slows transfers down. Remove the line.",
            )

    def _receivefile(self) -> None:
        """source3/smbd/smb2_server.c is_smb2_recvfile_write() refuses signed and encrypted
        writes, smb1_process.c receive_smb_raw_talloc() signed ones."""
        setting = self.view.global_section.settings.get("min receivefile size")
        if setting is None or not parse_bytes(setting.value):
            return
        signing = self._global_enum("server signing")
        if signing == "required":
            reason = "server signing = required makes every connection signed"
        elif signing == "default" and self._global_enum("server role") in _DC_ROLES:
            reason = "a domain controller signs every connection (server signing = default)"
        elif self._global_enum("server smb encrypt") == "required":
            reason = "server smb encrypt = required encrypts every connection"
        else:
            return
        self.add(
            setting.file,
            setting.line,
            "global",
            "min receivefile size",
            "info",
            "receivefile-signed",
            f"min receivefile size has no effect here: {reason}, and smbd never hands a "
            "signed or encrypted write to receivefile. Remove the line; it only helps "
            "connections that are neither signed nor encrypted.",
        )

    def _sync(self, section: Section) -> None:
        if "sync always" not in section.settings:
            return
        resolved_always = self.view.resolve(section.name, "sync always")
        resolved_strict = self.view.resolve(section.name, "strict sync")
        if parse_boolean(resolved_always.value or "") and parse_boolean(resolved_strict.value or ""):
            setting = section.settings["sync always"]
            self.add(
                setting.file,
                setting.line,
                section.name,
                "sync always",
                "warning",
                "strict-sync-sync-always",
                "With strict sync on, sync always makes every write wait until the data "
                "is on disk, which slows writes a lot. Turn sync always off unless that "
                "guarantee is needed.",
            )

    def _patterns(self, section: Section) -> None:
        # veto oplock files is matched when a file opens, not in listings: not counted.
        for name in ("hide files", "veto files"):
            setting = section.settings.get(name)
            if setting is None:
                continue
            count = len(split_name_array(setting.value))
            if count >= MANY_NAME_PATTERNS:
                self.add_at(
                    setting,
                    section.name,
                    "info",
                    "many-hide-veto-patterns",
                    f"{name} in [{section.name}] lists {count} patterns; smbd matches every "
                    "name of every directory listing against each, which slows listings "
                    "of large directories.",
                )

    def _smb1_only(self) -> None:
        smb1 = {name for name, entry in explanations().items() if entry["applies_to"] == "smb1"}
        resolved = self.view.resolve("global", "server min protocol")
        minimum = (resolved.value or "default") if resolved.source != "default" else "default"
        rank = _PROTOCOL_RANK.get(minimum.upper())
        if rank is None:
            # The default: SMB2_02 since 4.11, LANMAN1 before (a stand-in catalog carries
            # the newer default, so it is decided by the version here).
            modern = self.catalog.version >= (4, 11, 0)
            rank = _PROTOCOL_RANK["SMB2_02" if modern else "LANMAN1"]
            minimum = f"default, i.e. {'SMB2_02' if modern else 'LANMAN1'}"
        if rank <= _PROTOCOL_RANK["NT1"]:
            return
        for section in self.view.sections.values():
            for setting in section.settings.values():
                if setting.name in smb1:
                    self.add_at(
                        setting,
                        section.name,
                        "info",
                        "smb1-only-parameter",
                        f"'{setting.name}' only affects SMB1 connections, and this server "
                        f"refuses SMB1 (server min protocol = {minimum}); it has no effect.",
                    )


def name_of(setting: Setting) -> str:
    return " ".join(setting.written_name.lower().split())


def _enum_choices(parameter: Parameter) -> str:
    """Every value Samba takes: the distinct ones, then the other spellings and their meaning."""
    choices = ", ".join(parameter.enum_choices)
    aliases = parameter.enum_aliases
    if aliases:
        choices += " (also " + ", ".join(f"{alias} = {meaning}" for alias, meaning in aliases.items()) + ")"
    return choices


_RESOLVE_METHODS = frozenset({"lmhosts", "host", "wins", "bcast"})


def _valid_resolve_order(text: str) -> bool:
    from sambatune.conf.values import split_list

    methods = split_list(text)
    return bool(methods) and all(method in _RESOLVE_METHODS for method in methods)


def _valid_ports(text: str) -> bool:
    from sambatune.conf.values import split_list

    ports = split_list(text)
    return bool(ports) and all(port.isdigit() and 0 < int(port) <= 65535 for port in ports)


def lint(
    document: SmbConfDocument,
    catalog: ParameterCatalog,
    *,
    view: EffectiveConfig | None = None,
    read_include: IncludeReader | None = None,
    cancel: CancelToken | None = None,
) -> list[Finding]:
    """Every finding for ``document`` read by ``catalog``'s Samba version, in file order.

    Pass ``view`` when the effective view is already at hand (it must come from the
    same document and catalog); ``read_include`` follows includes like
    :func:`effective_view` does. ``cancel`` stops a long run (an editor's check that
    the next keystroke made useless) by raising :class:`~sambatune.errors.Cancelled`.
    """
    if view is None:
        view = effective_view(document, catalog, read_include=read_include, cancel=cancel)
    return _Linter(document, catalog, view, cancel).run()
