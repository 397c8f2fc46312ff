"""What an smb.conf sets, read the way Samba reads it, with where each value came from.

:func:`effective_view` walks a document (and the files it includes) in order, as
Samba's loader does, and keeps per section the winning setting of each parameter
under its canonical name:

- names ignore case and blanks, synonyms map to their parameter, an inverse
  synonym stores the opposite boolean (``writable = yes`` is ``read only = No``);
- the last occurrence wins; parameters before the first section are global;
  ``[Global]``, ``[ global ]`` and ``[globals]`` are the global section; a section
  that appears again adds to the first one (and, as in Samba, forgets the
  parametric ``x:y`` options the earlier block set);
- a global-only parameter inside a share is ignored, as are unknown and removed
  names (all recorded in ``ignored``);
- ``include =`` reads the file at that point (the current section carries on
  into and out of it); ``copy =`` copies an earlier share's settings at that point;
- a share starts from the share-level defaults set in [global] *so far*: Samba
  copies them when it creates the share, so a [global] block after the share does
  not reach it. :meth:`EffectiveConfig.resolve` answers "what value does this
  share really get" with that rule;
- Samba then sets some values on its own (``forced``, with the reason): ``[printers]``
  is always printable and never browseable; a share without a path (other than
  [homes] and a DFS proxy) is made unavailable; ``include = registry`` switches on
  ``registry shares``; ``idmap uid``/``idmap gid``/``idmap backend`` also set their
  ``idmap config * :`` forms; and an active directory domain controller gets the share
  defaults it needs each time a [global] block ends (VFS modules when none are set,
  DOS attribute mapping off, ``store dos attributes``) and, once the file is read,
  its passdb backend and RPC server settings. These win over what the file says.

Values are the text Samba stored: continuation lines joined, blank runs collapsed,
``%`` macros left as written. Compare them with testparm through
:func:`sambatune.conf.normalize.testparm_form`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from typing import Literal, NamedTuple

from sambatune.cancellation import CancelToken, checked
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import PARAMETER, SECTION, Head, SmbConfDocument, paused_gc
from sambatune.conf.include_shown import include_as_testparm_prints
from sambatune.conf.normalize import list_uses_edits, stored_form, testparm_form
from sambatune.conf.syntax import is_global_section, name_key, section_key
from sambatune.conf.values import boolean_text, parse_boolean

GLOBAL = "global"
# Written as one key (blanks and case folded): the spellings of the AD DC role.
_AD_DC_ROLES = {"activedirectorydomaincontroller", "domaincontroller", "dc"}
# What an AD DC gets at the end of every [global] block (source3/param/loadparm.c,
# init_locals) and once the whole file is read (lp_enforce_ad_dc_settings).
_AD_DC_SHARE_DEFAULTS = (
    ("map hidden", "No"),
    ("map system", "No"),
    ("map readonly", "No"),
    ("map archive", "No"),
    ("store dos attributes", "Yes"),
)
_AD_DC_GLOBALS = (
    ("passdb backend", "samba_dsdb"),
    ("winbindd:use external pipes", "true"),
    ("rpc_server:default", "external"),
    ("rpc_server:svcctl", "embedded"),
    ("rpc_server:srvsvc", "embedded"),
    ("rpc_server:eventlog", "embedded"),
    ("rpc_server:ntsvcs", "embedded"),
    ("rpc_server:winreg", "embedded"),
    ("rpc_server:spoolss", "embedded"),
    ("rpc_daemon:spoolssd", "embedded"),
    ("rpc_server:tcpip", "no"),
)
# Legacy idmap parameters whose handler also sets the parametric form (lib/param/loadparm.c).
_IDMAP_PARAMETRIC = {
    "idmap uid": "idmap config * : range",
    "idmap gid": "idmap config * : range",
    "idmap backend": "idmap config * : backend",
}
# Samba's include depth limit (source3/param/loadparm.c, MAX_INCLUDE_DEPTH, checked
# first thing in lp_include): the main file is depth 0, so it may include a chain of
# 100 files; an include line in the 100th fails with "Maximum include depth (100)
# exceeded!" and Samba refuses the whole configuration.
MAX_INCLUDE_DEPTH = 100
# What SambaTune follows of includes in one reading, however the files nest: a file
# may be included many times (a common file in every share), but a few files that
# each include the next twice double the work at every level. Past these the rest is
# not followed, and the reading says so.
MAX_FOLLOWED_INCLUDES = 10_000
MAX_WALKED_ROWS = 2_000_000


def include_key(path: str) -> str:
    """One spelling for every way of writing the same absolute path (``/etc//samba``,
    ``/etc/./samba``, ``/etc/x/../samba``): loops and repeated reads are found by it."""
    return posixpath.normpath("/" + path.lstrip("/"))


class Origin(NamedTuple):
    file: str  # the document's path (or label)
    line: int  # 1-based physical line the entry starts on


class Setting(NamedTuple):
    """One parameter assignment Samba applied."""

    name: str  # canonical (a parametric name: lower-cased as first written)
    value: str  # the stored value as text; an inverse synonym's is the flipped Yes/No
    written_name: str
    written_value: str
    file: str  # where it was written: the document's path (or label)...
    line: int  # ...and the 1-based line the entry starts on
    inverse: bool  # written with an inverse synonym

    @property
    def origin(self) -> Origin:
        return Origin(self.file, self.line)


# What the loader must do with a name beyond storing its value (bit flags; 0: nothing).
_LIST, _INCLUDE, _COPY, _GLOBAL_ONLY, _INVERSE = 1, 2, 4, 8, 16
_PARAMETRIC, _REMOVED, _UNKNOWN, _PRINTING = 32, 64, 128, 256
_NOT_APPLIED = _PARAMETRIC | _REMOVED | _UNKNOWN
_SPECIAL = {"include": _INCLUDE, "copy": _COPY}

# The commands a share's own ``printing =`` line sets for it (init_printer_values in
# lib/param/loadparm.c; what testparm 4.17 prints for each style). [global]'s line sets
# none: shares that only inherit the style keep the defaults.
_BSD = {
    "lpq command": "lpq -P'%p'",
    "lprm command": "lprm -P'%p' %j",
    "print command": "lpr -r -P'%p' %s",
}
_LPRNG = _BSD | {
    "queuepause command": "lpc stop '%p'",
    "queueresume command": "lpc start '%p'",
    "lppause command": "lpc hold '%p' %j",
    "lpresume command": "lpc release '%p' %j",
}
_CUPS = dict.fromkeys(_LPRNG, "") | {"lpq command": "%p"}
_SYSV = {
    "lpq command": "lpstat -o%p",
    "lprm command": "cancel %p-%j",
    "print command": "lp -c -d%p %s; rm %s",
    "queuepause command": "disable %p",
    "queueresume command": "enable %p",
    "lppause command": "lp -i %p-%j -H hold",
    "lpresume command": "lp -i %p-%j -H resume",
}
_QNX = {"lpq command": "lpq -P%p", "lprm command": "lprm -P%p %j", "print command": "lp -r -P%p %s"}
PRINT_COMMANDS: dict[str, dict[str, str]] = {
    "bsd": _BSD,
    "aix": _BSD,
    "nt": _BSD,
    "os2": _BSD,
    "lprng": _LPRNG,
    "plp": _LPRNG,
    "cups": _CUPS,
    "iprint": _CUPS,
    "sysv": _SYSV,
    "hpux": _SYSV,
    "qnx": _QNX,
}

# Settings (and each section header's Origin) are made once per line of a file;
# tuple.__new__ skips the generated keyword-handling constructor, which halves the cost
# on large files.
_new_setting = tuple.__new__


IgnoreReason = Literal[
    "unknown",  # not a parameter of this Samba version
    "removed",  # a parameter older versions had
    "global-in-share",  # a global-only parameter inside a share
    "no-equals",  # a line without "=" (not a comment either)
    "parametric-dropped",  # a share's x:y option forgotten when its section was opened again
]


class Forced(NamedTuple):
    """A value Samba sets on its own while loading, and why."""

    name: str  # canonical (a parametric name lower-cased)
    value: str  # as testparm prints it
    reason: str
    origin: Origin  # the line that caused it (a section header, the include, the role)


class Ignored(NamedTuple):
    """A line Samba reads and then ignores."""

    reason: IgnoreReason
    section: str
    written_name: str
    written_value: str | None
    origin: Origin


ProblemCode = Literal[
    "bad-section",  # [name without ]: Samba refuses the file
    "empty-section",  # []: Samba refuses the file
    "empty-name",  # "= value": Samba refuses the file
    "copy-missing",  # copy = a share not defined before: Samba refuses the file
    "copy-self",  # copy = the share itself: Samba refuses the file
    "copy-in-global",  # copy in [global]: Samba refuses the file
    "include-loop",  # a file includes itself: Samba fails at depth 100
    "include-too-deep",  # includes nest more than 100 files deep
    "include-registry-in-share",  # include = registry outside [global]: Samba refuses the file
]


class LoadProblem(NamedTuple):
    """Something that makes Samba refuse to load the configuration."""

    code: ProblemCode
    section: str
    message: str
    origin: Origin


IncludeStatus = Literal[
    "followed",  # read and applied at this point
    "missing",  # no such file (Samba skips it silently)
    "unreadable",  # exists but could not be read
    "not-regular",  # a directory, device, FIFO or socket: not read (detail: which)
    "too-large",  # larger than SambaTune reads: not read
    "too-deep",  # nested deeper than Samba allows: Samba refuses the configuration
    "macro",  # the path has %-macros: resolved per client, not followed
    "relative",  # relative path: resolved against smbd's working directory, not followed
    "registry",  # include = registry: settings live in the registry
    "loop",  # the file is already being read
    "too-many",  # past what SambaTune follows in one reading (MAX_FOLLOWED_INCLUDES)
    "not-followed",  # following includes was switched off
]


class IncludeLink(NamedTuple):
    origin: Origin
    section: str
    path: str
    status: IncludeStatus
    document: SmbConfDocument | None
    detail: str = ""


#: Reads an include: given the path, returns its document, or (status, detail).
IncludeReader = Callable[[str], "SmbConfDocument | tuple[IncludeStatus, str]"]


class Section:
    """One section as Samba ends up with it. Shares list what they set themselves."""

    __slots__ = (
        "copied",
        "derived",
        "forced",
        "headers",
        "inherited",
        "is_global",
        "key",
        "name",
        "overridden",
        "parametric",
        "settings",
    )

    def __init__(self, name: str, is_global: bool, inherited: dict[str, Setting]) -> None:
        self.name = name  # as first written ("global" for the global section)
        self.key = GLOBAL if is_global else section_key(name)
        self.is_global = is_global
        self.headers: list[Origin] = []  # every [name] line that opened it
        #: Canonical name -> the winning assignment made in this section.
        self.settings: dict[str, Setting] = {}
        #: Parametric options (``vfs_module:option``), by their lower-cased name.
        self.parametric: dict[str, Setting] = {}
        #: Assignments a later one in this section replaced, in file order.
        self.overridden: list[Setting] = []
        #: (shares) Share-level values from [global] in effect when the share was created.
        self.inherited = inherited
        #: (shares) What ``copy =`` brought in; None stands for the source's default.
        self.copied: dict[str, Setting | None] = {}
        #: Values Samba sets itself while loading; they win over the file's.
        self.forced: dict[str, Forced] = {}
        #: (shares) Values a line of the share makes Samba set (its own printing style's
        #: commands); they replaced what the share set above that line, a later line wins.
        self.derived: dict[str, Forced] = {}

    def value(self, name: str) -> str | None:
        """What this section itself sets for ``name`` (a canonical name), or None."""
        setting = self.settings.get(name) or self.parametric.get(name)
        return setting.value if setting else None

    def own_settings(self) -> dict[str, Setting]:
        """Everything the section sets itself, parameters then parametric options."""
        if not self.parametric:
            return self.settings
        return {**self.settings, **self.parametric}

    def __repr__(self) -> str:
        return f"Section({self.name!r}, {len(self.settings)} settings)"


class Resolved(NamedTuple):
    """The value a section really gets for a parameter, and why."""

    value: str | None  # None: the catalog does not know the default
    source: Literal["set", "copied", "global", "default", "samba"]
    setting: Setting | None  # the assignment it comes from ("default": None)


class EffectiveConfig:
    """The result of :func:`effective_view`. See the module docstring for the rules."""

    def __init__(self, catalog: ParameterCatalog) -> None:
        self.catalog = catalog
        self.sections: dict[str, Section] = {}
        self.ignored: list[Ignored] = []
        self.problems: list[LoadProblem] = []
        self.includes: list[IncludeLink] = []
        self.documents: list[SmbConfDocument] = []
        self.global_section = Section(GLOBAL, True, {})
        self.sections[GLOBAL] = self.global_section
        #: Where ``config backend = registry`` is set, if it is: Samba then throws away
        #: everything it read from the files and loads its settings from the registry
        #: (``net conf``), so the view holds only what that switch itself sets.
        self.registry_backend: Origin | None = None

    def section(self, name: str) -> Section | None:
        """A section by name as Samba finds it (case-insensitive; any spelling of global)."""
        if is_global_section(name):
            return self.global_section
        return self.sections.get(section_key(name))

    def shares(self) -> Iterator[Section]:
        return (section for section in self.sections.values() if not section.is_global)

    @property
    def loads(self) -> bool:
        """False when the structure alone makes Samba refuse the file (lint finds value errors)."""
        return not self.problems

    def resolve(self, section_name: str, name: str) -> Resolved:
        """What ``section_name`` gets for parameter ``name``: set, copied, from [global], default.

        A share-level parameter a share does not set comes from the [global] values
        in effect when the share was first defined, else the version's default. A
        global-only parameter always resolves in [global].
        """
        parameter = self.catalog.parameters.get(name)  # canonical names: no folding needed
        if parameter is None:
            lookup = self.catalog.lookup(name)
            parameter = lookup.parameter if lookup else None
        canonical = parameter.name if parameter else name.lower()
        default = parameter.default if parameter else None
        section = self.section(section_name)
        if section is None:
            raise KeyError(section_name)
        if parameter is not None and parameter.scope == "global":
            section = self.global_section
        forced = section.forced.get(canonical)
        if forced is not None:
            return Resolved(forced.value, "samba", None)
        setting = section.settings.get(canonical) or section.parametric.get(canonical)
        if setting is not None:
            return Resolved(setting.value, "set", setting)
        derived = section.derived.get(canonical)
        if derived is not None:
            return Resolved(derived.value, "samba", None)
        if not section.is_global:
            if canonical in section.copied:
                copied = section.copied[canonical]
                if copied is None:
                    return Resolved(default, "default", None)
                return Resolved(copied.value, "copied", copied)
            inherited = section.inherited.get(canonical)
            if inherited is not None:
                return Resolved(inherited.value, "global", inherited)
        return Resolved(default, "default", None)

    def to_json(self) -> dict[str, dict[str, str]]:
        """{section: {canonical name: value}}: what each section sets itself, what it
        copied from another share, and what Samba set on its own (which wins)."""
        with paused_gc():
            return self._values()

    def samba_reading(self) -> dict[str, dict[str, str]]:
        """:meth:`to_json` with every value in the form testparm prints it (``read only =
        no`` -> ``No``, ``64k`` -> ``65536``, a list's separators as Samba joins them).

        This is what ``conf effective --testparm-values`` prints, and what the corpus test
        compares with testparm: forced, copied and rewritten values included. Parametric
        options (``x:y``) and names this Samba does not know keep their written text,
        as testparm does.
        """
        reading: dict[str, dict[str, str]] = {}
        netbios = self.resolve(GLOBAL, "netbios name")
        separator = self.resolve(GLOBAL, "winbind separator").value or "\\"
        with paused_gc():
            for section_name, values in self._values(kept=True).items():
                shown = {}
                for name, written in values.items():
                    if name == "include":
                        # The macros as testparm substitutes them; registry: not printed.
                        own_name = netbios.value if netbios.source != "default" else None
                        included = include_as_testparm_prints(written, own_name, separator)
                        # A share's include is a share default too: equal to [global]'s,
                        # testparm does not print it for the share.
                        if included is not None and included != reading.get(GLOBAL, {}).get(name):
                            shown[name] = included
                        continue
                    # _values() already chose each value (set, copied or Samba's own).
                    parameter = None if ":" in name else self.catalog.parameters.get(name)
                    value = stored_form(parameter, written) if parameter is not None else None
                    shown[name] = written if value is None else value
                reading[section_name] = shown
        return reading

    def _kept(self, share: Section, own: dict[str, str]) -> dict[str, str]:
        """Share-level values [global] set after ``share`` was defined, which it never saw:
        it keeps the default (or earlier [global] value) of its time, and testparm prints
        that for it, since it differs from what every later share gets."""
        kept = {}
        for name, setting in self.global_section.settings.items():
            if name in own or name in share.derived or share.inherited.get(name) is setting:
                continue
            parameter = self.catalog.parameters.get(name)
            if parameter is None or parameter.scope == "global":
                continue
            earlier = share.inherited.get(name)
            value = earlier.value if earlier is not None else parameter.default
            if value is not None and stored_form(parameter, value) != stored_form(parameter, setting.value):
                kept[name] = value
        return kept

    def _values(self, *, kept: bool = False) -> dict[str, dict[str, str]]:
        values = {}
        for section in self.sections.values():
            own = {name: setting.value for name, setting in section.own_settings().items()}
            for name, copied in section.copied.items():
                # include and copy act where they are written; a copy does not repeat them.
                if copied is not None and name not in own and name not in _SPECIAL:
                    own[name] = copied.value
            for name, derived in section.derived.items():
                own.setdefault(name, derived.value)
            for name, forced in section.forced.items():
                own[name] = forced.value
            if kept and not section.is_global:
                own.update(self._kept(section, own))
            values[section.name] = own
        return values


class _Walker:
    """Samba's loader, step by step (lp_do_section / lp_do_parameter)."""

    def __init__(
        self, result: EffectiveConfig, read_include: IncludeReader | None, cancel: CancelToken | None = None
    ) -> None:
        self.result = result
        self.cancel = cancel
        self.catalog = result.catalog
        self.read_include = read_include
        self.current = result.global_section
        # Share-level values set in [global] so far: new shares start from these.
        self.share_defaults: dict[str, Setting] = {}
        self.stack: list[str] = []
        self.stack_keys: list[str] = []  # include_key() of each file on the stack
        self.followed = 0  # includes followed so far
        self.walked_rows = 0
        # written name -> what classify() says about it
        self.names: dict[str, tuple[str, int]] = {}

    def classify(self, written: str) -> tuple[str, int]:
        """(canonical name, flags) for a written name; flags 0 is the common, plain case."""
        found = self.names.get(written)
        if found is not None:
            return found
        key = name_key(written)
        lookup = self.catalog.lookup_key(key)
        if lookup is not None:
            parameter = lookup.parameter
            flags = _SPECIAL.get(parameter.name, _LIST if parameter.type == "list" else 0)
            if parameter.name == "printing":
                flags |= _PRINTING
            if parameter.scope == "global":
                flags |= _GLOBAL_ONLY
            if lookup.inverse:
                flags |= _INVERSE
            found = (parameter.name, flags)
        elif ":" in written:
            found = (written.lower(), _PARAMETRIC)
        elif self.catalog.removed(written) is not None:
            found = (written, _REMOVED)
        else:
            found = (written, _UNKNOWN)
        self.names[written] = found
        return found

    def _edited_list(self, section: Section, name: str, text: str) -> str:
        """A list value written as +item/-item edits, applied to what the section has now."""
        parameter = self.catalog.get(name)
        if parameter is None or not list_uses_edits(text):
            return text
        setting = section.settings.get(name)
        if setting is None and not section.is_global:
            setting = section.copied[name] if name in section.copied else section.inherited.get(name)
        current = stored_form(parameter, setting.value) if setting is not None else parameter.default
        edited = testparm_form(parameter, text, current)
        return text if edited is None else edited

    def walk(self, document: SmbConfDocument) -> None:
        label = document.path or "<document>"
        self.result.documents.append(document)
        self.stack.append(label)
        self.stack_keys.append(include_key(label))
        self.walked_rows += len(document.rows)
        names = self.names
        classify = self.classify
        share_defaults = self.share_defaults
        parameter_kind = PARAMETER
        new_setting = _new_setting
        current = self.current
        settings, overridden, in_global = current.settings, current.overridden, current.is_global
        rows = document.rows if self.cancel is None else checked(document.rows, self.cancel)
        for index, row in enumerate(rows):
            if isinstance(row, str):
                continue
            kind, written, value, _ = row
            if kind is parameter_kind:
                canonical, flags = names.get(written) or classify(written)
                if flags:
                    self._special(canonical, flags, row, label, index)
                    if self.current is not current:  # an include opened another section
                        current = self.current
                        settings, overridden = current.settings, current.overridden
                        in_global = current.is_global
                    continue
                # The common case, kept short: a plain parameter, stored as written.
                setting: Setting = new_setting(
                    Setting, (canonical, value, written, value, label, index + 1, False)
                )
                previous = settings.get(canonical)
                if previous is not None:
                    overridden.append(previous)
                settings[canonical] = setting
                if in_global:
                    share_defaults[canonical] = setting
            else:
                self._structure(row, label, index)
                current = self.current
                settings, overridden = current.settings, current.overridden
                in_global = current.is_global
        self.stack.pop()
        self.stack_keys.pop()

    def _special(self, canonical: str, flags: int, row: Head, label: str, index: int) -> None:
        """A parameter that is unknown, parametric, global-only, inverse, a list, include or copy."""
        result = self.result
        current = self.current
        written = row[1]
        value: str = row[2]  # type: ignore[assignment]  # a parameter always has one
        if flags & _NOT_APPLIED:
            origin = Origin(label, index + 1)
            if flags & _PARAMETRIC:
                self._parametric(canonical, written, value, origin)
            else:
                reason: IgnoreReason = "removed" if flags & _REMOVED else "unknown"
                result.ignored.append(Ignored(reason, current.name, written, value, origin))
            return
        if flags & _GLOBAL_ONLY and not current.is_global:
            result.ignored.append(
                Ignored("global-in-share", current.name, written, value, Origin(label, index + 1))
            )
            return
        stored = value
        if flags & _INVERSE:
            flag = parse_boolean(value)
            if flag is not None:
                stored = boolean_text(not flag)
        elif flags & _LIST:
            stored = self._edited_list(current, canonical, value)
        inverse = bool(flags & _INVERSE)
        setting = Setting(canonical, stored, written, value, label, index + 1, inverse)
        previous = current.settings.get(canonical)
        if previous is not None:
            current.overridden.append(previous)
        current.settings[canonical] = setting
        if current.is_global and not flags & _GLOBAL_ONLY:
            self.share_defaults[canonical] = setting
        if flags & _INCLUDE:
            self._include(value, setting.origin)
        elif flags & _COPY:
            self._copy(value, setting.origin)
        elif canonical in _IDMAP_PARAMETRIC and current.is_global:
            self._parametric(_IDMAP_PARAMETRIC[canonical], written, value, setting.origin)
        elif flags & _PRINTING and not current.is_global:
            self._printing_commands(current, value, setting.origin)

    def _printing_commands(self, share: Section, style: str, origin: Origin) -> None:
        """A share's own printing style sets its print commands at this line (handle_printing)."""
        commands = PRINT_COMMANDS.get(name_key(style))
        if commands is None:
            return  # a value Samba ignores: nothing changes
        reason = f"printing = {style}"
        for name, value in commands.items():
            earlier = share.settings.pop(name, None)
            if earlier is not None:
                share.overridden.append(earlier)  # Samba writes over it
            share.copied.pop(name, None)  # and over what a copy = above brought
            share.derived[name] = Forced(name, value, reason, origin)

    def _structure(self, row: Head, label: str, index: int) -> None:
        """A section header, or a line Samba ignores or refuses."""
        kind = row[0]
        result = self.result
        origin: Origin = _new_setting(Origin, (label, index + 1))
        if kind == SECTION:
            self._section(row[1], origin)
        elif kind == "text":
            if row[1]:
                result.ignored.append(Ignored("no-equals", self.current.name, row[1], None, origin))
        elif kind == "bad-section":
            result.problems.append(
                LoadProblem(
                    "bad-section",
                    self.current.name,
                    f"The section header [{row[1]} has no closing bracket.",
                    origin,
                )
            )
        elif kind == "empty-name":
            result.problems.append(
                LoadProblem(
                    "empty-name",
                    self.current.name,
                    "A line starts with '=': the parameter name is missing.",
                    origin,
                )
            )

    def _section(self, name: str, origin: Origin) -> Section:
        result = self.result
        leaving = self.current
        to_global = is_global_section(name)
        if not leaving.is_global:
            self.close_share(leaving)
        elif not to_global:
            self._global_block_ended(origin)
        if not name:
            result.problems.append(
                LoadProblem("empty-section", self.current.name, "A section header [] has no name.", origin)
            )
        if to_global:
            section = result.global_section
        else:
            key = section_key(name)
            opened = result.sections.get(key)
            if opened is None:
                # The dict copy is what makes a later [global] block miss this share.
                section = Section(name, False, dict(self.share_defaults))
                result.sections[key] = section
            else:
                section = opened
                if section.parametric:
                    # Samba frees a share's parametric options when its section reopens.
                    for setting in section.parametric.values():
                        result.ignored.append(
                            Ignored(
                                "parametric-dropped",
                                section.name,
                                setting.written_name,
                                setting.written_value,
                                setting.origin,
                            )
                        )
                    section.parametric = {}
        section.headers.append(origin)
        self.current = section
        return section

    # -- what Samba sets on its own ----------------------------------------------------
    def _force(self, section: Section, name: str, value: str, reason: str, origin: Origin) -> None:
        section.forced[name] = Forced(name, value, reason, origin)
        if section.is_global and ":" not in name:
            parameter = self.catalog.get(name)
            if parameter is not None and parameter.scope != "global":
                # A share-level value set in [global]: shares defined later start from it.
                self.share_defaults[name] = Setting(name, value, name, value, origin.file, origin.line, False)

    def _is_ad_dc(self) -> bool:
        role = self.result.resolve(GLOBAL, "server role").value or ""
        return name_key(role) in _AD_DC_ROLES

    def _global_block_ended(self, origin: Origin) -> None:
        """A share header after [global] (init_locals): an AD DC's share defaults."""
        if not self._is_ad_dc():
            return
        result, global_section = self.result, self.result.global_section
        reason = "server role = active directory domain controller"
        if not (result.resolve(GLOBAL, "vfs objects").value or "").strip():
            modules = "dfs_samba4 acl_xattr"
            if result.resolve(GLOBAL, "xattr_tdb:file").value is not None:
                modules += " xattr_tdb"
            elif result.resolve(GLOBAL, "posix:eadb").value is not None:
                modules += " posix_eadb"
            self._force(global_section, "vfs objects", modules, reason, origin)
        for name, value in _AD_DC_SHARE_DEFAULTS:
            self._force(global_section, name, value, reason, origin)

    def close_share(self, section: Section) -> None:
        """The end of a share's block (lpcfg_service_ok): Samba's corrections."""
        result = self.result
        origin = section.headers[-1] if section.headers else Origin("", 0)
        if section.key == "printers":
            if parse_boolean(result.resolve(section.name, "printable").value or "") is not True:
                self._force(section, "printable", "Yes", "[printers] is always printable", origin)
            # A value Samba refuses leaves the default (yes), which is then turned off too.
            if parse_boolean(result.resolve(section.name, "browseable").value or "yes") is not False:
                self._force(section, "browseable", "No", "[printers] is never browseable", origin)
        own_path = section.settings.get("path")  # most shares set their own: no lookups
        if (
            section.key != "homes"
            and not (own_path is not None and own_path.value)
            and not (result.resolve(section.name, "path").value or "")
            and not (result.resolve(section.name, "msdfs proxy").value or "")
        ):
            self._force(section, "available", "No", "a share without a path is made unavailable", origin)

    def finish(self) -> None:
        """After the whole file (lp_load_ex): the last share's check, an AD DC's settings."""
        if not self.current.is_global:
            self.close_share(self.current)
        dos = self.result.global_section.settings.get("dos charset")
        if dos is not None and name_key(dos.value) in ("utf8", "utf-8"):
            # handle_dos_charset: a multi-byte DOS charset cannot work; Samba uses CP850.
            self._force(
                self.result.global_section,
                "dos charset",
                "CP850",
                "a DOS charset cannot be UTF-8",
                dos.origin,
            )
        backend = self.result.global_section.settings.get("config backend")
        if backend is not None and name_key(backend.value) == "registry":
            self._registry_backend(backend.origin)
            return
        if self._is_ad_dc():
            setting = self.result.global_section.settings.get("server role")
            origin = setting.origin if setting else Origin("", 0)
            for name, value in _AD_DC_GLOBALS:
                self._force(
                    self.result.global_section,
                    name,
                    value,
                    "server role = active directory domain controller",
                    origin,
                )

    def _registry_backend(self, origin: Origin) -> None:
        """lp_load_ex (source3/param/loadparm.c): with the backend switched to the registry
        it drops every service and global it read, starts over from the registry's
        globals and shares, and process_registry_globals turns on 'registry shares'. What
        the registry holds is not in the files, so nothing of it is shown."""
        result = self.result
        result.registry_backend = origin
        fresh = Section(GLOBAL, True, {})
        fresh.headers = list(result.global_section.headers)
        result.global_section = fresh
        result.sections = {GLOBAL: fresh}
        self._force(fresh, "registry shares", "Yes", "config backend = registry", origin)

    def _parametric(self, canonical: str, written: str, value: str, origin: Origin) -> None:
        current = self.current
        key = name_key(canonical)
        previous = None
        for name, setting in current.parametric.items():
            if name_key(name) == key:
                previous, canonical = setting, name  # the first spelling is kept
                break
        setting = Setting(canonical, value, written, value, origin.file, origin.line, False)
        if previous is not None:
            current.overridden.append(previous)
        current.parametric[canonical] = setting

    def _copy(self, source_name: str, origin: Origin) -> None:
        current = self.current
        result = self.result
        if current.is_global:
            result.problems.append(
                LoadProblem("copy-in-global", current.name, "copy = only works inside a share.", origin)
            )
            return
        source = result.sections.get(section_key(source_name))
        if source is None or source.is_global:
            result.problems.append(
                LoadProblem(
                    "copy-missing",
                    current.name,
                    f"copy = {source_name}: no share of that name is defined above this line.",
                    origin,
                )
            )
            return
        if source is current:
            result.problems.append(
                LoadProblem("copy-self", current.name, f"[{current.name}] cannot copy itself.", origin)
            )
            return
        # Samba copies every share-level value the source has, except the ones this
        # share set itself before the copy line (its "copymap").
        names = set(source.settings) | set(source.copied) | set(source.inherited)
        names |= set(current.inherited) | set(current.copied)
        for name in names:
            if name in current.settings:
                continue
            if name in source.settings:
                current.copied[name] = source.settings[name]
            elif name in source.copied:
                current.copied[name] = source.copied[name]
            else:
                current.copied[name] = source.inherited.get(name)
        for name, setting in source.parametric.items():
            current.parametric[name] = setting
        for name, derived in source.derived.items():
            if name not in current.settings and name not in source.settings:
                current.copied.pop(name, None)
                current.derived[name] = derived

    def _include(self, path: str, origin: Origin) -> None:
        result = self.result
        section = self.current.name
        # self.stack holds the main file too: its length is this line's depth + 1.
        if len(self.stack) > MAX_INCLUDE_DEPTH:
            result.includes.append(
                IncludeLink(
                    origin,
                    section,
                    path,
                    "too-deep",
                    None,
                    f"includes nest more than {MAX_INCLUDE_DEPTH} deep",
                )
            )
            result.problems.append(
                LoadProblem(
                    "include-too-deep",
                    section,
                    f"{path} would be include {len(self.stack)} of a chain; Samba allows "
                    f'{MAX_INCLUDE_DEPTH} nested includes, stops with "Maximum include depth '
                    f'({MAX_INCLUDE_DEPTH}) exceeded!" and refuses the configuration.',
                    origin,
                )
            )
            return
        if name_key(path) == "registry":
            if not self.current.is_global:
                result.problems.append(
                    LoadProblem(
                        "include-registry-in-share",
                        section,
                        "include = registry only works in [global].",
                        origin,
                    )
                )
            else:
                self._force(self.current, "registry shares", "Yes", "include = registry", origin)
            result.includes.append(
                IncludeLink(
                    origin, section, path, "registry", None, "settings stored in the registry are not read"
                )
            )
            return
        if "%" in path:
            result.includes.append(
                IncludeLink(
                    origin,
                    section,
                    path,
                    "macro",
                    None,
                    "the path depends on %-substitutions Samba makes per connection",
                )
            )
            return
        if not path.startswith("/"):
            result.includes.append(
                IncludeLink(
                    origin,
                    section,
                    path,
                    "relative",
                    None,
                    "a relative path is resolved against smbd's working directory",
                )
            )
            return
        if include_key(path) in self.stack_keys:
            result.includes.append(
                IncludeLink(origin, section, path, "loop", None, "the file is already being read")
            )
            result.problems.append(
                LoadProblem(
                    "include-loop",
                    section,
                    f"{path} includes itself (directly or through other files).",
                    origin,
                )
            )
            return
        if self.read_include is None:
            result.includes.append(IncludeLink(origin, section, path, "not-followed", None))
            return
        if self.followed >= MAX_FOLLOWED_INCLUDES or self.walked_rows >= MAX_WALKED_ROWS:
            result.includes.append(
                IncludeLink(
                    origin,
                    section,
                    path,
                    "too-many",
                    None,
                    f"past {MAX_FOLLOWED_INCLUDES:,} included files (or {MAX_WALKED_ROWS:,} lines) "
                    "in one reading, SambaTune follows no more",
                )
            )
            return
        self.followed += 1
        found = self.read_include(path)
        if isinstance(found, tuple):
            status, detail = found
            result.includes.append(IncludeLink(origin, section, path, status, None, detail))
            return
        result.includes.append(IncludeLink(origin, section, path, "followed", found))
        self.walk(found)


def effective_view(
    document: SmbConfDocument,
    catalog: ParameterCatalog,
    *,
    read_include: IncludeReader | None = None,
    cancel: CancelToken | None = None,
) -> EffectiveConfig:
    """Read ``document`` as Samba would, with ``catalog``'s names and scopes.

    ``read_include`` fetches included files (see :mod:`sambatune.conf.includes`);
    without it includes are listed but not followed. ``cancel`` stops a long walk
    (:class:`~sambatune.errors.Cancelled` is raised).
    """
    result = EffectiveConfig(catalog)
    with paused_gc():
        walker = _Walker(result, read_include, cancel)
        walker.walk(document)
        walker.finish()
    return result
