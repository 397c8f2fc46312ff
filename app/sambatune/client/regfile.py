"""Registry (.reg) files, written the way regedit writes them.

Two formats exist. ``REGEDIT4`` is ANSI text and the only one Windows 95/98/ME read;
``Windows Registry Editor Version 5.00`` is what regedit has exported since Windows
2000: UTF-16 little-endian with a byte-order mark. Both use CRLF line ends, put a
blank line before every ``[KEY]`` and end with a blank line.

Inside a key block: ``"Name"="text"`` (backslash and double quote escaped),
``"Name"=dword:0000ffff`` (8 lowercase hex digits), ``"Name"=hex(N):xx,xx,...`` for
every other type (lines wrapped with a trailing backslash the way regedit wraps
them), ``@=`` for the default value, ``"Name"=-`` to delete a value and
``[-KEY]`` to delete a key. The delete forms are what make a backup exact: a value
that did not exist before SambaTune wrote it is put back as *absent*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sambatune.client.regvalue import (
    REG_BINARY,
    REG_DWORD,
    REG_EXPAND_SZ,
    REG_MULTI_SZ,
    REG_SZ,
    RegValue,
)
from sambatune.errors import InvalidInput

HEADER_V5 = "Windows Registry Editor Version 5.00"
HEADER_V4 = "REGEDIT4"
#: The ANSI code page REGEDIT4 text is written in (that of Western-European Windows).
ANSI_CODEPAGE = "cp1252"
BOM_UTF16_LE = b"\xff\xfe"
# regedit breaks a hex line once it has reached this many characters.
_MAX_HEX_CHARS = 77


@dataclass
class RegKeyBlock:
    """One ``[KEY]`` (or ``[-KEY]``) section and the value lines under it."""

    key: str
    delete: bool = False
    #: (name, value); value None means ``"name"=-`` (delete). Name "" is the default value.
    values: list[tuple[str, RegValue | None]] = field(default_factory=list)


@dataclass
class RegFile:
    version: int  # 4 (REGEDIT4) or 5
    blocks: list[RegKeyBlock] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.version not in (4, 5):
            raise InvalidInput(f"A .reg file is version 4 or 5, not {self.version}.")

    def text(self) -> str:
        """The file as text, CRLF line ends, exactly as it will be encoded."""
        unicode = self.version == 5
        out = [HEADER_V5 if unicode else HEADER_V4, "\r\n"]
        for block in self.blocks:
            out.append(f"\r\n[{'-' if block.delete else ''}{block.key}]\r\n")
            if block.delete:
                continue
            for name, value in block.values:
                out.append(_value_line(name, value, unicode))
                out.append("\r\n")
        out.append("\r\n")
        return "".join(out)

    def encode(self) -> bytes:
        """The bytes regedit would write: UTF-16 LE with BOM (v5) or ANSI (REGEDIT4)."""
        text = self.text()
        if self.version == 5:
            return BOM_UTF16_LE + text.encode("utf-16-le")
        try:
            return text.encode(ANSI_CODEPAGE)
        except UnicodeEncodeError as exc:
            raise InvalidInput(
                "A REGEDIT4 file cannot hold this text (it is ANSI); use version 5.",
                details=str(exc),
            ) from exc


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _name_part(name: str) -> str:
    return "@=" if name == "" else f'"{_escape(name)}"='


def _value_line(name: str, value: RegValue | None, unicode: bool) -> str:
    head = _name_part(name)
    if value is None:
        return head + "-"
    if value.type == REG_SZ and isinstance(value.data, str) and not _needs_hex(value.data):
        return f'{head}"{_escape(value.data)}"'
    if value.type == REG_DWORD and isinstance(value.data, int):
        return f"{head}dword:{value.data:08x}"
    return head + _hex_data(value, len(head), unicode)


def _needs_hex(text: str) -> bool:
    # A line break or NUL inside a quoted string would not survive regedit's parser.
    return any(ch in text for ch in "\r\n\0")


def _hex_data(value: RegValue, line_len: int, unicode: bool) -> str:
    prefix = "hex:" if value.type == REG_BINARY else f"hex({value.type:x}):"
    raw = value.to_bytes()
    if not unicode and value.type in (REG_SZ, REG_EXPAND_SZ, REG_MULTI_SZ):
        # REGEDIT4 files carry string data in the ANSI code page, not UTF-16.
        raw = raw.decode("utf-16-le").encode(ANSI_CODEPAGE)
    out = [prefix]
    line_len += len(prefix)
    last = len(raw) - 1
    for index, byte in enumerate(raw):
        out.append(f"{byte:02x}")
        if index == last:
            break
        out.append(",")
        line_len += 3
        if line_len >= _MAX_HEX_CHARS:
            out.append("\\\r\n  ")
            line_len = 2
    return "".join(out)


# -- reading -------------------------------------------------------------------------


def decode_reg_bytes(data: bytes) -> str:
    if data.startswith(BOM_UTF16_LE):
        return data[2:].decode("utf-16-le")
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8")
    return data.decode(ANSI_CODEPAGE)
