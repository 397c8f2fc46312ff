"""Real smb.conf files written by people, read by SambaTune and by testparm: they must agree.

The corpus (tests/data/smbconf_corpus, sources in its SOURCES.json) holds files from
public repositories: home NAS, Docker images, distro defaults, AD members and DCs, Time
Machine shares, printers. For every file testparm accepts, ``conf effective --json
--testparm-values`` (the view's ``samba_reading``) must say what testparm says, section
by section: every parameter either prints, in Samba's own form. For every file testparm
refuses, lint must report an error for the same reason on the line that causes it.
Every file must survive load-then-save byte for byte.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import effective_view
from sambatune.conf.includes import LocalIncludes
from sambatune.conf.lint import lint
from sambatune.conf.normalize import NOT_SHOWN_BY_TESTPARM, stored_form
from sambatune.conf.testparm_output import parse_dump
from test_conf_oracle import ALWAYS_PRINTED, installed_catalog

CORPUS = Path(__file__).parent / "data" / "smbconf_corpus"
FILES = sorted(CORPUS.glob("*.conf"))
# Printed by testparm for every file, whatever it says.
ALWAYS = ALWAYS_PRINTED


# testparm's own words for a refusal -> the lint code that must report the same reason.
REASONS = {
    "there is no valid 'passwd program'": "testparm-passwd-program",
    "requires 'realm' parameter": "testparm-ads-realm",
    "requires 'workgroup' parameter": "testparm-ads-workgroup",
    "overlaps with the range of": "testparm-idmap-overlap",
    "backend as the default idmap backend": "testparm-idmap-default-backend",
    "'winbind separator' parameter must": "testparm-winbind-separator",
    "cannot be set in the smb.conf file. nmbd will abort": "testparm-wins",
    "Ignoring invalid value 'share' for parameter 'security'": "invalid-enum",
    "requires a '%u' parameter": "testparm-passwd-program-user",
}


# testparm names no line; the line a refusal belongs to is the assignment that causes it,
# found here by its own pattern (not by SambaTune's reader): the last one in the file wins,
# as the last assignment does in Samba.
REASON_LINES = {
    "testparm-passwd-program": r"unix\s*password\s*sync\s*=",
    "testparm-passwd-program-user": r"passwd\s*program\s*=",
    "testparm-ads-realm": r"security\s*=\s*ads\s*$",
    "testparm-ads-workgroup": r"security\s*=\s*ads\s*$",
    "invalid-enum": r"security\s*=\s*share\s*$",
    "testparm-winbind-separator": r"winbind\s*separator\s*=",
    "testparm-idmap-default-backend": r"idmap\s*config\s*\*\s*:\s*backend\s*=",
    "testparm-wins": r"wins\s*(server|support)\s*=",
}
OVERLAP = re.compile(r"idmap range for the domain (\S+) .*overlaps with the range of (\S+) ")


def cause_lines(path: Path, code: str, stderr: str) -> set[int] | None:
    """The lines a refusal can be reported on; None when this test cannot tell."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()

    def last(pattern: str) -> set[int]:
        found = [n for n, line in enumerate(lines, 1) if re.match(r"^\s*" + pattern, line, re.IGNORECASE)]
        return {found[-1]} if found else set()

    if code == "testparm-idmap-overlap":
        # Either range of the overlapping pair is the cause; the default domain's range
        # may come from the old 'idmap uid'/'idmap gid' spelling.
        match = OVERLAP.search(stderr)
        if match is None:
            return None
        causes: set[int] = set()
        for domain in match.groups():
            causes |= last(r"idmap\s*config\s*" + re.escape(domain) + r"\s*:\s*range\s*=")
            if domain == "*":
                causes |= last(r"idmap\s*uid\s*=") | last(r"idmap\s*gid\s*=")
        return causes
    return last(REASON_LINES[code]) if code in REASON_LINES else None


def run_testparm_s(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["testparm", "-s", "-d", "0", *extra, str(path)],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=60,
    )


@cache
def verdict(path: Path) -> tuple[bool, str, str, str]:
    """(testparm accepts it, its -s dump, its -sv dump, its stderr)."""
    terse = run_testparm_s(path)
    refused = terse.returncode != 0 or "Error loading services" in terse.stderr
    verbose = run_testparm_s(path, "-v") if not refused else terse
    return not refused, terse.stdout, verbose.stdout, terse.stderr


