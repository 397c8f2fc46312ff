"""A parameter's entry in the server's own ``smb.conf(5)``, as plain text.

The page is read through a Transport (so it is the server's page, matching its
Samba version), gunzipped here, and only the entry asked for is turned from roff
into text: paragraphs filled, bullets kept, fonts and colour escapes dropped. No
``man`` or ``groff`` is needed on either side. When the page is not installed,
:func:`parameter_entry` returns None.
"""

from __future__ import annotations

import gzip
import re
from typing import TYPE_CHECKING

from sambatune.errors import SambaTuneError

if TYPE_CHECKING:
    from sambatune.remote.transport import Transport

MAN_PAGE_PATHS = (
    "/usr/share/man/man5/smb.conf.5.gz",
    "/usr/share/man/man5/smb.conf.5",
    "/usr/local/share/man/man5/smb.conf.5.gz",
    "/usr/local/samba/share/man/man5/smb.conf.5",
)

_ESCAPES = [
    (re.compile(r"\\m\[[^\]]*\]"), ""),  # colour
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font
    (re.compile(r"\\h'[^']*'"), ""),  # horizontal motion
    (re.compile(r"\\[*(]\(?(Aq|aq)"), "'"),
    (re.compile(r"\\\*\((lq|rq)"), '"'),
    (re.compile(r"\\\(dq"), '"'),
    (re.compile(r"\\\(bu"), "\u2022"),
    (re.compile(r"\\\(em"), "\u2014"),
    (re.compile(r"\\\(en"), "\u2013"),
    (re.compile(r"\\[&%c]"), ""),
    (re.compile(r"\\-"), "-"),
    (re.compile(r"\\ "), " "),
    (re.compile(r"\\e"), "\\\\"),
]


def read_man_page(transport: Transport | None = None, paths: tuple[str, ...] = MAN_PAGE_PATHS) -> str | None:
    """The roff source of smb.conf(5) on the target (this computer without a transport)."""
    for path in paths:
        data = _read(path, transport)
        if data is None:
            continue
        if path.endswith(".gz"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                continue
        return data.decode("utf-8", "replace")
    return None


def _read(path: str, transport: Transport | None) -> bytes | None:
    if transport is None:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return None
    try:
        if not transport.file_exists(path):
            return None
        return transport.read_file(path)
    except SambaTuneError:
        return None


def _plain(text: str) -> str:
    for pattern, replacement in _ESCAPES:
        text = pattern.sub(replacement, text)
    return text


def entry_source(page: str, name: str) -> list[str] | None:
    """The roff lines of ``name``'s entry (from its title line to the closing ``.RE``)."""
    lines = page.split("\n")
    wanted = " ".join(name.lower().split())
    for index, line in enumerate(lines[:-1]):
        title = re.sub(r"\s*\((S|G)\)\s*$", "", _plain(line)).strip().lower()
        if title == wanted and lines[index + 1].startswith(".PP"):
            depth = 0
            for end in range(index + 1, len(lines)):
                if lines[end].startswith(".RS"):
                    depth += 1
                elif lines[end].startswith(".RE"):
                    depth -= 1
                    if depth == 0:
                        return lines[index : end + 1]
            return lines[index:]
    return None


def render_entry(source: list[str]) -> str:
    """Plain text of an entry's roff lines: filled paragraphs, bullets, literal blocks."""
    paragraphs: list[str] = []
    current: list[str] = []
    literal = False
    bullet = False

    def flush() -> None:
        if current:
            text = " ".join(part.strip() for part in current if part.strip())
            paragraphs.append(("\u2022 " if bullet else "") + text if not literal else "\n".join(current))
            current.clear()

    skipping = False
    for line in source[1:]:
        if skipping:
            # The nroff branch of a bullet: its mark comes again from the .IP that follows.
            skipping = not line.startswith(".\\}")
            continue
        if line.startswith(".ie n"):
            skipping = True
            continue
        if line.startswith((".PP", ".sp", ".br", ".RE")):
            flush()
            bullet = False
        elif line.startswith(".IP"):
            flush()
            bullet = True
        elif line.startswith(".nf"):
            flush()
            literal = True
        elif line.startswith(".fi"):
            flush()
            literal = False
        elif line.startswith((".RS", ".ie", ".el", ".if", ".\\}", ".ps", ".nr", ".it", ".")):
            continue
        else:
            current.append(_plain(line))
    flush()
    title = _plain(source[0]).strip()
    body = "\n\n".join(paragraph for paragraph in paragraphs if paragraph.strip())
    return f"{title}\n\n{body}".strip()


def parameter_entry(
    name: str, transport: Transport | None = None, paths: tuple[str, ...] = MAN_PAGE_PATHS
) -> str | None:
    """``name``'s entry in the target's smb.conf(5) as text; None without page or entry."""
    page = read_man_page(transport, paths)
    if page is None:
        return None
    source = entry_source(page, name)
    return render_entry(source) if source else None
