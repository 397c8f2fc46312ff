"""Windows registry values as plain data: a type number and its data, any type at all.

A backup must put back whatever was there, and what was there is not always the
DWORD a tuning guide expects (a hand-edited ``TcpWindowSize`` may be a REG_SZ), so
every registry type round-trips: through JSON, through .reg files and through bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from sambatune.errors import InvalidInput

REG_NONE = 0
REG_SZ = 1
REG_EXPAND_SZ = 2
REG_BINARY = 3
REG_DWORD = 4
REG_DWORD_BIG_ENDIAN = 5
REG_LINK = 6
REG_MULTI_SZ = 7
REG_QWORD = 11

TYPE_NAMES = {
    REG_NONE: "REG_NONE",
    REG_SZ: "REG_SZ",
    REG_EXPAND_SZ: "REG_EXPAND_SZ",
    REG_BINARY: "REG_BINARY",
    REG_DWORD: "REG_DWORD",
    REG_DWORD_BIG_ENDIAN: "REG_DWORD_BIG_ENDIAN",
    REG_LINK: "REG_LINK",
    REG_MULTI_SZ: "REG_MULTI_SZ",
    REG_QWORD: "REG_QWORD",
}
TYPE_NUMBERS = {name: number for number, name in TYPE_NAMES.items()}

RegData = int | str | tuple[str, ...] | bytes


@dataclass(frozen=True)
class RegValue:
    """One registry value's type and data (DWORD/QWORD: int; SZ: str; MULTI_SZ: tuple)."""

    type: int
    data: RegData

    def __post_init__(self) -> None:
        if self.type in (REG_DWORD, REG_DWORD_BIG_ENDIAN):
            if not isinstance(self.data, int) or not 0 <= self.data <= 0xFFFFFFFF:
                raise InvalidInput(f"A DWORD holds 0 to 4294967295, not {self.data!r}.")
        elif self.type == REG_QWORD:
            if not isinstance(self.data, int) or not 0 <= self.data < 1 << 64:
                raise InvalidInput(f"A QWORD holds 0 to 2**64-1, not {self.data!r}.")
        elif self.type in (REG_SZ, REG_EXPAND_SZ):
            if not isinstance(self.data, str):
                raise InvalidInput(f"A {TYPE_NAMES[self.type]} holds text, not {self.data!r}.")
        elif self.type == REG_MULTI_SZ:
            if not isinstance(self.data, tuple) or not all(isinstance(s, str) for s in self.data):
                raise InvalidInput("A REG_MULTI_SZ holds a list of strings.")
        elif not isinstance(self.data, bytes):
            raise InvalidInput(f"A {self.type_name} value holds bytes, not {self.data!r}.")

    @classmethod
    def dword(cls, number: int) -> RegValue:
        return cls(REG_DWORD, int(number))

    @classmethod
    def string(cls, text: str) -> RegValue:
        return cls(REG_SZ, text)

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, f"REG_TYPE_{self.type}")

    def to_bytes(self) -> bytes:
        """The data as the registry stores it (what ``hex(...)`` in a .reg file spells)."""
        if self.type == REG_DWORD:
            return struct.pack("<I", self.data)
        if self.type == REG_DWORD_BIG_ENDIAN:
            return struct.pack(">I", self.data)
        if self.type == REG_QWORD:
            return struct.pack("<Q", self.data)
        if self.type in (REG_SZ, REG_EXPAND_SZ):
            assert isinstance(self.data, str)
            return (self.data + "\0").encode("utf-16-le")
        if self.type == REG_MULTI_SZ:
            assert isinstance(self.data, tuple)
            return "".join(s + "\0" for s in self.data).encode("utf-16-le") + b"\0\0"
        assert isinstance(self.data, bytes)
        return self.data

    @classmethod
    def from_bytes(cls, value_type: int, raw: bytes) -> RegValue:
        """The inverse of :meth:`to_bytes` (lenient about missing terminators)."""
        if value_type in (REG_DWORD, REG_DWORD_BIG_ENDIAN) and len(raw) == 4:
            return cls(value_type, struct.unpack("<I" if value_type == REG_DWORD else ">I", raw)[0])
        if value_type == REG_QWORD and len(raw) == 8:
            return cls(value_type, struct.unpack("<Q", raw)[0])
        if value_type in (REG_SZ, REG_EXPAND_SZ) and len(raw) % 2 == 0:
            text = raw.decode("utf-16-le")
            return cls(value_type, text[:-1] if text.endswith("\0") else text)
        if value_type == REG_MULTI_SZ and len(raw) % 2 == 0:
            text = raw.decode("utf-16-le").rstrip("\0")
            return cls(value_type, tuple(text.split("\0")) if text else ())
        if value_type in (REG_DWORD, REG_DWORD_BIG_ENDIAN, REG_QWORD, REG_SZ, REG_EXPAND_SZ, REG_MULTI_SZ):
            raise InvalidInput(f"{len(raw)} bytes are not a valid {TYPE_NAMES[value_type]}.")
        return cls(value_type, raw)

    def display(self) -> str:
        """Short text for people: ``REG_DWORD 0x0000ffff (65535)``, ``REG_SZ "16384"``."""
        if self.type in (REG_DWORD, REG_DWORD_BIG_ENDIAN, REG_QWORD):
            assert isinstance(self.data, int)
            width = 16 if self.type == REG_QWORD else 8
            return f"{self.type_name} 0x{self.data:0{width}x} ({self.data})"
        if self.type in (REG_SZ, REG_EXPAND_SZ):
            assert isinstance(self.data, str)
            return f'{self.type_name} "{self.data}"'
        if self.type == REG_MULTI_SZ:
            assert isinstance(self.data, tuple)
            return f"{self.type_name} " + ", ".join(f'"{s}"' for s in self.data)
        assert isinstance(self.data, bytes)
        return f"{self.type_name} {self.data.hex(' ')}"

    def to_json(self) -> dict[str, Any]:
        data: Any = self.data
        if isinstance(data, bytes):
            data = data.hex()
        elif isinstance(data, tuple):
            data = list(data)
        return {"type": self.type_name, "data": data}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> RegValue:
        try:
            type_name = value["type"]
            raw = value["data"]
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"Not a registry value: {value!r}") from exc
        if type_name in TYPE_NUMBERS:
            number = TYPE_NUMBERS[type_name]
        elif isinstance(type_name, str) and type_name.startswith("REG_TYPE_"):
            number = int(type_name[len("REG_TYPE_") :])
        else:
            raise InvalidInput(f"Unknown registry type {type_name!r}.")
        if number in (REG_DWORD, REG_DWORD_BIG_ENDIAN, REG_QWORD):
            return cls(number, int(raw))
        if number in (REG_SZ, REG_EXPAND_SZ):
            return cls(number, str(raw))
        if number == REG_MULTI_SZ:
            return cls(number, tuple(str(s) for s in raw))
        return cls(number, bytes.fromhex(str(raw)))
