"""Minimal edits of an smb.conf document that follow the file's own style.

Every function changes only the lines it must and returns a :class:`LineChange`
list saying which (for an editor's undo stack or a review diff). New lines copy
the file's habits: the indentation and the spacing around ``=`` of neighbouring
parameter lines, CRLF when the file uses it, ``#`` or ``;`` as the file comments
settings out.

Duplicates: :func:`set_parameter` replaces the occurrence that wins (the last one
in the section, counting synonyms and every block of a repeated section) and
leaves earlier ones alone, since they have no effect. :func:`unset_parameter`
removes every occurrence, synonyms included, so the default applies again.

Only the given document is edited: a value set in an included file is not
touched (the effective view says where a value comes from).

Includes: Samba reads an included file at its ``include =`` line, and a file that
opens a share leaves Samba in that share when it returns. So a section's block ends
at such an include (its "barrier"): a new line goes above it, and lines below it,
up to the next header, belong to no section of this file's own (they are read in
the included file's last share). Callers that read the includes pass the lines of
the includes that open a section (``barriers``) and of those that could not be read
(``unread``, default: every include): a new line also goes above the first unread
include of its block, the side that is right whichever the file holds.
:mod:`sambatune.conf.placement` checks each edit with the reader.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container
from typing import NamedTuple

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import (
    COMMENT,
    CONTINUATION,
    PARAMETER,
    SECTION,
    SmbConfDocument,
    scan,
)
from sambatune.conf.syntax import BLANKS, is_global_section, name_key, section_key
from sambatune.errors import InvalidInput

DEFAULT_INDENT = "\t"
DEFAULT_EQUALS = " = "


class LineChange(NamedTuple):
    """Lines ``first`` .. ``first + removed - 1`` (1-based) were replaced by ``inserted``."""

    first: int
    removed: int
    inserted: tuple[str, ...]


class _Block(NamedTuple):
    key: str  # "global" or the section's lookup key
    header: int | None  # 0-based index of the [name] line; None for lines before any section
    start: int  # first index after the header
    end: int  # index after the block's last line


#: Lines after an include that opens a section: read in a section of another file.
AFTER_INCLUDE = "\0after-include"

#: 1-based line numbers of include lines: those after which Samba is in another section
#: (``barriers``), or those whose file was not read (``unread``; None: every include).
Barriers = Container[int]
#: No barriers: a section is every line from its header to the next.
WHOLE_SECTIONS: Barriers = frozenset()


def _blocks(document: SmbConfDocument, barriers: Barriers = WHOLE_SECTIONS) -> list[_Block]:
    blocks: list[_Block] = []
    key, header, start = "global", None, 0
    rows = document.rows
    for index, row in enumerate(rows):
        if isinstance(row, str):
            continue
        if row[0] == SECTION:
            blocks.append(_Block(key, header, start, index))
            name = row[1]
            key = "global" if is_global_section(name) else section_key(name)
            header, start = index, index + 1 + row[3]
        elif row[0] == PARAMETER and key != AFTER_INCLUDE and _is_barrier(row[1], index, barriers):
            # The block ends above the include; what follows it is read elsewhere.
            blocks.append(_Block(key, header, start, index))
            key, header, start = AFTER_INCLUDE, index, index
    blocks.append(_Block(key, header, start, len(rows)))
    return blocks


def _is_barrier(name: str, index: int, barriers: Barriers) -> bool:
    return index + 1 in barriers and name_key(name) == "include"


def _first_unread_include(document: SmbConfDocument, block: _Block, unread: Barriers | None) -> int | None:
    """0-based index of the first include line of ``block`` whose file was not read."""
    rows = document.rows
    for index in range(block.start, block.end):
        row = rows[index]
        if isinstance(row, str) or row[0] != PARAMETER or name_key(row[1]) != "include":
            continue
        if unread is None or index + 1 in unread:
            return index
    return None


def _section_blocks(
    document: SmbConfDocument, section: str, barriers: Barriers = WHOLE_SECTIONS
) -> list[_Block]:
    key = "global" if is_global_section(section) else section_key(section)
    return [
        block
        for block in _blocks(document, barriers)
        if block.key == key and (block.header is not None or _has_entries(document, block))
    ]


def _has_entries(document: SmbConfDocument, block: _Block) -> bool:
    return any(not isinstance(row, str) for row in document.rows[block.start : block.end])


def _identity(name: str, catalog: ParameterCatalog | None) -> str:
    """What makes two written names the same parameter (synonyms included when known)."""
    if catalog is not None:
        lookup = catalog.lookup(name)
        if lookup is not None:
            return "=" + lookup.parameter.name
    return name_key(name)


def _occurrences(
    document: SmbConfDocument, blocks: list[_Block], name: str, catalog: ParameterCatalog | None
) -> list[int]:
    """0-based head indexes of the parameter lines in ``blocks`` that set ``name``."""
    wanted = _identity(name, catalog)
    found = []
    rows = document.rows
    for block in blocks:
        for index in range(block.start, block.end):
            row = rows[index]
            if not isinstance(row, str) and row[0] == PARAMETER and (_identity(row[1], catalog) == wanted):
                found.append(index)
    return found


# -- the file's style ---------------------------------------------------------------------


def _line_ending(document: SmbConfDocument) -> str:
    """ "\\r" when most lines end in CRLF (the CR is part of the stored line), else ""."""
    lines = document.raw_lines
    if not document.final_newline:
        lines = lines[:-1]  # the last line has no ending to learn from
    crlf = sum(1 for line in lines if line.endswith("\r"))
    return "\r" if lines and crlf * 2 > len(lines) else ""


def _parameter_shape(text: str) -> tuple[str, str] | None:
    """(indentation, text between name and value) of a one-line ``name = value``."""
    text = text.rstrip("\r")
    indent = text[: len(text) - len(text.lstrip(BLANKS))]
    equals = text.find("=")
    if equals < 0:
        return None
    before = text[:equals]
    after = text[equals + 1 :]
    left = before[len(before.rstrip(BLANKS)) :]
    right = after[: len(after) - len(after.lstrip(BLANKS))]
    return indent, left + "=" + right


def _style(document: SmbConfDocument, near: list[int]) -> tuple[str, str]:
    """Indentation and ``=`` spacing: from the given lines first, else the file's habit."""
    rows = document.rows
    for index in reversed(near):
        shape = _parameter_shape(document.raw_line(index + 1))
        if shape is not None:
            return shape
    shapes = Counter(
        shape
        for index, row in enumerate(rows)
        if not isinstance(row, str)
        and row[0] == PARAMETER
        and row[3] == 0
        and (shape := _parameter_shape(document.raw_line(index + 1))) is not None
    )
    if shapes:
        return shapes.most_common(1)[0][0]
    return DEFAULT_INDENT, DEFAULT_EQUALS


