"""The character-level rules of Samba's smb.conf reader, as its C code applies them.

Samba (lib/util/tini.c since 4.2) reads a file byte by byte: ``\\n`` ends a line,
whitespace is what C's ``isspace`` says in the C locale (space, tab, CR, VT, FF),
runs of whitespace collapse to their first character everywhere on a line, a line
whose first non-blank character is ``#`` or ``;`` is a comment, and a line ending
in a backslash (optionally followed by blanks) continues onto the next one. Names
are compared ignoring case and all whitespace (``strwicmp``).

Python's own notion of whitespace (``str.split()``, ``str.isspace()``) is wider
than C's, so everything here names the characters explicitly.
"""

from __future__ import annotations

import re

#: What C's isspace() accepts in the C locale, without the newline that ends a line.
BLANKS = " \t\r\x0b\x0c"

# A run of two or more blanks; Samba keeps the run's first character.
_BLANK_RUN = re.compile(r"([ \t\r\x0b\x0c])[ \t\r\x0b\x0c]+")
_NOT_PLAIN_SPACE = re.compile(r"[\t\r\x0b\x0c]")


def collapse_blanks(text: str) -> str:
    """Zap every run of blanks to its first character, as Samba does while reading."""
    return _BLANK_RUN.sub(r"\1", text)


def name_key(name: str) -> str:
    """The identity Samba gives a parameter or section name: case and whitespace ignored.

    ``Max XMIT``, ``maxxmit`` and ``max\\txmit`` all give ``maxxmit``. Only ASCII
    letters fold, as in Samba's byte-wise comparison.
    """
    key = name.replace(" ", "")
    if _NOT_PLAIN_SPACE.search(key):
        key = _NOT_PLAIN_SPACE.sub("", key)
    if key.isascii():
        return key.lower()
    return "".join(c.lower() if c.isascii() else c for c in key)


def is_global_section(name: str) -> bool:
    """``[global]`` and ``[globals]``, in any case and with any blanks, are the global section."""
    # Most headers are plain ASCII words: nothing to strip, and lower() folds as Samba does.
    key = name.lower() if name.isascii() and name.isalnum() else name_key(name)
    return key == "global" or key == "globals"


def section_key(name: str) -> str:
    """How Samba finds a share again: lower-cased, blanks significant (``[ a ]`` is not ``[a]``)."""
    return name.lower()


def join_continued(lines: list[str], start: int, newline_after_last: bool) -> tuple[str, int]:
    """Samba's logical line that begins at physical line ``start``, and the index of its last line.

    ``lines`` are the physical lines without their ``\\n``; ``newline_after_last`` says
    whether the last of them ends in one. This follows tini.c's get_line() step by
    step: the backslash (and one following blank) is removed, the next line is
    appended directly, and blank runs are zapped across the join. A removed
    backslash can expose another one, so ``a\\\\`` followed by an empty line joins
    twice.
    """
    buffer = collapse_blanks(lines[start].lstrip(BLANKS))
    index = start
    last = len(lines) - 1
    while index < last or (index == last and newline_after_last):
        if buffer.endswith("\\"):
            buffer = buffer[:-1]
        elif len(buffer) > 1 and buffer[-2] == "\\" and buffer[-1] in BLANKS:
            buffer = buffer[:-2]
        else:
            break
        if index == last:
            break  # the newline was the file's last byte: nothing more to join
        index += 1
        segment = collapse_blanks(lines[index])
        if buffer and buffer[-1] in BLANKS:
            segment = segment.lstrip(BLANKS)
        buffer += segment
    return buffer, index
