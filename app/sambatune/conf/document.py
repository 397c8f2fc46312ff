"""smb.conf as a lossless document: every byte kept, every line classified as Samba reads it.

A document holds the physical lines of one file (split on ``\\n`` only, the way
Samba splits them) and, for each line, its kind and, for the first line of each
section header or parameter, what Samba makes of it (name and value after
continuation lines are joined and blank runs collapsed). ``render()`` gives back
the exact bytes that were parsed, whatever they were: CRLF, tabs, trailing blanks,
a missing final newline, Latin-1 comments, binary garbage.

Bytes that are not UTF-8 are kept as lone surrogates (Python's ``surrogateescape``),
so ``Line.text`` is always a ``str`` and rendering restores the original bytes.

Editing (set, unset, sections, commenting) lives in :mod:`sambatune.conf.edits`;
this module keeps the line store, the classification and cheap re-scanning of the
lines an edit touched.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from typing import Literal, NamedTuple

from sambatune.conf.syntax import BLANKS, collapse_blanks, join_continued

LineKind = Literal[
    "blank",  # nothing but blanks
    "comment",  # first non-blank character is # or ;
    "section",  # [name]
    "parameter",  # name = value (the first line of it)
    "continuation",  # a later physical line of a section or parameter ended by a backslash
    "text",  # no "=": Samba skips it silently
    "bad-section",  # [name without the closing bracket: Samba refuses the whole file
    "empty-name",  # "= value": Samba refuses the whole file
]

BLANK: LineKind = "blank"
COMMENT: LineKind = "comment"
SECTION: LineKind = "section"
PARAMETER: LineKind = "parameter"
CONTINUATION: LineKind = "continuation"
TEXT: LineKind = "text"
BAD_SECTION: LineKind = "bad-section"
EMPTY_NAME: LineKind = "empty-name"


#: What Samba reads from a logical line, kept on the entry's first line (a plain tuple
#: because a file has tens of thousands of them): kind, name (section name, parameter
#: name, or the text of an ignored line), value (parameters only) and the number of
#: continuation lines that follow.
Head = tuple[LineKind, str, "str | None", int]
#: Per physical line: a Head on an entry's first line, else the line's kind.
Row = "Head | LineKind"


class Entry(NamedTuple):
    """A section header, parameter or ignored line, as Samba reads it.

    ``line`` and ``last_line`` are 1-based physical line numbers (``last_line`` is
    larger when backslash continuation lines follow).
    """

    kind: LineKind
    line: int
    last_line: int
    name: str
    value: str | None


Span = tuple[int, int]


class Line(NamedTuple):
    """One physical line, for display: text, kind and where its name and value are.

    ``text`` has no line ending (``eol`` holds it: ``"\\n"``, ``"\\r\\n"`` or ``""``
    for a last line without one). ``name_span`` and ``value_span`` are
    ``(start, end)`` offsets into ``text`` for highlighting: the parameter name or
    the section name inside the brackets, and the part of the value on this line.
    ``entry_line`` is the number of the line the entry starts on (itself unless
    this is a continuation line).
    """

    number: int
    text: str
    eol: str
    kind: LineKind
    name_span: Span | None
    value_span: Span | None
    entry_line: int


class paused_gc:
    """Pause the cyclic garbage collector while a file's worth of tuples is built.

    Parsing allocates one small tuple per line; with the collector running, a 50,000
    line file triggers hundreds of collections that together double the parse time.
    Nothing built here forms reference cycles, so pausing loses nothing. Re-entrant.
    """

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()


def decode(data: bytes) -> tuple[str, bool]:
    """Text for ``data`` and whether every byte was UTF-8 (else lone surrogates stand in)."""
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), False


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def scan(
    lines: Sequence[str],
    start: int,
    newline_after_last: bool,
    stop: int | None = None,
    *,
    irregular: bool = True,
) -> tuple[list[Head | LineKind], int]:
    """Classify ``lines`` from ``start`` (which must begin a logical line).

    Scans at least up to index ``stop`` (all lines when None) and always to the end
    of a logical line. Returns one row per line scanned (a :data:`Head` tuple on each
    entry's first line, the kind elsewhere) and the index after the last line.
    ``irregular`` False promises that the lines hold no tab, lone CR, VT, FF or NUL,
    which lets the common line skip the blank-collapsing regex. This loop is the
    parser's hot path: plain tuples and local names on purpose.

    Large files repeat lines (``read only = no`` in every share): a line read once is
    not read again, its row is shared. In the 50,000-line benchmark file two thirds of
    the lines repeat and it parses in two thirds of the time; a real file of a few
    hundred lines (a quarter repeat) costs a few microseconds more.
    """
    rows: list[Head | LineKind] = []
    add = rows.append
    count = len(lines)
    limit = count - 1 if stop is None else min(stop, count - 1)
    last_index = count - 1
    blanks = BLANKS
    skip_to = -1
    read: dict[str, Head | LineKind] = {}
    known = read.get
    for index in range(start, count):
        if index <= skip_to:
            continue
        if index > limit:
            return rows, index
        line = lines[index]
        row = known(line)
        if row is not None:
            add(row)
            continue
        content = line.lstrip(blanks)
        if not content:
            add(BLANK)
            read[line] = BLANK
            continue
        first = content[0]
        if first == "#" or first == ";":
            add(COMMENT)
            continue
        logical = content.rstrip(blanks)
        extra = 0
        if logical[-1] == "\\" and (index < last_index or newline_after_last):
            logical, end = join_continued(lines, index, newline_after_last)  # type: ignore[arg-type]
            extra = end - index
            skip_to = end
            if "\0" in logical:
                logical = logical.split("\0", 1)[0]
            logical = logical.rstrip(blanks)
            first = logical[:1]
        elif irregular and not logical.isprintable():
            # A tab, CR, VT, FF or NUL inside the line (indentation is already gone).
            if "\0" in logical:
                logical = logical.split("\0", 1)[0].rstrip(blanks)
                first = logical[:1]
            logical = collapse_blanks(logical)
        elif "  " in logical:
            logical = collapse_blanks(logical)
        if first == "[":
            close = logical.find("]")
            if close < 0:
                row = (BAD_SECTION, logical[1:], None, extra)
            else:
                row = (SECTION, logical[1:close], None, extra)
        else:
            name, equals, value = logical.partition("=")
            if equals:
                name = name.strip(blanks)
                row = (PARAMETER if name else EMPTY_NAME, name, value.strip(blanks), extra)
            else:
                row = (TEXT, logical.strip(blanks), None, extra)
        add(row)
        if extra:
            rows += [CONTINUATION] * extra
        elif logical[-1:] != "\\":  # the file's last line may end in one: never reused
            read[line] = row
    return rows, count


def _irregular(text: str) -> bool:
    """Does ``text`` hold a character that needs the careful path (tab, lone CR, VT, FF, NUL)?"""
    if "\t" in text or "\x0b" in text or "\x0c" in text or "\0" in text:
        return True
    return "\r" in text and text.count("\r") != text.count("\r\n")


class SmbConfDocument:
    """One smb.conf file, parsed losslessly. See the package docstring for the whole API.

    ``path`` labels the file in findings and origins (a local path, a remote path
    or a name such as ``<editor>``); it is not read.
    """

    def __init__(self, data: bytes | str = b"", path: str | None = None) -> None:
        self.path = path
        self.generation = 0
        self._set(data)

    @classmethod
    def parse(cls, data: bytes | str, path: str | None = None) -> SmbConfDocument:
        return cls(data, path)

    @classmethod
    def read(cls, path: str) -> SmbConfDocument:
        """Parse a local file."""
        with open(path, "rb") as handle:
            return cls(handle.read(), path)

    def _set(self, data: bytes | str) -> None:
        if isinstance(data, bytes):
            text, self.utf8 = decode(data)
        else:
            text, self.utf8 = data, True
        #: Does the last line end in a newline? (False for an empty document.)
        self.final_newline = text.endswith("\n")
        lines = text.split("\n")
        if self.final_newline or not text:
            lines.pop()
        self._lines: list[str] = lines
        self._irregular = _irregular(text)
        with paused_gc():
            self._rows, _ = scan(lines, 0, self.final_newline, irregular=self._irregular)

    def set_text(self, data: bytes | str) -> None:
        """Replace the whole content (an editor's full reload)."""
        self._set(data)
        self.generation += 1

    def copy(self) -> SmbConfDocument:
        clone = SmbConfDocument.__new__(SmbConfDocument)
        clone.__dict__.update(self.__dict__)
        clone._lines = list(self._lines)
        clone._rows = list(self._rows)
        return clone

    # -- whole-file views --------------------------------------------------------
    def render(self) -> bytes:
        """The file's bytes: exactly what was parsed, plus any edits."""
        return encode(self.text)

    @property
    def text(self) -> str:
        body = "\n".join(self._lines)
        return body + "\n" if self.final_newline else body

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def raw_line(self, number: int) -> str:
        """Physical line ``number`` as stored: no ``\\n``, a CR before it kept."""
        return self._lines[self._index(number)]

    @property
    def raw_lines(self) -> list[str]:
        """Every physical line as stored (a copy)."""
        return list(self._lines)

    @property
    def rows(self) -> list[Head | LineKind]:
        """Per line, a :data:`Head` on an entry's first line, else the line's kind.

        The fast form for whole-file passes (the effective view reads it); treat it as
        read-only. Index = line number - 1.
        """
        return self._rows

    # -- lines ------------------------------------------------------------------
    def kind(self, number: int) -> LineKind:
        row = self._rows[self._index(number)]
        return row if isinstance(row, str) else row[0]

    def line(self, number: int) -> Line:
        """Physical line ``number`` (1-based) with its kind and highlight spans."""
        index = self._index(number)
        head_index = self.head_index(index)
        spans = self._entry_spans(head_index)
        name_span, value_span = spans[index - head_index] if spans else (None, None)
        raw = self._lines[index]
        newline = index < len(self._lines) - 1 or self.final_newline
        if raw.endswith("\r") and newline:
            text, eol = raw[:-1], "\r\n"
        else:
            text, eol = raw, "\n" if newline else ""
        row = self._rows[index]
        kind = row if isinstance(row, str) else row[0]
        return Line(index + 1, text, eol, kind, name_span, value_span, head_index + 1)

    def lines(self, first: int = 1, last: int | None = None) -> Iterator[Line]:
        """Lines ``first`` to ``last`` (1-based, inclusive; default: all)."""
        stop = len(self._lines) if last is None else min(last, len(self._lines))
        for number in range(max(1, first), stop + 1):
            yield self.line(number)

    def head_index(self, index: int) -> int:
        """0-based index of the first line of the entry that line ``index`` belongs to."""
        rows = self._rows
        while index > 0 and rows[index] is CONTINUATION:
            index -= 1
        return index

    def _index(self, number: int) -> int:
        if not 1 <= number <= len(self._lines):
            raise IndexError(f"line {number} is outside 1..{len(self._lines)}")
        return number - 1

    # -- entries ------------------------------------------------------------------
    def entries(self) -> Iterator[Entry]:
        """Section headers, parameters and ignored lines in file order."""
        for index, row in enumerate(self._rows):
            if not isinstance(row, str):
                yield Entry(row[0], index + 1, index + 1 + row[3], row[1], row[2])

    def entry_at(self, number: int) -> Entry | None:
        """The entry that physical line ``number`` belongs to (None for blanks and comments)."""
        index = self.head_index(self._index(number))
        row = self._rows[index]
        if isinstance(row, str):
            return None
        return Entry(row[0], index + 1, index + 1 + row[3], row[1], row[2])

    # -- spans ------------------------------------------------------------------
    def _entry_spans(self, head_index: int) -> list[tuple[Span | None, Span | None]]:
        row = self._rows[head_index]
        if isinstance(row, str) or row[0] not in (SECTION, PARAMETER, EMPTY_NAME):
            return []
        kind = row[0]
        spans: list[tuple[Span | None, Span | None]] = []
        last = head_index + row[3]
        in_value = False
        for index in range(head_index, last + 1):
            text = self._lines[index]
            if text.endswith("\r"):
                text = text[:-1]
            start = len(text) - len(text.lstrip(BLANKS))
            end = len(text.rstrip(BLANKS))
            if index < last and end > start and text[end - 1] == "\\":
                end = len(text[: end - 1].rstrip(BLANKS))
            if kind == SECTION:
                if index == head_index:
                    close = text.find("]", start + 1)
                    stop = close if close >= 0 else end
                    spans.append(((start + 1, stop) if stop > start + 1 else None, None))
                else:
                    spans.append((None, None))
                continue
            if in_value:
                spans.append((None, (start, end) if end > start else None))
                continue
            equals = text.find("=", start, end) if end > start else -1
            if equals < 0:
                spans.append(((start, end) if end > start else None, None))
                continue
            in_value = True
            name_end = len(text[:equals].rstrip(BLANKS))
            value_start = equals + 1
            while value_start < end and text[value_start] in BLANKS:
                value_start += 1
            spans.append(
                (
                    (start, name_end) if name_end > start else None,
                    (value_start, end) if end > value_start else None,
                )
            )
        return spans

    # -- changing lines -----------------------------------------------------------
    def replace_lines(self, first: int, count: int, new_lines: Sequence[str]) -> None:
        """Replace ``count`` physical lines from line ``first`` (1-based) with ``new_lines``.

        ``new_lines`` carry no ``\\n`` (a trailing ``\\r`` keeps a CRLF ending). Only
        the logical lines around the change are scanned again, which keeps typing in
        a large file cheap. ``first`` may be ``line_count + 1`` to append.
        """
        if any("\n" in text for text in new_lines):
            raise ValueError("new lines must not contain a newline")
        start = first - 1
        total_old = len(self._lines)
        if not 0 <= start <= total_old or count < 0 or start + count > total_old:
            raise IndexError(f"lines {first}..{first + count - 1} are outside the document")
        if not self._irregular:
            self._irregular = _irregular("\n".join(new_lines))
        old_rows = self._rows
        delta = len(new_lines) - count
        # The entry holding the first changed line may change; so may the one just
        # before an append, whose last line now gets a newline after it.
        if start < total_old:
            rescan_from = self.head_index(start)
        else:
            rescan_from = self.head_index(start - 1) if start > 0 else 0
        self._lines[start : start + count] = list(new_lines)
        if not self._lines:
            self.final_newline = False
        end_new = start + len(new_lines)
        rows: list[Head | LineKind] = []
        index = rescan_from
        total = len(self._lines)
        while index < total:
            more, index = scan(self._lines, index, self.final_newline, index, irregular=self._irregular)
            rows += more
            if index >= end_new:
                old_index = index - delta
                if old_index >= total_old or old_rows[old_index] is not CONTINUATION:
                    break
        old_stop = max(index - delta, rescan_from)
        self._rows[rescan_from:old_stop] = rows
        self.generation += 1
