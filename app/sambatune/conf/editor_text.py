"""An smb.conf as a text editor shows it, and the editor's changes turned back into bytes.

An editor holds lines of text; a file holds bytes. :class:`EditorText` keeps an
:class:`SmbConfDocument` (every byte) and gives each of its lines a *display* form:

- the line ending is not part of the line (CRLF and LF lines look the same);
- a line that is not valid UTF-8 (a Latin-1 comment, say) is shown as Latin-1, so
  ``Caf\\xe9`` reads ``Café`` instead of a replacement character, and is written back
  as Latin-1 when edited;
- the few characters a Qt text document cannot hold inside a line (a lone CR, U+2029,
  U+FDD0, U+FDD1) are shown as stand-ins from the private use area, CR as ``␍``.

A line the editor does not change keeps its stored text, so saving an untouched file
gives back exactly the bytes that were read. :meth:`EditorText.replace` takes a
changed range of display lines; lines equal at either end of it are kept as they
were, and the rest get the line ending and encoding of the lines they replace.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

from sambatune.conf.document import SmbConfDocument, paused_gc

#: Shown as Latin-1 (the line's bytes are not UTF-8); written back as Latin-1.
LATIN1 = 1
#: The display holds stand-ins for characters a text widget cannot keep in a line.
ESCAPED = 2

_STAND_INS = {"\r": "\u240d", "\u2029": "\uf8f0", "\ufdd0": "\uf8f1", "\ufdd1": "\uf8f2"}
_ORIGINALS = {stand_in: original for original, stand_in in _STAND_INS.items()}
_NEEDS_STAND_IN = re.compile("[\r\u2029\ufdd0\ufdd1]")
_IS_STAND_IN = re.compile("[\u240d\uf8f0\uf8f1\uf8f2]")
_SURROGATE = re.compile("[\udc80-\udcff]")
REMEMBERED_LINES = 200_000


def _escape(text: str) -> str:
    return _NEEDS_STAND_IN.sub(lambda match: _STAND_INS[match.group()], text)


def _unescape(text: str) -> str:
    return _IS_STAND_IN.sub(lambda match: _ORIGINALS[match.group()], text)


def _to_bytes(raw: str) -> bytes:
    return raw.encode("utf-8", "surrogateescape")


def _from_bytes(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


class EditorText:
    """One smb.conf as lines of display text over a lossless :class:`SmbConfDocument`.

    Display line ``n`` (1-based) is stored line ``n``. An empty file is one empty
    display line (an editor always has a line) and no stored line.
    """

    def __init__(self, data: bytes | str = b"", path: str | None = None) -> None:
        self.document = SmbConfDocument(data, path)
        lines = self.document.raw_lines
        ended = lines if self.document.final_newline else lines[:-1]
        crlf = sum(1 for line in ended if line.endswith("\r"))
        #: The ending new lines get when nothing nearer says otherwise: the file's habit.
        self.default_eol = "\r\n" if ended and crlf * 2 > len(ended) else "\n"
        self._flags = self._scan_flags(lines)
        # A file that shows as one empty line ("" or "\\n", say) comes back as it was
        # when everything typed into it is deleted again.
        self._blank_original: tuple[list[str], bool] | None = (
            (list(lines), self.document.final_newline) if self.display_lines() == [""] else None
        )
        # Whether text typed into an empty file ends with a newline: yes for a new
        # file, as it was for one whose lines were all deleted.
        self._fill_with_newline = self.document.final_newline or not lines
        #: Removed lines by how they were shown: (stored text, flag, ending).
        self._removed: OrderedDict[str, tuple[str, int, str]] = OrderedDict()

    def _scan_flags(self, lines: list[str]) -> list[int]:
        flags = [0] * len(lines)
        document = self.document
        with paused_gc():
            for index, raw in enumerate(lines):
                text = self._text_part(index, raw)
                flag = 0
                if not document.utf8 and _SURROGATE.search(text):
                    flag |= LATIN1
                    text = _to_bytes(text).decode("latin-1")
                if _NEEDS_STAND_IN.search(text):
                    flag |= ESCAPED
                if flag:
                    flags[index] = flag
        return flags

    # -- reading ------------------------------------------------------------------------
    @property
    def path(self) -> str | None:
        return self.document.path

    @property
    def line_count(self) -> int:
        """Display lines: at least one."""
        return max(1, self.document.line_count)

    def render(self) -> bytes:
        return self.document.render()

    def flags(self, number: int) -> int:
        index = number - 1
        return self._flags[index] if 0 <= index < len(self._flags) else 0

    def _has_eol(self, index: int) -> bool:
        document = self.document
        return index < document.line_count - 1 or document.final_newline

    def _text_part(self, index: int, raw: str) -> str:
        """The stored line without its CR when the CR belongs to a CRLF ending."""
        if raw.endswith("\r") and self._has_eol(index):
            return raw[:-1]
        return raw

    def eol(self, number: int) -> str:
        """``"\\r\\n"``, ``"\\n"``, or ``""`` for a last line without a line ending."""
        index = number - 1
        if index >= self.document.line_count or not self._has_eol(index):
            return ""
        return "\r\n" if self.document.raw_line(number).endswith("\r") else "\n"

    def display_line(self, number: int) -> str:
        if self.document.line_count == 0:
            return ""
        index = number - 1
        text = self._text_part(index, self.document.raw_line(number))
        flag = self._flags[index]
        if flag:
            if flag & LATIN1:
                text = _to_bytes(text).decode("latin-1")
            if flag & ESCAPED:
                text = _escape(text)
        return text

    @staticmethod
    def display_of(raw: str) -> str:
        """How a stored line made elsewhere (a CR before its ``\\n`` kept) would be shown."""
        text = raw[:-1] if raw.endswith("\r") else raw
        if _SURROGATE.search(text):
            text = _to_bytes(text).decode("latin-1")
        return _escape(text) if _NEEDS_STAND_IN.search(text) else text

    def display_lines(self) -> list[str]:
        document = self.document
        if document.line_count == 0:
            return [""]
        lines = document.raw_lines
        with paused_gc():
            if document.final_newline:
                shown = [line[:-1] if line.endswith("\r") else line for line in lines]
            else:
                shown = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]]
                shown.append(lines[-1])
            for index, flag in enumerate(self._flags):
                if flag:
                    shown[index] = self.display_line(index + 1)
        return shown

    def display_text(self) -> str:
        """All display lines joined with ``\\n`` (what an editor widget is given)."""
        return "\n".join(self.display_lines())

    def display_offset(self, number: int, offset: int) -> int:
        """Where character ``offset`` of the stored line's text is in its display line."""
        if not self.flags(number) & LATIN1:
            return offset
        text = self._text_part(number - 1, self.document.raw_line(number))
        return len(_to_bytes(text[:offset]))

    # -- changing -------------------------------------------------------------------------
    def replace(self, first: int, removed: int, lines: Sequence[str], *, restoring: bool = False) -> bool:
        """Display lines ``first`` .. ``first + removed - 1`` now read ``lines``.

        ``restoring`` says the lines come back from undo or redo: a line shown like one
        removed earlier then gets that line's bytes back. Returns whether anything
        changed. An editor always keeps one line, so when
        the range covers every line, ``lines`` must not be empty. No line may hold
        ``\\n``.
        """
        document = self.document
        count = document.line_count
        display_count = max(1, count)
        if not 1 <= first <= display_count + 1 or removed < 0 or first - 1 + removed > display_count:
            raise IndexError(f"lines {first}..{first + removed - 1} are outside the text")
        old = [self.display_line(number) for number in range(first, first + removed)]
        new = list(lines)
        if first == 1 and removed == display_count and not new:
            raise ValueError("the text cannot lose its last line")
        if first == 1 and removed == display_count and new == [""]:
            return self._clear()
        if count == 0:
            return self._fill_empty([""][: first - 1] + new + [""][first - 1 + removed :], restoring)
        # Keep the lines that did not change where they were (a widget may report a
        # wider range than it changed).
        head = 0
        while head < len(old) and head < len(new) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < len(old) - head and tail < len(new) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        changed = len(old) - head - tail  # old lines that change
        made = new[head : len(new) - tail]  # what replaces them
        if not changed and not made:
            return False
        start = first + head
        if changed:
            self._change(start, changed, made, restoring)
        else:
            self._insert(start, made, restoring)
        return True

    def _change(self, start: int, changed: int, made: list[str], restoring: bool) -> None:
        """Replace ``changed`` (>= 1) lines from ``start`` with ``made`` (maybe none)."""
        document = self.document
        count = document.line_count
        reaches_end = start + changed - 1 == count
        self._remember(start, changed)
        raws: list[str] = []
        flags: list[int] = []
        for position, text in enumerate(made):
            # A line keeps the encoding of the line it starts like and the ending of
            # the line it ends like (pressing Enter splits one line; joining two keeps
            # the second one's ending).
            source = start + min(position, changed - 1)
            ending = start + max(0, min(changed - 1, changed - len(made) + position))
            last = reaches_end and position == len(made) - 1
            raw, flag = self._line(text, self.flags(source), self.eol(ending), last, restoring)
            raws.append(raw)
            flags.append(flag)
        if not made and reaches_end and not document.final_newline and start > 1:
            # The line before becomes the last one, and the file had no final newline.
            previous = document.raw_line(start - 1)
            if self.eol(start - 1) == "\r\n":
                document.replace_lines(start - 1, 1, [previous[:-1]])
        document.replace_lines(start, changed, raws)
        self._flags[start - 1 : start - 1 + changed] = flags

    def _insert(self, start: int, made: list[str], restoring: bool) -> None:
        """Insert ``made`` (>= 1) lines before line ``start`` (``count + 1``: append)."""
        document = self.document
        count = document.line_count
        neighbour = start - 1 if start > 1 else start
        flag = self.flags(neighbour)
        raws: list[str] = []
        flags: list[int] = []
        appending = start == count + 1
        for position, text in enumerate(made):
            last = appending and position == len(made) - 1
            # The new last line ends as the old one did; others as their neighbour.
            eol = self.eol(count) if last else self.eol(neighbour)
            raw, new_flag = self._line(text, flag, eol, last, restoring)
            raws.append(raw)
            flags.append(new_flag)
        if appending and not document.final_newline:
            # The old last line had no ending; now a line follows it.
            old_last = document.raw_line(count)
            if self.default_eol == "\r\n":
                document.replace_lines(count, 1, [old_last + "\r"])
        document.replace_lines(start, 0, raws)
        self._flags[start - 1 : start - 1] = flags

    def _line(self, text: str, flag: int, eol: str, last: bool, restoring: bool) -> tuple[str, int]:
        """The stored line for display ``text`` and its flag.

        ``last``: the file's last line, which keeps ``eol`` even when that is "" (no
        final newline); any other line gets the file's habit when ``eol`` is "".
        ``restoring`` (undo, redo): a line shown exactly like one removed earlier gets
        that line's stored text back, so undo restores bytes, not just text.
        """
        remembered = self._removed.get(text) if restoring else None
        if remembered is not None:
            stored, flag, eol_before = remembered
            # Its own ending, unless it is now the last line of a file without one.
            if eol_before and (eol or not last):
                eol = eol_before
            elif not eol and not last:
                eol = self.default_eol
            return (stored + "\r" if eol == "\r\n" else stored), flag
        if not eol and not last:
            eol = self.default_eol
        return self._stored(text, flag, eol)

    def _remember(self, start: int, count: int) -> None:
        """Keep removed lines (text, flag, ending) for :meth:`_line` to give back on undo."""
        removed = self._removed
        for number in range(start, start + count):
            raw = self.document.raw_line(number)
            eol = self.eol(number)
            text = raw[:-1] if eol == "\r\n" else raw
            display = self.display_line(number)
            removed.pop(display, None)
            removed[display] = (text, self._flags[number - 1], eol)
        while len(removed) > REMEMBERED_LINES:
            del removed[next(iter(removed))]

    def _stored(self, text: str, flag: int, eol: str) -> tuple[str, int]:
        """The stored line for display ``text`` (and the flag it keeps)."""
        if flag & ESCAPED:
            text = _unescape(text)
        if flag & LATIN1:
            try:
                text = _from_bytes(text.encode("latin-1"))
            except UnicodeEncodeError:
                flag &= ~LATIN1
        return (text + "\r" if eol == "\r\n" else text), flag

    def _fill_empty(self, lines: list[str], restoring: bool) -> bool:
        """Text typed into an empty file (a new file then ends with a newline)."""
        if lines == [""]:
            return False
        final_newline = self._fill_with_newline
        raws, flags = [], []
        for position, text in enumerate(lines):
            if position == len(lines) - 1 and not final_newline:
                raw, flag = self._line(text, 0, "", True, restoring)
            else:
                raw, flag = self._line(text, 0, self.default_eol, False, restoring)
            raws.append(raw)
            flags.append(flag)
        self.document.final_newline = final_newline
        self.document.replace_lines(1, 0, raws)
        self._flags = flags
        return True

    def _clear(self) -> bool:
        """Everything deleted: an empty file, or the original when it showed as one empty line."""
        document = self.document
        if self._blank_original is not None:
            lines, final_newline = self._blank_original
        else:
            lines, final_newline = [], False
        if document.raw_lines == lines and document.final_newline == final_newline:
            return False
        self._remember(1, document.line_count)
        self._fill_with_newline = document.final_newline
        document.final_newline = final_newline
        document.replace_lines(1, document.line_count, lines)
        self._flags = [0] * len(lines)
        return True
