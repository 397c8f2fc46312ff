"""The text widget and the lossless document stay in step through any edit, undo and redo."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from pytestqt.qtbot import QtBot

from sambatune.conf.document import SmbConfDocument
from sambatune.ui.editor.buffer import ConfBuffer

EVERY_BYTE = b"".join(bytes([n]) + b" = x\r\n" for n in range(256) if n != 10) + b"\xff\xfe"


def _blocks(buffer: ConfBuffer) -> list[str]:
    texts = []
    block = buffer.qdocument.firstBlock()
    while block.isValid():
        texts.append(block.text())
        block = block.next()
    return texts


def test_every_byte_value_survives_the_widget(qtbot: QtBot) -> None:
    buffer = ConfBuffer()
    view = QPlainTextEdit()
    qtbot.addWidget(view)
    buffer.load(EVERY_BYTE, "every-byte.conf")
    view.setDocument(buffer.qdocument)
    assert _blocks(buffer) == buffer.text.display_lines()
    assert buffer.render() == EVERY_BYTE
    # Select everything and type it again as it is shown: the same bytes come back.
    cursor = QTextCursor(buffer.qdocument)
    cursor.select(QTextCursor.SelectionType.Document)
    shown = "\n".join(_blocks(buffer))
    cursor.insertText(shown)
    assert _blocks(buffer) == buffer.text.display_lines()
    buffer.undo()
    assert buffer.render() == EVERY_BYTE
    assert not buffer.dirty


edit = st.tuples(
    st.sampled_from(["insert", "delete", "undo", "redo"]),
    st.floats(0, 1),
    st.floats(0, 1),
    st.text(alphabet="ab =[]#\\\n\té", max_size=8),
)
files = st.sampled_from(
    [
        b"[global]\r\n\tworkgroup = X\r\n# caf\xe9\r\n[s]\r\n path = /a \\\r\n  b\r\n",
        b"[global]\n   log level = 1\n\n[share]\n   path = /srv\n   read only = no",
        b"",
        b"\n",
        b"a\rb = 1\n[x]\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files, st.lists(edit, max_size=12))
def test_random_edits_keep_widget_and_document_in_step(
    qtbot: QtBot,
    data: bytes,
    edits: list[tuple[str, float, float, str]],
) -> None:
    buffer = ConfBuffer()
    buffer.load(data, "fuzz.conf")
    qdocument = buffer.qdocument
    for action, where, length, text in edits:
        size = qdocument.characterCount() - 1
        if action == "undo":
            buffer.undo()
        elif action == "redo":
            buffer.redo()
        else:
            cursor = QTextCursor(qdocument)
            start = int(where * size)
            cursor.setPosition(start)
            if action == "delete":
                cursor.setPosition(min(size, start + int(length * 12)), QTextCursor.MoveMode.KeepAnchor)
                cursor.removeSelectedText()
            else:
                cursor.insertText(text)
        QApplication.processEvents()  # the buffer may correct what a stand-in now means
        assert _blocks(buffer) == buffer.text.display_lines()
        # What the engine reads is what the bytes say.
        again = SmbConfDocument(buffer.render())
        assert list(again.entries()) == list(buffer.document.entries())
    while qdocument.isUndoAvailable():
        buffer.undo()
    QApplication.processEvents()
    assert _blocks(buffer) == buffer.text.display_lines()
    assert buffer.render() == data
    assert not buffer.dirty


conf_edits = st.lists(
    st.tuples(
        st.sampled_from(["set", "unset", "add", "remove"]),
        st.sampled_from(["global", "share", "new"]),
        st.sampled_from(["oplocks", "writable", "comment", "log level"]),
        st.sampled_from(["yes", "no", "a b", "3"]),
    ),
    max_size=6,
)
conf_files = st.sampled_from(
    [
        b"[global]\r\n\tworkgroup = X\r\n[share]\r\n path = /a\r\n oplocks = no\r\n",
        b"[global]\n   log level = 1\n\n[share]\n   path = /srv\n   writeable = no",
        b"",
        b"# only a comment\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(conf_files, conf_edits)
def test_conf_engine_edits_land_in_the_text_exactly(
    qapp: QApplication,
    data: bytes,
    changes: list[tuple[str, str, str, str]],
) -> None:
    from sambatune.conf import edits
    from sambatune.conf.catalog import load_bundled
    from sambatune.errors import InvalidInput

    catalog = load_bundled((4, 17, 12))
    buffer = ConfBuffer()
    buffer.load(data, "form.conf")
    for kind, section, name, value in changes:
        copy = buffer.document.copy()
        try:
            if kind == "set":
                made = edits.set_parameter(copy, section, name, value, catalog)
            elif kind == "unset":
                made = edits.unset_parameter(copy, section, name, catalog)
            elif kind == "add":
                made = edits.add_section(copy, section)
            else:
                made = edits.remove_section(copy, section)
        except InvalidInput:
            continue
        was_empty = buffer.document.line_count == 0
        buffer.apply_changes(made)
        assert _blocks(buffer) == buffer.text.display_lines()
        if was_empty:
            # Text put into an emptied file keeps the file's line endings and whether
            # it ended with one (the engine, seeing no lines, would use LF and end with it).
            mine = buffer.render().replace(b"\r\n", b"\n")
            assert mine.rstrip(b"\n") == copy.render().rstrip(b"\n")
        else:
            assert buffer.render() == copy.render()
    while buffer.qdocument.isUndoAvailable():
        buffer.undo()
    assert buffer.render() == data
