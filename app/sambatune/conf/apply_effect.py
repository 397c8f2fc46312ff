"""What a new smb.conf must prove before it replaces the live one.

testparm accepting a file says it loads, not that it does what the edit meant. Two
checks close that gap, both on the server, before anything changes:

- **the change takes effect**: every value the new version sets that the old one did
  not (read from the edited file alone, section by section) must be what testparm
  reads for that section from the candidate, its includes resolved where the server
  resolves them. A line that lands inside an included share, or that a later line or
  include overrides, fails here;
- **smbd can start again**: a value testparm accepts that makes smbd abort at its next
  start (``max open files`` of 100 or less) is refused, since a reload would hide it
  until the next reboot;
- **no share vanishes unasked**: every share smbd lists now must be one the candidate
  defines, unless the change itself removed it (testparm of the live file has it, the
  candidate's does not). A share served from an include that has since gone missing
  would otherwise disappear at the reload.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from sambatune.conf.catalog import Parameter, ParameterCatalog
from sambatune.conf.document import PARAMETER, SmbConfDocument
from sambatune.conf.effective import GLOBAL, EffectiveConfig, effective_view
from sambatune.conf.normalize import NOT_SHOWN_BY_TESTPARM, list_uses_edits, testparm_form
from sambatune.conf.syntax import collapse_blanks, name_key, section_key
from sambatune.conf.testparm_output import dump_by_section
from sambatune.conf.values import parse_integer
from sambatune.remote.transport import Transport

#: Between testparm's answers for one setting and the next.
_SEPARATOR = "\x1e"
#: One testparm per setting, in one command: each loads the whole configuration.
_ASK_EACH = (
    'file=$1; shift; while [ "$#" -ge 2 ]; do '
    'testparm -s --suppress-prompt --section-name="$1" --parameter-name="$2" "$file" 2>/dev/null '
    "| head -c 65536; printf '\\n\\036\\n'; shift 2; done"
)
#: The most settings asked for one by one; beyond it, the first ones stand for the rest.
MAX_ASKED = 40


class Intended(NamedTuple):
    section: str
    name: str  # canonical where the catalog knows it
    value: str | None  # as written; None: the line went, the share now takes [global]'s
    parameter: Parameter | None

    def describe(self) -> str:
        if self.value is None:
            return f"[{self.section}] {self.name} removed"
        return f"[{self.section}] {self.name} = {self.value}"


def _own(view: EffectiveConfig) -> dict[tuple[str, str], tuple[str, str]]:
    """{(section key, canonical name): (section name, value)} the file sets itself."""
    own = {}
    for section in view.sections.values():
        for name, setting in section.settings.items():
            if name in ("include", "copy"):
                continue
            own[(section.key, name)] = (section.name, setting.value)
    return own


def _takes_global(view: EffectiveConfig, section_key: str, name: str, parameter: Parameter | None) -> bool:
    """After the removal, does this share get [global]'s value for ``name``? Not when it
    is gone, copies another share, is defined above a late [global], or Samba sets it."""
    share = view.sections.get(section_key)
    if share is None or share.is_global or parameter is None or parameter.scope == "global":
        return False
    resolved = view.resolve(share.name, name)
    if resolved.source == "global":
        return True
    return resolved.source == "default" and name not in view.global_section.settings


def intended_sets(original: bytes, candidate: bytes, path: str, catalog: ParameterCatalog) -> list[Intended]:
    """The settings the candidate makes that the original did not (new or changed values),
    then the share settings it removes where the share should now take [global]'s.
    ``catalog`` is the server's release's: names mean what that release makes of them."""
    after_view = effective_view(SmbConfDocument(candidate, path), catalog)
    before = _own(effective_view(SmbConfDocument(original, path), catalog))
    after = _own(after_view)
    intended = []
    for key, (section, value) in after.items():
        if before.get(key, (None, None))[1] == value:
            continue
        if key[1] in NOT_SHOWN_BY_TESTPARM:
            continue  # testparm sets its own log level: the file's is never shown
        parameter = catalog.parameters.get(key[1])
        if parameter is not None and parameter.type == "list" and list_uses_edits(value):
            continue  # "+item" edits the value before it: no one value to expect
        intended.append(Intended(section, key[1], value, parameter))
    for key, (section, _) in before.items():
        parameter = catalog.parameters.get(key[1])
        if key not in after and _takes_global(after_view, key[0], key[1], parameter):
            intended.append(Intended(section, key[1], None, parameter))
    return intended


def _expected(intended: Intended) -> str | None:
    value = intended.value or ""
    if intended.parameter is None:
        return collapse_blanks(value.strip())
    return testparm_form(intended.parameter, value)


def unshown_changes(
    transport: Transport, candidate_path: str, intended: list[Intended], *, sudo: bool = False
) -> list[str]:
    """The intended settings testparm does not read from the candidate, each as a sentence."""
    asked = intended[:MAX_ASKED]
    if not asked:
        return []
    argv = ["sh", "-c", _ASK_EACH, "ask", candidate_path]
    for item in asked:
        argv += [item.section, item.name]
    removed = [item for item in asked if item.value is None]
    for item in removed:  # what the share should now get
        argv += [GLOBAL, item.name]
    result = transport.run(argv, sudo=sudo, timeout=120)
    answers = [part.strip() for part in result.text.split(_SEPARATOR)]
    answers += [""] * (len(asked) + len(removed) - len(answers))
    asked_global = answers[len(asked) : len(asked) + len(removed)]
    global_answers = dict(zip((item.name for item in removed), asked_global, strict=True))
    failures = []
    for index, item in enumerate(asked):
        shown = answers[index]
        if item.value is None:
            expected: str | None = global_answers[item.name]
            if shown != expected:
                failures.append(f"{item.describe()}: testparm reads {shown!r}, not [global]'s {expected!r}")
            continue
        expected = _expected(item)
        if expected is None:
            continue  # a value Samba refuses: testparm already said so
        if shown != expected:
            reads = f"reads {shown!r}" if shown else "does not read it there"
            failures.append(f"{item.describe()}: testparm {reads}")
    return failures


#: smbd's file_init_global() asserts room for more than this many open files.
MIN_OPEN_FILES = 100


def start_blockers(new_dump: str) -> list[str]:
    """Values in testparm's reading of the candidate that smbd cannot start with, as sentences.

    A reload keeps the running smbd's open-file limit (it is set once, at start), so the
    file would only fail at the next restart or reboot, far from the change that caused it."""
    written = dump_by_section(new_dump).get("global", {}).get("max open files")
    if written is None or parse_integer(written) > MIN_OPEN_FILES:
        return []
    return [
        f"max open files = {written}: smbd panics at start below {MIN_OPEN_FILES + 1} "
        "(testparm accepts it, and a reload would hide it until the next restart)"
    ]


def removed_by_change(old_dump: str, new_dump: str) -> set[str]:
    """Section keys testparm reads from the live file and not from the candidate."""
    return set(dump_by_section(old_dump)) - set(dump_by_section(new_dump))


def vanishing_shares(served: list[str], old_dump: str, new_dump: str) -> list[str]:
    """Shares smbd lists now that the candidate would lose though the change does not remove them."""
    defined = set(dump_by_section(new_dump))
    removed = removed_by_change(old_dump, new_dump)
    return [
        share for share in served if section_key(share) not in defined and section_key(share) not in removed
    ]


#: Prints each name that is neither a home service nor a user share. $1: "homes" when
#: the configuration has [homes] (smbd then serves a user's home under the user's name);
#: $2: the usershare folder, empty when user shares are off.
_NOT_FROM_ELSEWHERE = (
    "homes=$1; usershares=$2; shift 2; for name; do "
    '[ -n "$homes" ] && getent passwd "$name" >/dev/null 2>&1 && continue; '
    'lower=$(printf "%s" "$name" | tr "[:upper:]" "[:lower:]"); '
    '[ -n "$usershares" ] && [ -f "$usershares/$lower" ] && continue; '
    'printf "%s\\n" "$name"; done'
)


def not_from_elsewhere(
    transport: Transport, shares: list[str], new_dump: str, *, sudo: bool = False
) -> list[str]:
    """The shares among ``shares`` that no file defines and that are not a user's home
    (``[homes]`` serves it under the user's name) or a user share (``net usershare``)
    either: those are the ones the file lost. One round trip."""
    if not shares:
        return []
    sections = dump_by_section(new_dump)
    homes = "homes" if "homes" in sections else ""
    shown = sections.get(GLOBAL, {})
    try:
        allowed = int(shown.get("usershare max shares", "0"))
    except ValueError:
        allowed = 0
    folder = shown.get("usershare path", "/var/lib/samba/usershares") if allowed > 0 else ""
    argv = ["sh", "-c", _NOT_FROM_ELSEWHERE, "shares", homes, folder, *shares]
    result = transport.run(argv, sudo=sudo, timeout=60)
    if not result.ok:
        return shares  # cannot tell: each still counts as lost
    left = set(result.text.splitlines())
    return [share for share in shares if share in left]


def kept_shares(served: list[str], new_dump: str) -> list[str]:
    """The shares smbd lists now that the candidate defines too."""
    defined = set(dump_by_section(new_dump))
    return [share for share in served if section_key(share) in defined]


_MISSING = 'for f; do [ -e "$f" ] || printf "%s\\n" "$f"; done'


def missing_includes(transport: Transport, candidate: bytes, *, sudo: bool = False) -> list[str]:
    """Absolute include paths the candidate names that are not on the server."""
    paths = []
    for entry in SmbConfDocument(candidate).entries():
        path = (entry.value or "").strip()
        is_include = entry.kind == PARAMETER and name_key(entry.name) == "include"
        if is_include and path.startswith("/") and "%" not in path:
            paths.append(posixpath.normpath(path))
    if not paths:
        return []
    result = transport.run(["sh", "-c", _MISSING, "missing", *dict.fromkeys(paths)], sudo=sudo, timeout=60)
    return [line for line in result.text.splitlines() if line]
