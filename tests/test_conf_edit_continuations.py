"""Edits next to backslash continuations: the right logical line changes, nothing else does.

Samba joins a line that ends in a backslash with the next one (lib/util/tini.c), so a
line added after a file's dangling last backslash would become part of that entry's
value. Every case is checked with the installed testparm: the edited parameter has
the new value and every other value, the continued one included, is what it was.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.edits import LineChange, rename_section, set_parameter
from sambatune.conf.effective import effective_view
from sambatune.conf.normalize import stored_form
from sambatune.conf.syntax import name_key
from sambatune.conf.testparm_output import parse_dump
from sambatune.errors import InvalidInput
from smbconf_generator import GLOBAL_PARAMETERS, SHARE_PARAMETERS, ConfigGenerator


@cache
def catalog() -> ParameterCatalog:
    return load_bundled("4.17")


def dump_of(path: Path, data: bytes) -> dict[str, dict[str, str]] | None:
    """testparm -s's sections and values for ``data``; None if it refuses the file."""
    path.write_bytes(data)
    result = subprocess.run(
        ["testparm", "-s", "-d", "0", str(path)],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=60,
    )
    if result.returncode != 0 or "Error loading services" in result.stderr:
        return None
    return dict(parse_dump(result.stdout))


def replay(before: list[str], changes: list[LineChange]) -> list[str]:
    lines = list(before)
    for change in changes:
        lines[change.first - 1 : change.first - 1 + change.removed] = list(change.inserted)
    return lines


def assert_edits_only(document: SmbConfDocument, section: str, name: str, value: str) -> None:
    """Set the value and check that only the lines of ``name``'s own entry were replaced."""
    original = document.copy()
    lines = document.raw_lines
    changes = set_parameter(document, section, name, value, catalog())
    assert replay(lines, changes) == document.raw_lines
    for change in changes:
        if change.removed == 1 and change.inserted[0] == original.raw_line(change.first) + "\r":
            continue  # the old last line of a CRLF file got its line ending, nothing else
        if change.removed:
            entry = original.entry_at(change.first)
            assert entry is not None and entry.line == change.first
            assert entry.last_line == change.first + change.removed - 1
            own, wanted = catalog().lookup(entry.name), catalog().lookup(name)
            assert own is not None and wanted is not None
            assert own.parameter.name == wanted.parameter.name


# (text, section, name, value, what testparm prints for it; None: nothing, the default)
CASES = {
    "last line ends in a backslash": (
        "[data]\n   path = /srv/data\n   comment = first \\\n",
        "data",
        "browseable",
        "no",
        "No",
    ),
    "a backslash and blanks": (
        "[data]\n   path = /srv/data\n   comment = first \\ \t\n",
        "data",
        "browseable",
        "no",
        "No",
    ),
    "CRLF": ("[data]\r\n   path = /srv/data\r\n   comment = first \\\r\n", "data", "browseable", "no", "No"),
    "continued twice, then dangling": (
        "[data]\n   path = /srv/data\n   comment = first \\\n      second \\\n",
        "data",
        "browseable",
        "no",
        "No",
    ),
    "no final newline": (
        "[data]\n   path = /srv/data\n   comment = first \\",
        "data",
        "browseable",
        "no",
        "No",
    ),
    "two backslashes": (
        "[data]\n   path = /srv/data\n   comment = first \\\\\n",
        "data",
        "browseable",
        "no",
        "No",
    ),
    "the continued entry is replaced": (
        "[data]\n   path = /srv/data\n   comment = first \\\n      second\n   oplocks = no\n",
        "data",
        "comment",
        "new",
        "new",
    ),
    "after a continuation in the middle": (
        "[data]\n   comment = first \\\n   path = /x\n   browseable = no\n",
        "data",
        "browseable",
        "yes",
        None,
    ),
    "a header ending in a backslash": (
        "[data]\n   path = /srv/data\n[other] \\\n",
        "other",
        "comment",
        "other one",
        "other one",
    ),
    "ignored words ending in a backslash": (
        "[data]\n   path = /srv/data\n   just words \\\n",
        "data",
        "comment",
        "c",
        "c",
    ),
    "[global] after the shares": (
        "[s]\n   path = /s\n[global]\n   workgroup = W \\\n",
        "global",
        "server string",
        "S",
        "S",
    ),
    "a new share after it": (
        "[data]\n   path = /srv/data\n   comment = first \\\n",
        "newshare",
        "path",
        "/srv/new",
        "/srv/new",
    ),
}


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("case", list(CASES))
def test_set_next_to_a_continuation_reads_right_in_testparm(case: str, tmp_path: Path) -> None:
    text, section, name, value, printed = CASES[case]
    path = tmp_path / "smb.conf"
    before = dump_of(path, text.encode())
    assert before is not None
    document = SmbConfDocument(text, str(path))
    assert_edits_only(document, section, name, value)
    after = dump_of(path, document.render())
    assert after is not None
    expected = {key: dict(values) for key, values in before.items()}
    expected.setdefault(section, {})
    if printed is None:
        expected[section].pop(name, None)  # back to the default: testparm leaves it out
    else:
        expected[section][name] = printed
    assert after == expected


