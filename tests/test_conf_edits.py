"""Edits change only the lines they must, follow the file's style, and mean what they say."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.edits import (
    LineChange,
    add_section,
    comment_out,
    remove_section,
    rename_section,
    set_parameter,
    uncomment,
    unset_parameter,
)
from sambatune.conf.effective import effective_view
from sambatune.conf.normalize import stored_form
from sambatune.errors import InvalidInput
from smbconf_generator import GLOBAL_PARAMETERS, SHARE_PARAMETERS, ConfigGenerator


@cache
def catalog() -> ParameterCatalog:
    return load_bundled("4.17")


def generated(seed: int) -> SmbConfDocument:
    enums = {p.name: p.enum_values for p in catalog() if p.enum_values}
    types = {name: catalog().parameters[name].type for name in (*SHARE_PARAMETERS, *GLOBAL_PARAMETERS)}
    return SmbConfDocument(ConfigGenerator(seed, enums).generate(types).text, "gen.conf")


def replay(before: list[str], changes: list[LineChange]) -> list[str]:
    lines = list(before)
    for change in changes:
        lines[change.first - 1 : change.first - 1 + change.removed] = list(change.inserted)
    return lines


def assert_only_reported_lines_changed(
    before: list[str], document: SmbConfDocument, changes: list[LineChange]
) -> None:
    after = document.raw_lines
    assert replay(before, changes) == after
    untouched = len(before) - sum(change.removed for change in changes)
    assert len(after) - sum(len(change.inserted) for change in changes) == untouched


VALUES = {
    "read only": "no",
    "oplocks": "no",
    "comment": "edited # here",
    "max xmit": "65535",
    "create mask": "0640",
    "log level": "2",
    "vfs objects": "acl_xattr io_uring",
    "socket options": "TCP_NODELAY",
    "deadtime": "15",
}


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), data=st.data())
def test_set_and_unset_touch_only_their_lines(seed: int, data: st.DataObject) -> None:
    document = generated(seed)
    view = effective_view(document, catalog())
    # "[]" can appear in generated files; Samba refuses an empty section name, so no edit targets it.
    sections = [section.name for section in view.sections.values() if section.name.strip()]
    section = data.draw(st.sampled_from(sections))
    name = data.draw(st.sampled_from(sorted(VALUES)))
    written = data.draw(st.sampled_from([name, name.upper(), name.replace(" ", "")]))
    parameter = catalog().parameters[name]
    if parameter.scope == "global" and section != "global":
        section = "global"
    before = document.raw_lines
    changes = set_parameter(document, section, written, VALUES[name], catalog())
    assert_only_reported_lines_changed(before, document, changes)
    assert sum(change.removed for change in changes) <= 3  # the winning entry, at most
    resolved = effective_view(document, catalog()).resolve(section, name)
    assert stored_form(parameter, resolved.value or "") == stored_form(parameter, VALUES[name])
    assert resolved.source == "set"

    before = document.raw_lines
    changes = unset_parameter(document, section, written, catalog())
    assert changes
    assert_only_reported_lines_changed(before, document, changes)
    after = effective_view(document, catalog())
    target = after.section(section)
    assert target is not None and name not in target.settings


def test_replacing_keeps_the_lines_style_and_the_files_spelling() -> None:
    document = SmbConfDocument(
        b"[Data]\r\n   path = /srv\r\n   Read  Only\t=  yes\r\n   writable = no\r\n", "f"
    )
    set_parameter(document, "data", "read only", "no", catalog())
    # The last effective occurrence is the inverse synonym on line 4: it is replaced.
    assert document.render() == (
        b"[Data]\r\n   path = /srv\r\n   Read  Only\t=  yes\r\n   read only = no\r\n"
    )
    set_parameter(document, "DATA", "READONLY", "yes", catalog())
    assert document.raw_line(4) == "   read only = yes\r"
    set_parameter(document, "data", "oplocks", "no", catalog())
    assert document.raw_line(5) == "   oplocks = no\r"


def test_new_lines_follow_indentation_spacing_and_line_endings() -> None:
    document = SmbConfDocument(b"[global]\n\tworkgroup=W\n[a]\n\tpath=/a\n\n# about b\n[b]\n")
    set_parameter(document, "a", "comment", "A", catalog())
    set_parameter(document, "global", "server string", "S", catalog())
    set_parameter(document, "b", "path", "/b", catalog())
    set_parameter(document, "c", "path", "/c", catalog())
    assert document.render() == (
        b"[global]\n\tworkgroup=W\n\tserver string=S\n[a]\n\tpath=/a\n\tcomment=A\n\n"
        b"# about b\n[b]\n\tpath=/b\n\n[c]\n\tpath=/c\n"
    )


def test_global_settings_go_before_the_first_share() -> None:
    """A share copies [global] when Samba reads its header: later lines would miss it."""
    document = SmbConfDocument(b"[s]\n  path = /s\n[global]\n  workgroup = W\n")
    set_parameter(document, "global", "read only", "no", catalog())
    assert document.render() == (
        b"[global]\n  read only = no\n\n[s]\n  path = /s\n[global]\n  workgroup = W\n"
    )
    assert effective_view(document, catalog()).resolve("s", "read only").value == "no"


def test_a_file_without_final_newline_keeps_its_shape() -> None:
    document = SmbConfDocument(b"[a]\r\npath = /a")
    set_parameter(document, "a", "oplocks", "no", catalog())
    assert document.render() == b"[a]\r\npath = /a\r\noplocks = no"
    empty = SmbConfDocument(b"")
    set_parameter(empty, "global", "workgroup", "W", catalog())
    assert empty.render() == b"[global]\n\tworkgroup = W\n"


def test_unset_removes_every_occurrence_and_synonym_with_continuations() -> None:
    document = SmbConfDocument(
        "[s]\nread only = yes\nwritable = \\\n  yes\n[t]\nread only = no\n[S]\nwrite ok = 1\n"
    )
    changes = unset_parameter(document, "s", "read only", catalog())
    assert len(changes) == 3
    assert document.render() == b"[s]\n[t]\nread only = no\n[S]\n"
    assert unset_parameter(document, "s", "read only", catalog()) == []


def test_comment_out_and_back_in_restores_the_lines_exactly() -> None:
    original = b"[s]\n   path = /s\n   comment = a \\\n      b\n;   guest ok = yes\n"
    document = SmbConfDocument(original)
    comment_out(document, 3)
    # The file already comments settings out with ';', so that is the marker.
    assert document.raw_line(3) == ";   comment = a \\"
    assert document.raw_line(4) == ";      b"
    uncomment(document, 3)
    assert document.render() == original
    uncomment(document, 5)
    assert document.raw_line(5) == "   guest ok = yes"
    with pytest.raises(InvalidInput):
        uncomment(document, 2)
    with pytest.raises(InvalidInput):
        comment_out(SmbConfDocument(b"# x\n"), 1)
    with pytest.raises(InvalidInput):
        uncomment(SmbConfDocument(b"# just words\n"), 1)


def test_sections_add_rename_remove() -> None:
    document = SmbConfDocument(b"[a]\npath=/a\n\n# about b\n[b]  # tail\npath=/b\n[A]\nx=1\n")
    rename_section(document, "a", "alpha")
    assert document.raw_line(1) == "[alpha]" and document.raw_line(7) == "[alpha]"
    assert document.raw_line(5) == "[b]  # tail"
    rename_section(document, "b", "beta")
    assert document.raw_line(5) == "[beta]  # tail"
    remove_section(document, "alpha")
    # The comment right above [beta] describes it and stays.
    assert document.render() == b"# about b\n[beta]  # tail\npath=/b\n"
    add_section(document, "gamma")
    assert document.render().endswith(b"path=/b\n\n[gamma]\n")
    with pytest.raises(InvalidInput):
        add_section(document, "BETA")
    with pytest.raises(InvalidInput):
        rename_section(document, "beta", "gamma")
    with pytest.raises(InvalidInput):
        rename_section(document, "beta", "global")
    with pytest.raises(InvalidInput):
        remove_section(document, "nope")


@pytest.mark.parametrize(
    ("section", "name", "value"),
    [
        ("s", "", "x"),
        ("s", "a=b", "x"),
        ("s", "# x", "y"),
        ("s", "path", "two\nlines"),
        ("s", "path", "ends with \\"),
        ("bad]name", "path", "/x"),
        (" ", "path", "/x"),
    ],
)
def test_bad_input_is_refused_with_a_message(section: str, name: str, value: str) -> None:
    document = SmbConfDocument(b"[s]\npath = /s\n")
    with pytest.raises(InvalidInput) as error:
        set_parameter(document, section, name, value, catalog())
    assert error.value.message
    assert document.render() == b"[s]\npath = /s\n"