def _comment_marker(document: SmbConfDocument) -> str:
    """``#`` or ``;``: whichever the file uses more to comment settings out (``#`` if none)."""
    counts: Counter[str] = Counter()
    for index, row in enumerate(document.rows):
        if row == COMMENT:
            text = document.raw_line(index + 1).lstrip(BLANKS)
            if "=" in text:
                counts[text[0]] += 1
    return counts.most_common(1)[0][0] if counts else "#"


# -- checks on what the caller asks for -----------------------------------------------------


def _check_name(name: str) -> str:
    cleaned = name.strip(BLANKS)
    if not cleaned:
        raise InvalidInput("The parameter name is empty.")
    if any(c in cleaned for c in "\n\r=[]") or cleaned[0] in "#;":
        raise InvalidInput(
            f"{name!r} cannot be a parameter name (no =, [, ], line breaks, and "
            "it may not start with # or ;)."
        )
    return cleaned


def _check_value(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise InvalidInput("A value must fit on one line (Samba has no quoting for line breaks).")
    cleaned = value.strip(BLANKS)
    if cleaned.endswith("\\"):
        raise InvalidInput("A value may not end in a backslash: Samba would join the next line to it.")
    return cleaned


def _check_section(name: str) -> str:
    # Blanks at either end are part of a Samba section name ("[ a ]" is not "[a]").
    if not name.strip(BLANKS) or any(c in name for c in "\n\r]"):
        raise InvalidInput(
            f"{name!r} cannot be a section name (it needs a character other "
            "than blanks, and no ] or line break)."
        )
    return name


# -- parameters -----------------------------------------------------------------------------


def set_parameter(
    document: SmbConfDocument,
    section: str,
    name: str,
    value: str,
    catalog: ParameterCatalog | None = None,
    *,
    barriers: Barriers = WHOLE_SECTIONS,
    unread: Barriers | None = None,
) -> list[LineChange]:
    """Make ``section`` set ``name = value``; see the module docstring for duplicates.

    An existing winning line keeps its indentation, spacing and, when it spells the
    same name, its spelling; a synonym is replaced by ``name``. A new line goes at
    the end of the section's last block (above an include that opens a section or
    was not read); a
    share that does not exist is added at the end of the file, [global] before the
    first share when it is missing.
    """
    name = _check_name(name)
    value = _check_value(value)
    section = "global" if is_global_section(section) else _check_section(section)
    eol = _line_ending(document)
    blocks = _section_blocks(document, section, barriers)
    found = _occurrences(document, blocks, name, catalog)
    if found:
        index = found[-1]
        row = document.rows[index]
        assert not isinstance(row, str)
        raw = document.raw_line(index + 1)
        indent, equals = _parameter_shape(raw) or (DEFAULT_INDENT, DEFAULT_EQUALS)
        written = name
        if name_key(row[1]) == name_key(name):
            # The same name: keep the file's spelling (case and blanks) of it.
            written = row[1]
            text = raw.rstrip("\r")
            if row[3] == 0 and "=" in text:
                written = text[len(indent) : text.index("=")].rstrip(BLANKS)
        ending = "\r" if raw.endswith("\r") else ""
        line = f"{indent}{written}{equals}{value}{ending}"
        change = LineChange(index + 1, 1 + row[3], (line,))
        document.replace_lines(change.first, change.removed, change.inserted)
        return [change]
    block = _target_block(document, blocks, section, name, catalog, barriers) if blocks else None
    if block is None:
        return _add_section_with(document, section, name, value, eol, barriers)
    near = [i for i in range(block.start, block.end) if not isinstance(document.rows[i], str)]
    indent, equals = _style(document, near)
    insert_at = _block_content_end(document, block)
    unknown = _first_unread_include(document, block, unread)
    if unknown is not None and unknown < insert_at:
        insert_at = unknown
    return [
        _insert(document, insert_at, [f"{indent}{name}{equals}{value}{eol}"], eol, catalog, may_precede=True)
    ]


def _target_block(
    document: SmbConfDocument,
    blocks: list[_Block],
    section: str,
    name: str,
    catalog: ParameterCatalog | None,
    barriers: Barriers = WHOLE_SECTIONS,
) -> _Block | None:
    """Where a new line for ``name`` goes; None: in a new [global] above the first share."""
    if not is_global_section(section):
        return blocks[-1]
    # A share copies the [global] defaults when Samba reads its header, so a share-level
    # default must come before every share: in a global block that precedes them all
    # (an include that opens a share counts as one).
    first_share = next(
        (
            block.header
            for block in _blocks(document, barriers)
            if block.key != "global" and block.header is not None
        ),
        None,
    )
    before = [block for block in blocks if first_share is None or (block.header or 0) < first_share]
    if before:
        return before[-1]
    lookup = catalog.lookup(name) if catalog is not None else None
    if lookup is not None and lookup.parameter.scope == "global":
        return blocks[-1]
    return None


def _block_content_end(document: SmbConfDocument, block: _Block) -> int:
    """0-based index after the block's last entry line (or after its header)."""
    rows = document.rows
    end = block.start if block.header is not None else 0
    index = block.start
    while index < block.end:
        row = rows[index]
        if not isinstance(row, str):
            end = index + 1 + row[3]
            index = end
        else:
            index += 1
    return end


def _insert(
    document: SmbConfDocument,
    at: int,
    lines: list[str],
    eol: str,
    catalog: ParameterCatalog | None = None,
    *,
    may_precede: bool = False,
) -> LineChange:
    """Insert ``lines`` before 0-based index ``at``, minding how the file ends.

    A file without a final newline keeps that shape: the new last line gets no line
    ending, and the old last line gets the separator (its CR, in a CRLF file).

    The file's last line may end in a backslash that continues into nothing; Samba
    would join the first inserted line to it. A blank line in between takes the join
    when that leaves the entry above as Samba read it; otherwise, with
    ``may_precede``, the lines go in front of that entry (a plain parameter of the
    same block, so the order does not matter), else the edit is refused.
    """
    head = _dangling_entry(document, at)
    if head is not None:
        separated = lines if not lines[0].strip(BLANKS) else [eol, *lines]
        if _reads_the_same(document, head, at, separated):
            lines = separated
        elif may_precede and _order_free(document, head, lines, catalog):
            at = head
        else:
            raise InvalidInput(
                f"The file's last line ({at}) ends in a backslash: Samba would read a line "
                f"added after it as part of the entry on line {head + 1}, or read that entry "
                "differently. Remove the backslash first."
            )
    count = document.line_count
    if count == 0:
        document.final_newline = True
    if at == count and count and not document.final_newline:
        last = document.raw_line(count)
        lines = [*lines[:-1], lines[-1].removesuffix("\r")]
        if eol and not last.endswith("\r"):
            change = LineChange(count, 1, (last + eol, *lines))
            document.replace_lines(change.first, change.removed, change.inserted)
            return change
    change = LineChange(at + 1, 0, tuple(lines))
    document.replace_lines(change.first, 0, change.inserted)
    return change


def _dangling_entry(document: SmbConfDocument, at: int) -> int | None:
    """The 0-based head of the entry above index ``at`` if it ends in a backslash.

    Only the file's last line can: anywhere else Samba joins the next line to it.
    """
    if at == 0 or at != document.line_count:
        return None
    head = document.head_index(at - 1)
    if isinstance(document.rows[head], str):  # blank or comment: never continued
        return None
    return head if document.raw_line(at).rstrip(BLANKS).endswith("\\") else None


def _reads_the_same(document: SmbConfDocument, head: int, at: int, lines: list[str]) -> bool:
    """Would Samba read the entry at ``head`` as now, and ``lines`` after the first apart?"""
    own = [document.raw_line(number) for number in range(head + 1, at + 1)]
    rows, _ = scan([*own, *lines], 0, True)
    if any(row is CONTINUATION for row in rows[len(own) + 1 :]):
        return False
    before, after = document.rows[head], rows[0]
    assert not isinstance(before, str) and not isinstance(after, str)
    if before[0] != after[0]:
        return False
    if before[0] == SECTION:
        return before[1] == after[1]
    if before[0] == PARAMETER:
        return before[1:3] == after[1:3]
    return True  # a line Samba ignores, or one that makes it refuse the file, stays so


def _order_free(
    document: SmbConfDocument, head: int, lines: list[str], catalog: ParameterCatalog | None
) -> bool:
    """Can ``lines`` (one new parameter) go before the parameter at ``head``?

    Yes unless either one reads a file or copies a share at that point.
    """
    row = document.rows[head]
    assert not isinstance(row, str)
    if row[0] != PARAMETER:
        return False
    new = SmbConfDocument("\n".join(lines) + "\n")
    names = [row[1], *(entry.name for entry in new.entries())]
    return all(_identity(name, catalog) not in _ORDERED for name in names)


_ORDERED = {"=include", "=copy", "include", "copy"}


def _add_section_with(
    document: SmbConfDocument,
    section: str,
    name: str,
    value: str,
    eol: str,
    barriers: Barriers = WHOLE_SECTIONS,
) -> list[LineChange]:
    indent, equals = _style(document, [])
    header = "[global]" if is_global_section(section) else f"[{section}]"
    lines = [header + eol, f"{indent}{name}{equals}{value}{eol}"]
    if is_global_section(section):
        first_share = next(
            (block.header for block in _blocks(document, barriers) if block.header is not None), None
        )
        if first_share is not None:
            return [_insert(document, first_share, [*lines, eol], eol)]
    return [_append(document, lines, eol)]


def _append(document: SmbConfDocument, lines: list[str], eol: str) -> LineChange:
    """Add ``lines`` at the end, after a blank line unless the file ends with one."""
    count = document.line_count
    if count and document.raw_line(count).strip(BLANKS):
        lines = [eol, *lines]
    return _insert(document, count, lines, eol)


def unset_parameter(
    document: SmbConfDocument,
    section: str,
    name: str,
    catalog: ParameterCatalog | None = None,
    *,
    barriers: Barriers = WHOLE_SECTIONS,
) -> list[LineChange]:
    """Remove every line of ``section`` that sets ``name`` (synonyms too); [] if none does.

    Lines below an include that opens a section are left: Samba reads them in a
    section of the included file.
    """
    name = _check_name(name)
    blocks = _section_blocks(document, section, barriers)
    changes = []
    for index in reversed(_occurrences(document, blocks, name, catalog)):
        row = document.rows[index]
        assert not isinstance(row, str)
        change = LineChange(index + 1, 1 + row[3], ())
        document.replace_lines(change.first, change.removed, ())
        changes.append(change)
    return changes


# -- sections --------------------------------------------------------------------------------


def add_section(document: SmbConfDocument, name: str) -> list[LineChange]:
    """Append an empty ``[name]`` at the end; InvalidInput if the section exists."""
    name = _check_section(name)
    if _section_blocks(document, name, WHOLE_SECTIONS):
        raise InvalidInput(f"[{name}] already exists.")
    eol = _line_ending(document)
    return [_append(document, [f"[{name}]{eol}"], eol)]


def rename_section(document: SmbConfDocument, old: str, new: str) -> list[LineChange]:
    """Rename every ``[old]`` header to ``[new]``, keeping the rest of each header line."""
    new = _check_section(new)
    if is_global_section(old) or is_global_section(new):
        raise InvalidInput("[global] cannot be renamed, and no share can become [global].")
    blocks = [block for block in _section_blocks(document, old, WHOLE_SECTIONS) if block.header is not None]
    if not blocks:
        raise InvalidInput(f"There is no section [{old}].")
    if section_key(new) != section_key(old) and _section_blocks(document, new, WHOLE_SECTIONS):
        raise InvalidInput(f"[{new}] already exists; renaming would merge the two sections.")
    changes = []
    for block in blocks:
        assert block.header is not None
        row = document.rows[block.header]
        assert not isinstance(row, str)
        raws = [document.raw_line(block.header + 1 + offset) for offset in range(1 + row[3])]
        opening = raws[0].find("[")
        # A backslash can carry the name over several lines: up to the one with the "]"
        # (Samba only drops characters when it joins, so the first "]" is the one it sees).
        for last, raw in enumerate(raws):
            closing = raw.find("]", opening + 1 if last == 0 else 0)
            if closing >= 0:
                break
        line = raws[0][: opening + 1] + new + raws[last][closing:]
        change = LineChange(block.header + 1, last + 1, (line,))
        document.replace_lines(change.first, change.removed, change.inserted)
        changes.append(change)
    return changes


def remove_section(document: SmbConfDocument, name: str) -> list[LineChange]:
    """Remove every block of a section (header to the next header).

    Comment lines right above the next header (no blank line between) stay: they
    describe the next section. For [global], parameters before the first section go too.
    """
    blocks = _section_blocks(document, name, WHOLE_SECTIONS)
    if not blocks:
        raise InvalidInput(f"There is no section [{name}].")
    changes = []
    rows = document.rows
    for block in reversed(blocks):
        if block.header is None:
            # Lines before any section: remove the settings, keep the file's opening comments.
            for index in reversed(range(block.start, block.end)):
                row = rows[index]
                if not isinstance(row, str):
                    change = LineChange(index + 1, 1 + row[3], ())
                    document.replace_lines(change.first, change.removed, ())
                    changes.append(change)
            continue
        first = block.header
        end = block.end
        if end < len(rows):
            while end - 1 > first and rows[end - 1] == COMMENT:
                end -= 1
        change = LineChange(first + 1, end - first, ())
        document.replace_lines(change.first, change.removed, ())
        changes.append(change)
    return changes


# -- commenting out and back in ---------------------------------------------------------------


def comment_out(document: SmbConfDocument, line: int) -> list[LineChange]:
    """Comment out the setting or header on ``line`` (all its continuation lines too).

    The file's comment character goes in front of each line, so
    :func:`uncomment` restores the lines exactly.
    """
    entry = document.entry_at(line)
    if entry is None:
        raise InvalidInput(f"Line {line} is blank or already a comment.")
    marker = _comment_marker(document)
    lines = tuple(marker + document.raw_line(number) for number in range(entry.line, entry.last_line + 1))
    change = LineChange(entry.line, len(lines), lines)
    document.replace_lines(change.first, change.removed, change.inserted)
    return [change]


def uncomment(document: SmbConfDocument, line: int) -> list[LineChange]:
    """Turn a commented-out setting or header on ``line`` back into a live line.

    The first ``#`` or ``;`` is removed (nothing else, so a line commented by
    :func:`comment_out` comes back byte for byte). When the result ends in a
    backslash, the commented lines after it that continue it are restored too.
    """
    if document.kind(line) != COMMENT:
        raise InvalidInput(f"Line {line} is not a comment.")
    restored: list[str] = []
    number = line
    while number <= document.line_count and document.kind(number) == COMMENT:
        raw = document.raw_line(number)
        marker = len(raw) - len(raw.lstrip(BLANKS))
        text = raw[:marker] + raw[marker + 1 :]
        restored.append(text)
        if not text.rstrip(BLANKS).endswith("\\"):
            break
        number += 1
    if restored[-1].rstrip(BLANKS).endswith("\\"):
        raise InvalidInput(f"Line {line} ends in a backslash: uncommented, it would swallow the next line.")
    probe = SmbConfDocument("\n".join(restored) + "\n")
    first = next(probe.entries(), None)
    if first is None or first.kind not in (PARAMETER, SECTION) or first.last_line != len(restored):
        raise InvalidInput(f"Line {line} is a comment, not a commented-out setting or header.")
    change = LineChange(line, len(restored), tuple(restored))
    document.replace_lines(change.first, change.removed, change.inserted)
    return [change]