@pytest.mark.parametrize(
    ("text", "section", "name"),
    [
        # Adding after it would read the copy's name without its backslash, and before
        # it would let the copied share override it.
        ("[other]\n   path = /o\n[data]\n   path = /x\n   copy = other \\", "data", "comment"),
        # A new share can only go at the end, which would change the comment.
        ("[data]\n   comment = first \\\\\n", "newshare", "path"),
    ],
)
def test_an_edit_that_cannot_keep_the_meaning_is_refused(text: str, section: str, name: str) -> None:
    document = SmbConfDocument(text)
    with pytest.raises(InvalidInput) as error:
        set_parameter(document, section, name, "x", catalog())
    assert "backslash" in error.value.message
    assert document.text == text


@pytest.mark.testbed  # runs Samba's own programs
def test_rename_a_header_continued_over_lines(tmp_path: Path) -> None:
    text = "[da\\\nta] \\\n# not a comment here\n   path = /srv/data\n[s]\n   path = /s\n"
    path = tmp_path / "smb.conf"
    before = dump_of(path, text.encode())
    assert before is not None and "data" in before
    document = SmbConfDocument(text)
    rename_section(document, "data", "renamed")
    assert document.text == "[renamed] \\\n# not a comment here\n   path = /srv/data\n[s]\n   path = /s\n"
    after = dump_of(path, document.render())
    assert after is not None and after["renamed"] == before["data"]


# -- generated files -------------------------------------------------------------------------

TAILS = (
    "   comment = tail \\",
    "   comment = tail \\\\",
    "   comment = tail \\ ",
    "   comment = a \\\n      b \\",
    "[tailshare] \\",
    "   just words \\",
    "# a comment \\",
    "   Max XMIT = 32768 \\",
    "   comment = tail\\\n",
)
VALUES = {
    "read only": "no",
    "oplocks": "no",
    "comment": "edited # here",
    "max xmit": "65535",
    "create mask": "0640",
    "vfs objects": "acl_xattr io_uring",
    "socket options": "TCP_NODELAY",
    "deadtime": "15",
    "workgroup": "EDITED",
}


def generated(seed: int, tail: str, newline: bool) -> str:
    enums = {p.name: p.enum_values for p in catalog() if p.enum_values}
    types = {name: catalog().parameters[name].type for name in (*SHARE_PARAMETERS, *GLOBAL_PARAMETERS)}
    text = ConfigGenerator(seed, enums).generate(types).text
    eol = "\r\n" if "\r\n" in text else "\n"
    if not text.endswith("\n"):
        text += eol
    return text + tail.replace("\n", eol) + (eol if newline else "")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), tail=st.sampled_from(TAILS), newline=st.booleans(), data=st.data())
@pytest.mark.testbed  # runs Samba's own programs
def test_generated_files_with_a_dangling_backslash(
    seed: int, tail: str, newline: bool, data: st.DataObject, tmp_path: Path
) -> None:
    text = generated(seed, tail, newline)
    document = SmbConfDocument(text, "gen.conf")
    view = effective_view(document, catalog())
    # A share that copies the edited one would change with it; not what this checks.
    copied = {
        entry.value.lower()
        for entry in document.entries()
        if entry.kind == "parameter" and name_key(entry.name) == "copy" and entry.value
    }
    sections = [
        section.name
        for section in view.sections.values()
        if section.name.strip() and section.name.lower() not in copied
    ]
    assume(sections)
    # The tail is in the file's last block: aim there most of the time.
    headers = [entry.name for entry in document.entries() if entry.kind == "section"]
    last = next(
        (
            section.name
            for section in view.sections.values()
            if headers and section.name.lower() == headers[-1].lower()
        ),
        "global",
    )
    if last in sections:
        sections = [last, last, last, *sections]
    section = data.draw(st.sampled_from(sections))
    # A share-level value in [global] reaches every share; keep to one place changing.
    names = [
        name
        for name in sorted(VALUES)
        if (catalog().parameters[name].scope == "global") == (section == "global")
    ]
    name = data.draw(st.sampled_from(names))
    parameter = catalog().parameters[name]
    try:
        assert_edits_only(document, section, name, VALUES[name])
    except InvalidInput as error:
        assert "backslash" in error.message
        assert document.text == text
        return
    after_view = effective_view(document, catalog())
    resolved = after_view.resolve(section, name)
    assert resolved.source == "set"
    assert stored_form(parameter, resolved.value or "") == stored_form(parameter, VALUES[name])
    ours_before, ours_after = view.to_json(), after_view.to_json()
    ours_after.get(section, {}).pop(name, None)
    ours_before.get(section, {}).pop(name, None)
    assert ours_after == ours_before

    path = tmp_path / f"gen-{seed}.conf"
    before = dump_of(path, text.encode("utf-8", "surrogateescape"))
    if before is None:
        return  # testparm refuses the file anyway
    after = dump_of(path, document.render())
    assert after is not None
    assert list(after) == list(before)
    for key in before:
        if key.lower() != section.lower():
            assert after[key] == before[key], key
        else:
            assert {k: v for k, v in after[key].items() if k != name} == {
                k: v for k, v in before[key].items() if k != name
            }
