"""EditorText: what an editor shows of an smb.conf, and the bytes its edits come back as."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sambatune.conf.editor_text import ESCAPED, LATIN1, EditorText

AWKWARD = (
    b"# caf\xe9 in Latin-1\r\n"
    b"[global]\r\n"
    b"\tworkgroup = EXAMPLE   \r\n"
    b"   server string = Samba \xc3\xa9t\xc3\xa9\r\n"
    b"lone\rcr = yes\r\n"
    b"[share]\r\n"
    b"  path = /srv/share"
)


def test_untouched_text_saves_every_byte() -> None:
    text = EditorText(AWKWARD)
    assert text.render() == AWKWARD
    assert text.display_lines() == [
        "# café in Latin-1",
        "[global]",
        "\tworkgroup = EXAMPLE   ",
        "   server string = Samba été",
        "lone\u240dcr = yes",
        "[share]",
        "  path = /srv/share",
    ]
    assert text.flags(1) == LATIN1
    assert text.flags(4) == 0  # valid UTF-8 in a file that is not all UTF-8
    assert text.flags(5) == ESCAPED
    assert [text.eol(n) for n in (1, 7)] == ["\r\n", ""]


def test_replacing_lines_with_themselves_changes_nothing() -> None:
    text = EditorText(AWKWARD)
    assert not text.replace(1, 7, text.display_lines())
    assert text.render() == AWKWARD


def test_an_edited_line_keeps_its_ending_and_encoding() -> None:
    text = EditorText(AWKWARD)
    assert text.replace(1, 1, ["# café au lait"])
    assert text.replace(3, 1, ["\tworkgroup = OTHER"])
    assert text.render() == AWKWARD.replace(b"caf\xe9 in Latin-1", b"caf\xe9 au lait").replace(
        b"EXAMPLE   ", b"OTHER"
    )


def test_a_character_latin1_cannot_hold_turns_the_line_into_utf8() -> None:
    text = EditorText(b"# caf\xe9\n")
    text.replace(1, 1, ["# café €"])
    assert text.render() == "# café €\n".encode()
    assert text.display_lines() == ["# café €"]


def test_stand_ins_come_back_as_the_characters_they_stand_for() -> None:
    text = EditorText(b"a\rb = 1\n")
    text.replace(1, 1, ["a\u240db = 2"])
    assert text.render() == b"a\rb = 2\n"


def test_enter_splits_a_crlf_line_into_two_crlf_lines() -> None:
    text = EditorText(b"[a]\r\n  x = 1\r\n")
    text.replace(2, 1, ["  x = 1", "  y = 2"])
    assert text.render() == b"[a]\r\n  x = 1\r\n  y = 2\r\n"


def test_typing_after_a_last_line_without_newline_keeps_that_shape() -> None:
    text = EditorText(b"[a]\r\n  x = 1")
    text.replace(2, 1, ["  x = 1", "  y = 2"])
    assert text.render() == b"[a]\r\n  x = 1\r\n  y = 2"
    text.replace(2, 2, ["  x = 1"])
    assert text.render() == b"[a]\r\n  x = 1"


def test_joining_two_lines_keeps_the_second_ones_ending() -> None:
    text = EditorText(b"a\nb\r\nc\n")
    text.replace(1, 2, ["ab"])
    assert text.render() == b"ab\r\nc\n"


def test_deleting_every_line_gives_an_empty_file_and_typing_into_it_ends_with_newline() -> None:
    text = EditorText(b"[a]\n x = 1\n")
    text.replace(1, 2, [""])
    assert text.render() == b""
    assert text.display_lines() == [""]
    text.replace(1, 1, ["[b]"])
    assert text.render() == b"[b]\n"


def test_a_file_that_shows_as_one_empty_line_comes_back_when_emptied_again() -> None:
    text = EditorText(b"\r\n")
    text.replace(1, 1, ["x"])
    text.replace(1, 1, [""])
    assert text.render() == b"\r\n"


def test_an_empty_file_stays_empty_when_nothing_is_typed() -> None:
    text = EditorText(b"")
    assert text.display_lines() == [""]
    assert not text.replace(1, 1, [""])
    assert text.render() == b""


def test_the_document_follows_every_edit() -> None:
    text = EditorText(b"[global]\n  workgroup = X\n")
    text.replace(2, 1, ["  workgroup = Y", "[share]", "  path = /tmp"])
    entries = [(entry.kind, entry.name, entry.value) for entry in text.document.entries()]
    assert entries == [
        ("section", "global", None),
        ("parameter", "workgroup", "Y"),
        ("section", "share", None),
        ("parameter", "path", "/tmp"),
    ]


def test_display_offsets_account_for_latin1_lines() -> None:
    text = EditorText(b"x\xe9y = \xc3\xa9z\n")
    line = text.document.line(1)
    assert line.value_span is not None
    start, end = (text.display_offset(1, offset) for offset in line.value_span)
    assert text.display_line(1)[start:end] == "Ã©z"


lines_strategy = st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8)
endings = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def files(draw: st.DrawFn) -> bytes:
    lines = draw(lines_strategy)
    chosen = [draw(endings) for _ in lines]
    body = b"".join(line + eol for line, eol in zip(lines, chosen, strict=True))
    if draw(st.booleans()) and body:
        body = body[:-1] if body.endswith(b"\n") else body
    return body


@settings(max_examples=300)
@given(files())
def test_any_bytes_survive_untouched_and_show_as_lines_without_breaks(data: bytes) -> None:
    text = EditorText(data)
    assert text.render() == data
    shown = text.display_lines()
    assert all(not set(line) & {"\n", "\r", "\u2029", "\ufdd0", "\ufdd1"} for line in shown)
    assert not text.replace(1, len(shown), shown)
    assert text.render() == data


display_line = st.text(
    alphabet=st.characters(blacklist_characters="\n\r\u2029\ufdd0\ufdd1", blacklist_categories=["Cs"]),
    max_size=10,
)


@settings(max_examples=300)
@given(files(), st.data())
def test_after_any_edit_the_text_shows_what_was_typed(data: bytes, draw: st.DataObject) -> None:
    text = EditorText(data)
    shown = text.display_lines()
    first = draw.draw(st.integers(1, len(shown)))
    removed = draw.draw(st.integers(1, len(shown) - first + 1))
    new = draw.draw(st.lists(display_line, min_size=1, max_size=4))
    text.replace(first, removed, new)
    expected = shown[: first - 1] + new + shown[first - 1 + removed :]
    assert text.display_lines() == expected
    # The document agrees with the bytes it renders.
    again = EditorText(text.render())
    assert [(entry.kind, entry.name, entry.value) for entry in again.document.entries()] == [
        (entry.kind, entry.name, entry.value) for entry in text.document.entries()
    ]


@settings(max_examples=300)
@given(
    st.lists(st.text(alphabet="ab =[]#\\", max_size=6), min_size=1, max_size=6),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.data(),
)
def test_undoing_an_edit_gives_back_the_same_bytes(
    lines: list[str],
    eol: str,
    final: bool,
    draw: st.DataObject,
) -> None:
    data = (eol.join(lines) + (eol if final else "")).encode()
    text = EditorText(data)
    shown = text.display_lines()
    first = draw.draw(st.integers(1, len(shown)))
    removed = draw.draw(st.integers(1, len(shown) - first + 1))
    new = draw.draw(st.lists(st.text(alphabet="xy =", max_size=4), min_size=1, max_size=3))
    text.replace(first, removed, new)
    text.replace(first, len(new), shown[first - 1 : first - 1 + removed])
    assert text.render() == data


@st.composite
def numbered_files(draw: st.DrawFn) -> bytes:
    """Mixed endings and encodings; every line shows differently (a number in front)."""
    lines = draw(lines_strategy)
    body = b"".join(b"%d" % number + line + draw(endings) for number, line in enumerate(lines))
    if draw(st.booleans()) and body:
        body = body[:-1] if body.endswith(b"\n") else body
    return body


@settings(max_examples=500)
@given(numbered_files(), st.data())
def test_undo_gives_back_the_bytes_of_any_file(data: bytes, draw: st.DataObject) -> None:
    text = EditorText(data)
    shown = text.display_lines()
    first = draw.draw(st.integers(1, len(shown)))
    removed = draw.draw(st.integers(1, len(shown) - first + 1))
    new = draw.draw(st.lists(st.text(alphabet="xy =é", max_size=4), min_size=1, max_size=3))
    text.replace(first, removed, new)
    text.replace(first, len(new), shown[first - 1 : first - 1 + removed], restoring=True)
    assert text.render() == data
