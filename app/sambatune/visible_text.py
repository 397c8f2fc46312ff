"""Text from a server, made safe to show: its control characters written out.

A server's text (a hostname, a path from a process's command line, a share name, a
client's machine name) may hold terminal escape sequences and line breaks. Shown raw
they move the cursor, retitle the window or start a line that looks like SambaTune's
own (a log record, a report line). :func:`visible` writes each control character as
text (ESC as ``^[``); :func:`one_line` also writes line breaks, for text that must stay
on its line.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 (U+009B alone starts a CSI on some terminals).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Line breaks besides \n and the C1 NEL: Unicode's line and paragraph separators.
_LINE_BREAK = re.compile(r"[\n\u2028\u2029]")


def _notation(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    if code > 0xFF:
        return f"\\u{code:04x}"
    return f"\\x{code:02x}"


def visible(text: str) -> str:
    """``text`` with its control characters (but tab and newline) shown, e.g. ESC as ``^[``."""
    return _CONTROL.sub(_notation, text)


def one_line(text: str) -> str:
    """``text`` shown on one line: control characters and line breaks written out."""
    return _LINE_BREAK.sub(_notation, visible(text))
