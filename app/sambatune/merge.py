"""Three-way merge of text by lines: put one person's edits on a file someone else changed.

The editor uses it when the live smb.conf changed under unsaved edits (a restore from
history, the wizard, another admin): the edits made since ``base`` go onto the new
live file, unless they touch lines that changed there too. Conservative on purpose: a
change next to an edit merges only when no line changes the section it belongs to
(smb.conf's ``[section]`` headers), and anything overlapping is a conflict, left to
the admin.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import NamedTuple


class Hunk(NamedTuple):
    """Lines ``start:end`` of the base replaced by ``lines`` (an insertion when empty)."""

    start: int
    end: int
    lines: tuple[bytes, ...]


def _hunks(base: list[bytes], other: list[bytes]) -> list[Hunk]:
    matcher = SequenceMatcher(None, base, other)
    return [
        Hunk(i1, i2, tuple(other[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _header(line: bytes) -> bool:
    return line.lstrip().startswith(b"[")


def _starts_section(lines: tuple[bytes, ...]) -> bool:
    """The first line that is not blank or a comment is a section header."""
    for line in lines:
        text = line.strip()
        if text and not text.startswith((b"#", b";")):
            return text.startswith(b"[")
    return False


def _clash(a: Hunk, b: Hunk, base: list[bytes]) -> bool:
    if a == b:
        return False  # the same change on both sides
    if a.start < b.end and b.start < a.end:
        return True  # they replace some of the same lines
    # Two insertions at one place: which goes first is a guess.
    if a.start == a.end == b.start == b.end:
        return True
    for x, y in ((a, b), (b, a)):
        if x.start != x.end or y.start == y.end:
            continue
        if y.start < x.start < y.end:
            return True  # an insertion inside the lines the other one replaces
        if x.start == y.end:
            # Lines added right after lines the other side changed stay in their section
            # only if they open one, or if no section starts or ends there.
            replaced = (*base[y.start : y.end], *y.lines)
            if not _starts_section(x.lines) and any(_header(line) for line in replaced):
                return True
        elif (
            x.start == y.start
            and any(_header(line) for line in x.lines)
            and not _starts_section((*y.lines, *base[y.end :]))
        ):
            # A section added right before lines the other side changed takes in what
            # follows it, unless that opens a section of its own.
            return True
    return False


def merge3(base: bytes, mine: bytes, theirs: bytes) -> bytes | None:
    """``theirs`` with the edits ``mine`` made to ``base``; None when they clash."""
    base_lines = base.splitlines(keepends=True)
    mine_hunks = _hunks(base_lines, mine.splitlines(keepends=True))
    their_hunks = _hunks(base_lines, theirs.splitlines(keepends=True))
    for a in mine_hunks:
        for b in their_hunks:
            if _clash(a, b, base_lines):
                return None
    hunks = sorted(set(mine_hunks) | set(their_hunks), key=lambda h: (h.start, h.end != h.start, h.end))
    merged: list[bytes] = []
    at = 0
    for hunk in hunks:
        merged += base_lines[at : hunk.start]
        merged += hunk.lines
        at = max(at, hunk.end)
    merged += base_lines[at:]
    return b"".join(merged)
