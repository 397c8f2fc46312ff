"""Reading .reg files back, as regedit does: how the tests check what SambaTune writes
(app/sambatune/client/regfile.py) and what importing it by hand would do."""

from __future__ import annotations

import re

from sambatune.client.regfile import (
    ANSI_CODEPAGE,
    HEADER_V4,
    HEADER_V5,
    RegFile,
    RegKeyBlock,
    decode_reg_bytes,
)
from sambatune.client.registry import RegistryStore, normalize_key
from sambatune.client.regvalue import REG_BINARY, REG_DWORD, REG_EXPAND_SZ, REG_MULTI_SZ, REG_SZ, RegValue
from sambatune.errors import InvalidInput

_VALUE_LINE = re.compile(r'^(?:@|"((?:[^"\\]|\\.)*)")\s*=\s*(.*)$', re.DOTALL)
_HEX_PREFIX = re.compile(r"^hex(?:\(([0-9a-fA-F]+)\))?:(.*)$", re.DOTALL)


def parse_reg(data: bytes | str) -> RegFile:
    """Read a .reg file (either version; CRLF or LF; comments; wrapped hex lines)."""
    text = decode_reg_bytes(data) if isinstance(data, bytes) else data
    lines = _logical_lines(text)
    if not lines:
        raise InvalidInput("The .reg file is empty.")
    header = lines[0][1].strip()
    if header == HEADER_V5:
        version = 5
    elif header == HEADER_V4:
        version = 4
    else:
        raise InvalidInput(
            f"Not a .reg file: the first line is {header[:60]!r}.",
            details=f"Expected {HEADER_V5!r} or {HEADER_V4!r}.",
        )
    regfile = RegFile(version)
    block: RegKeyBlock | None = None
    for number, line in lines[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            inner = stripped[1:-1].strip()
            delete = inner.startswith("-")
            key = normalize_key(inner[1:] if delete else inner)
            block = RegKeyBlock(key, delete=delete)
            regfile.blocks.append(block)
            continue
        if block is None:
            raise InvalidInput(f".reg line {number}: a value before any [KEY].")
        if block.delete:
            raise InvalidInput(f".reg line {number}: a value under a [-KEY] deletion.")
        block.values.append(_parse_value_line(stripped, number, version))
    return regfile


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Physical lines joined where a hex line ends in a backslash, with their line numbers."""
    result: list[tuple[int, str]] = []
    pending: str | None = None
    start = 0
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if pending is not None:
            piece = raw.strip()
            pending += piece
        else:
            pending, start = raw, number
        if pending.rstrip().endswith("\\") and _HEX_PREFIX.match(_after_equals(pending)):
            pending = pending.rstrip()[:-1]
            continue
        result.append((start, pending))
        pending = None
    if pending is not None:
        result.append((start, pending))
    return result


def _after_equals(line: str) -> str:
    match = _VALUE_LINE.match(line.strip())
    return match.group(2).strip() if match else ""


def _unescape(text: str, number: int) -> str:
    out = []
    chars = iter(text)
    for ch in chars:
        if ch != "\\":
            out.append(ch)
            continue
        nxt = next(chars, "")
        if nxt in ("\\", '"'):
            out.append(nxt)
        elif nxt == "n":
            out.append("\n")
        elif nxt == "r":
            out.append("\r")
        elif nxt == "0":
            out.append("\0")
        else:
            raise InvalidInput(f".reg line {number}: unknown escape \\{nxt}.")
    return "".join(out)


def _parse_value_line(line: str, number: int, version: int) -> tuple[str, RegValue | None]:
    match = _VALUE_LINE.match(line)
    if not match:
        raise InvalidInput(f".reg line {number} is not a value: {line[:60]!r}.")
    name = "" if match.group(1) is None else _unescape(match.group(1), number)
    spec = match.group(2).strip()
    if spec == "-":
        return name, None
    if spec.startswith('"'):
        if len(spec) < 2 or not spec.endswith('"'):
            raise InvalidInput(f".reg line {number}: an unterminated string.")
        return name, RegValue(REG_SZ, _unescape(spec[1:-1], number))
    lowered = spec.lower()
    if lowered.startswith("dword:"):
        digits = spec[6:].strip()
        if not re.fullmatch(r"[0-9a-fA-F]{1,8}", digits):
            raise InvalidInput(f".reg line {number}: {spec!r} is not a dword.")
        return name, RegValue(REG_DWORD, int(digits, 16))
    hex_match = _HEX_PREFIX.match(spec)
    if hex_match:
        value_type = int(hex_match.group(1), 16) if hex_match.group(1) else REG_BINARY
        body = re.sub(r"\s+", "", hex_match.group(2)).rstrip(",")
        try:
            raw = bytes(int(part, 16) for part in body.split(",")) if body else b""
        except ValueError as exc:
            raise InvalidInput(f".reg line {number}: bad hex data.") from exc
        if version == 4 and value_type in (REG_SZ, REG_EXPAND_SZ, REG_MULTI_SZ):
            raw = raw.decode(ANSI_CODEPAGE).encode("utf-16-le")
        return name, RegValue.from_bytes(value_type, raw)
    raise InvalidInput(f".reg line {number}: cannot read the value {spec[:40]!r}.")


def import_reg(store: RegistryStore, regfile: RegFile) -> None:
    """Do what ``regedit /s file.reg`` does, on any registry store."""
    for block in regfile.blocks:
        if block.delete:
            store.delete_tree(block.key)
            continue
        store.create_key(block.key)
        for name, value in block.values:
            if value is None:
                store.delete_value(block.key, name)
            else:
                store.set(block.key, name, value)
