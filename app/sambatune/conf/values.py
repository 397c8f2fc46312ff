"""What Samba makes of a parameter's text, type by type, and how testparm prints it.

Each function mirrors the C code Samba 4.x runs when it stores a value
(``set_variable_helper`` in lib/param/loadparm.c and the string helpers it calls),
including its leniency: integers are read with ``strtol`` (``12abc`` is 12,
``abc`` is 0), octal numbers with ``sscanf("%o")``, sizes accept K/M/G/T/P.
Where Samba refuses a value (it then refuses the whole file), the parser returns
None so lint can say so before testparm does.
"""

from __future__ import annotations

import re

from sambatune.conf.syntax import name_key

INT_MAX = 2**31 - 1
_TRUE = frozenset({"yes", "true", "on", "1"})
_FALSE = frozenset({"no", "false", "off", "0"})
# strtol/strtoull: optional blanks and sign, then digits in the base.
_C_BLANKS = " \t\n\r\x0b\x0c"
_SIZE_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_DECIMAL = re.compile(r"[0-9]+")
_OCTAL = re.compile(r"[0-7]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
LIST_SEPARATORS = " \t,;\n\r"
#: ``bytes`` parameters whose number Samba counts in a larger unit, so a K/M/G suffix
#: multiplies that unit: lib/util/debug.c compares the log with max log size * 1024,
#: source3/smbd/dfree.c takes max disk size * 1024 * 1024.
SIZE_UNITS = {"max log size": "KiB", "max disk size": "MiB"}


def parse_boolean(text: str) -> bool | None:
    """yes/no, true/false, on/off, 1/0 in any case and with any blanks; None otherwise."""
    key = text.lower()
    if key not in _TRUE and key not in _FALSE:
        key = name_key(text)  # the slower, exact rule: blanks anywhere are ignored too
    if key in _TRUE:
        return True
    if key in _FALSE:
        return False
    return None


def boolean_text(value: bool) -> str:
    return "Yes" if value else "No"


def _wrap_int(value: int) -> int:
    """C's conversion of a wider integer to a 32-bit int (two's complement)."""
    value &= 0xFFFFFFFF
    return value - 2**32 if value > INT_MAX else value


def _strtol_prefix(text: str, base: int) -> tuple[int | None, str]:
    """strtol's reading of ``text``: the number (None when no digits) and what follows."""
    rest = text.lstrip(_C_BLANKS)
    sign = 1
    if rest[:1] in ("+", "-"):
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if base == 0:
        if rest[:2].lower() == "0x" and _HEX.match(rest, 2):
            base, rest = 16, rest[2:]
        elif rest[:1] == "0":
            base = 8
        else:
            base = 10
    elif base == 16 and rest[:2].lower() == "0x" and _HEX.match(rest, 2):
        rest = rest[2:]
    pattern = {8: _OCTAL, 10: _DECIMAL, 16: _HEX}[base]
    found = pattern.match(rest)
    if not found:
        return None, text
    return sign * int(found.group(), base), rest[found.end() :]


def parse_integer(text: str) -> int:
    """Samba's ``lp_int``: strtol with base 0 (0x hex, leading 0 octal), 32-bit; "" is -1."""
    if not text:
        return -1
    number, _ = _strtol_prefix(text, 0)
    if number is None:
        return 0
    if not -(2**63) <= number < 2**63:  # strtol saturates at LONG_MIN/LONG_MAX
        number = 2**63 - 1 if number > 0 else -(2**63)
    return _wrap_int(number)


def integer_is_clean(text: str) -> bool:
    """Does Samba read all of ``text`` as a number (no ignored tail, not empty)?"""
    if not text:
        return False
    number, rest = _strtol_prefix(text, 0)
    return number is not None and not rest.strip(_C_BLANKS)


def parse_octal(text: str) -> int | None:
    """``sscanf("%o")``: blanks, optional sign, octal digits; the tail is ignored. None: no digits."""
    number, _ = _strtol_prefix(text, 8)
    if number is None:
        return None
    return _wrap_int(number)


def octal_text(value: int) -> str:
    """testparm's form: ``-1`` stays, anything else is ``0%03o`` of the unsigned 32-bit value."""
    if value == -1:
        return "-1"
    return "0" + format(value & 0xFFFFFFFF, "03o")


def parse_bytes(text: str) -> int | None:
    """A size with an optional K/M/G/T/P suffix (1024-based) up to INT_MAX; None if refused."""
    if not text:
        return None
    rest = text.lstrip(_C_BLANKS)
    if rest[:1] == "+":
        rest = rest[1:]
    found = _DECIMAL.match(rest)
    if not found or "-" in text[: len(text) - len(rest) + found.end()]:
        return None
    number = int(found.group())
    if number >= 2**64:
        return None
    multiplier = _SIZE_SUFFIX.get(name_key(rest[found.end() :]))
    if multiplier is None:
        return None
    number = (number * multiplier) % 2**64
    return number if number <= INT_MAX else None


def parse_decimal(text: str) -> int:
    """C's ``atoi``: blanks, a sign, decimal digits, the rest ignored; 0 when no digits.

    What lib/util/util_net.c set_socket_options() reads after ``SO_RCVBUF=`` (so ``64K``
    is 64, not 65536).
    """
    number, _ = _strtol_prefix(text, 10)
    if number is None:
        return 0
    if not -(2**63) <= number < 2**63:
        number = 2**63 - 1 if number > 0 else -(2**63)
    return _wrap_int(number)


def split_name_array(text: str) -> list[str]:
    """A ``/``-separated pattern list (hide files, veto files, veto oplock files).

    source3/lib/util.c set_namearray(): every non-empty piece between slashes is a
    pattern, a blank one included; repeated slashes are skipped.
    """
    return [piece for piece in text.split("/") if piece]


def split_list(text: str) -> list[str]:
    """Samba's ``str_list_make_v3``: split on blanks, commas and semicolons; quotes group.

    Double quotes toggle quoting and are dropped, so ``a"b c"d`` is one item ``ab cd``.
    """
    items: list[str] = []
    position = 0
    length = len(text)
    separators = LIST_SEPARATORS
    while True:
        while position < length and text[position] in separators:
            position += 1
        if position >= length:
            return items
        quoted = False
        token: list[str] = []
        while position < length and (quoted or text[position] not in separators):
            char = text[position]
            if char == '"':
                quoted = not quoted
            else:
                token.append(char)
            position += 1
        items.append("".join(token))


def apply_list(current: list[str] | None, text: str) -> list[str] | None:
    """A ``list``-type assignment: a new list, or ``+item``/``-item`` edits of the current one.

    Returns None when Samba refuses the value (a plain item after a ``+``/``-`` one).
    """
    new = split_list(text)
    if not new:
        return current
    result = list(current) if current is not None else None
    for position, item in enumerate(new):
        if result is not None and item[:1] == "+" and len(item) > 1:
            if item[1:] not in result:
                result.append(item[1:])
        elif result is not None and item[:1] == "-" and len(item) > 1:
            result = [entry for entry in result if entry != item[1:]]
        else:
            if position != 0:
                return None
            return new
    return result


def list_text(items: list[str] | None, separator: str) -> str:
    """testparm's form of a list: items joined, an item with a space in double quotes."""
    if not items:
        return ""
    return separator.join(f'"{item}"' if " " in item else item for item in items)