def disagreements(path: Path) -> list[str]:
    """Where ``conf effective`` and lint differ from testparm on one file (empty: none)."""
    catalog = installed_catalog()
    document = SmbConfDocument.read(str(path))
    view = effective_view(document, catalog, read_include=LocalIncludes())
    errors = [f for f in lint(document, catalog, view=view) if f.severity == "error"]
    accepted, terse_text, verbose_text, stderr = verdict(path)
    if not accepted:
        if not errors:
            return [f"testparm refuses it, lint finds no error:\n{stderr[-600:]}"]
        reasons = {code for fragment, code in REASONS.items() if fragment in stderr}
        if not reasons:
            return [f"testparm refuses it for a reason this test does not know:\n{stderr[-600:]}"]
        problems = []
        for code in sorted(reasons):
            lines = sorted(f.line for f in errors if f.code == code)
            expected = cause_lines(path, code, stderr)
            if not lines:
                problems.append(
                    f"testparm refuses it ({code}); lint reports {sorted({f.code for f in errors})}"
                )
            elif expected is not None and not expected & set(lines):
                problems.append(
                    f"{code}: lint says line(s) {lines}, the cause is on line(s) {sorted(expected)}"
                )
        return problems
    if errors:
        return [f"lint reports errors testparm does not: {errors[:3]}"]
    terse = dict(parse_dump(terse_text))
    verbose = dict(parse_dump(verbose_text))
    # Exactly what `sambatune conf effective FILE --json --testparm-values` prints.
    ours = view.samba_reading()
    problems = []
    if list(ours) != [name for name, _ in parse_dump(terse_text)]:
        return [f"sections: ours {list(ours)} testparm {[n for n, _ in parse_dump(terse_text)]}"]
    for section_name, values in ours.items():
        printed = terse.get(section_name, {})
        shown_all = verbose.get(section_name, {})
        names = [
            n
            for n in dict.fromkeys([*values, *printed])
            if n not in NOT_SHOWN_BY_TESTPARM and n not in ("include",) and n not in ALWAYS
        ]
        for name in names:
            parameter = catalog.get(name)
            if ":" in name:
                theirs = printed.get(name)
                ours_value = values.get(name)
            elif parameter is None:
                problems.append(f"[{section_name}] {name}: not a parameter of this Samba")
                continue
            else:
                if name in printed and name not in values and section_name != "global":
                    # A share prints what differs from what shares get by default now:
                    # a value kept from above a late [global], derived, copied, forced.
                    problems.append(f"[{section_name}] {name}: testparm prints {printed[name]!r}, ours not")
                if name in values:
                    ours_value = values[name]
                else:  # testparm prints it, the file does not set it: inherited or default
                    resolved = view.resolve(section_name, name)
                    ours_value = (
                        parameter.default
                        if resolved.source == "default"
                        else (stored_form(parameter, resolved.value or ""))
                    )
                theirs = printed.get(name, shown_all.get(name, verbose.get("global", {}).get(name)))
                if (
                    name not in printed
                    and parameter.type in ("string", "ustring")
                    and (ours_value or "").lower() == (theirs or "").lower()
                ):
                    continue  # a share prints a string only when it differs, ignoring case
            if ours_value != theirs:
                problems.append(f"[{section_name}] {name}: ours {ours_value!r} testparm {theirs!r}")
    return problems


def test_the_corpus_is_big_varied_and_sourced() -> None:
    sources = json.loads((CORPUS / "SOURCES.json").read_text())
    assert len(FILES) >= 100
    assert sorted(entry["file"] for entry in sources) == [path.name for path in FILES]
    assert all(entry["repository"] and entry["path"] for entry in sources)
    kinds = {entry["kind"] for entry in sources}
    assert {"ad-dc", "ad-member", "time-machine", "printers", "distro-default"} <= kinds


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_real_file_reads_like_testparm(path: Path) -> None:
    problems = disagreements(path)
    assert not problems, "\n".join(problems[:8])


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_real_file_saves_byte_for_byte(path: Path) -> None:
    # read() is how the editor and the apply load a file; render() is what they write.
    assert SmbConfDocument.read(str(path)).render() == path.read_bytes()


# testparm's warnings for what lpcfg_service_ok (lib/param/loadparm.c) corrects on its own.
NO_PATH = re.compile(r"WARNING: No path in service (.+) - making it unavailable!")
NOT_PRINTABLE = re.compile(r"WARNING: \[(.+)\] service MUST be printable!")


@pytest.mark.testbed  # runs Samba's own programs
def test_lint_warns_where_testparm_makes_a_share_unavailable_or_printable() -> None:
    """Across the corpus: lint warns about exactly the shares testparm warns about."""
    catalog = installed_catalog()
    seen = 0
    for path in FILES:
        accepted, _terse, _verbose, stderr = verdict(path)
        if not accepted:
            continue
        theirs = {("share-without-path", m.lower()) for m in NO_PATH.findall(stderr)}
        theirs |= {("printers-not-printable", m.lower()) for m in NOT_PRINTABLE.findall(stderr)}
        document = SmbConfDocument.read(str(path))
        findings = lint(document, catalog, read_include=LocalIncludes())
        ours = {
            (f.code, f.section.lower())
            for f in findings
            if f.code in ("share-without-path", "printers-not-printable")
        }
        assert ours == theirs, path.name
        seen += len(theirs)
    assert seen >= 1, "the corpus should hold at least one share testparm corrects"
