"""The smb.conf document keeps every byte and classifies lines as Samba reads them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.syntax import join_continued

# Pieces that make text look like smb.conf, with every awkward character in play.
SMBCONF_PIECES = st.sampled_from(
    [
        "[global]",
        "[ share ]",
        "[Global]",
        "[broken",
        "[]",
        "name = value",
        "Max  XMIT=65535",
        "  path = /srv/x",
        "\tcomment = a # b ; c",
        "# comment",
        "; comment",
        "= no name",
        "text without equals",
        "value \\",
        "value\\ ",
        "\\",
        "\\\\",
        "x = y\\\t",
        "  ",
        "\t",
        "caf\xe9 = ok",
        "\x00nul = x",
        "a\x0bb = c",
        "k=v\x0c",
        "=",
        "#\\",
        "é = ü",
    ]
)
SEPARATORS = st.sampled_from(["\n", "\r\n", "\r", "", " "])


@st.composite
def smbconf_like(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.tuples(SMBCONF_PIECES, SEPARATORS), max_size=30))
    text = "".join(piece + separator for piece, separator in parts)
    encoding = draw(st.sampled_from(["utf-8", "latin-1"]))
    return text.encode(encoding, "replace")


@settings(max_examples=400)
@given(st.binary(max_size=600))
def test_any_bytes_render_back_exactly(data: bytes) -> None:
    document = SmbConfDocument(data)
    assert document.render() == data


@settings(max_examples=400)
@given(smbconf_like())
def test_smbconf_like_text_renders_back_exactly(data: bytes) -> None:
    document = SmbConfDocument(data)
    assert document.render() == data
    lines = list(document.lines())
    assert len(lines) == document.line_count
    assert "".join(line.text + line.eol for line in lines).encode("utf-8", "surrogateescape") == data
    for line in lines:
        for span in (line.name_span, line.value_span):
            if span is not None:
                assert 0 <= span[0] < span[1] <= len(line.text)


@settings(max_examples=300)
@given(smbconf_like(), st.data())
def test_replacing_lines_rescans_like_a_fresh_parse(data: bytes, draw: st.DataObject) -> None:
    """The editor's cheap re-scan after an edit must equal parsing the new text."""
    document = SmbConfDocument(data)
    count = document.line_count
    first = draw.draw(st.integers(min_value=1, max_value=count + 1))
    removed = draw.draw(st.integers(min_value=0, max_value=count + 1 - first))
    new = draw.draw(
        st.lists(
            st.tuples(SMBCONF_PIECES, st.sampled_from(["", "\r"])).map(lambda pair: pair[0] + pair[1]),
            max_size=4,
        )
    )
    document.replace_lines(first, removed, new)
    fresh = SmbConfDocument(document.render())
    assert document.rows == fresh.rows
    assert list(document.entries()) == list(fresh.entries())


def test_lines_keep_numbers_kinds_and_spans() -> None:
    data = (
        b"workgroup = W\r\n[Global]\r\n  Max   XMIT =  65535 \\\r\n\t 1\r\n; note\n"
        b"[s\n= x\nfoo\n[ a ] tail\n# caf\xe9\nlast = 1"
    )
    document = SmbConfDocument(data, "smb.conf")
    kinds = [line.kind for line in document.lines()]
    assert kinds == [
        "parameter",
        "section",
        "parameter",
        "continuation",
        "comment",
        "bad-section",
        "empty-name",
        "text",
        "section",
        "comment",
        "parameter",
    ]
    third = document.line(3)
    assert third.name_span is not None and third.value_span is not None
    assert third.text == "  Max   XMIT =  65535 \\" and third.eol == "\r\n"
    assert third.text[slice(*third.name_span)] == "Max   XMIT"
    assert third.text[slice(*third.value_span)] == "65535"
    fourth = document.line(4)
    assert fourth.value_span is not None
    assert fourth.entry_line == 3 and fourth.text[slice(*fourth.value_span)] == "1"
    ninth = document.line(9)
    assert ninth.name_span is not None
    assert ninth.text[slice(*ninth.name_span)] == " a "
    assert document.line(11).eol == ""
    assert not document.utf8
    assert document.line(10).text == "# caf\udce9"
    entries = list(document.entries())
    assert entries[2].name == "Max XMIT" and entries[2].value == "65535 1"
    assert (entries[2].line, entries[2].last_line) == (3, 4)
    assert [e.name for e in entries if e.kind == "section"] == ["Global", " a "]
    assert document.render() == data


def test_continuation_follows_samba_step_by_step() -> None:
    """tini.c removes one backslash per newline, so a double one joins across a blank line."""
    cases = {
        ("a = b \\", "   c"): ("a = b c", 1),
        ("a = b\\", "c"): ("a = bc", 1),
        ("a = b\\ ", "  c"): ("a = b c", 1),
        ("a = b\\", "", "  d"): ("a = b", 1),
        ("a = b\\\\", "", "  d"): ("a = b d", 2),
        ("a = b \\\r", " c\r"): ("a = b c\r", 1),
        ("a\t\t=  b",): ("a\t= b", 0),
    }
    for lines, (logical, end) in cases.items():
        joined, last = join_continued(list(lines), 0, True)
        assert (joined.rstrip(" \t\r"), last) == (logical.rstrip(" \t\r"), end), lines


def test_comment_lines_never_continue_and_values_keep_hashes() -> None:
    document = SmbConfDocument("# comment \\\noplocks = no # off ; really\n")
    assert [line.kind for line in document.lines()] == ["comment", "parameter"]
    assert next(document.entries()).value == "no # off ; really"


def test_a_repeated_line_reads_the_same_unless_it_continues() -> None:
    # Rows of repeated lines are reused; a line ending in a backslash depends on where it is.
    document = SmbConfDocument("a = b \\\nc\n[s]\nx = 1\n[t]\nx = 1\na = b \\\nd\na = b \\")
    entries = [(entry.kind, entry.line, entry.name, entry.value) for entry in document.entries()]
    assert entries == [
        ("parameter", 1, "a", "b c"),
        ("section", 3, "s", None),
        ("parameter", 4, "x", "1"),
        ("section", 5, "t", None),
        ("parameter", 6, "x", "1"),
        ("parameter", 7, "a", "b d"),
        ("parameter", 9, "a", "b \\"),
    ]
    assert document.kind(8) == "continuation"


def test_empty_and_newline_only_documents() -> None:
    assert SmbConfDocument(b"").line_count == 0
    assert SmbConfDocument(b"").render() == b""
    single = SmbConfDocument(b"\n")
    assert single.line_count == 1 and single.render() == b"\n"
    assert SmbConfDocument(b"x").line(1).eol == ""


def test_a_large_file_parses_with_every_entry() -> None:
    text = "".join(f"[s{n}]\n  path = /srv/{n}\n  comment = share {n}\n\n" for n in range(5000))
    document = SmbConfDocument(text)
    assert document.line_count == 20000
    assert sum(1 for _ in document.entries()) == 15000


def test_copy_is_independent_and_set_text_reloads() -> None:
    document = SmbConfDocument(b"[a]\npath = /a\n", "f.conf")
    snapshot = document.copy()
    document.replace_lines(2, 1, ["path = /b"])
    assert snapshot.render() == b"[a]\npath = /a\n"
    assert document.render() == b"[a]\npath = /b\n"
    assert document.generation == snapshot.generation + 1
    document.set_text(b"[z]\r\nx = 1")
    assert [e.name for e in document.entries()] == ["z", "x"]
    assert document.generation == snapshot.generation + 2
    assert document.render() == b"[z]\r\nx = 1" and document.path == "f.conf"
