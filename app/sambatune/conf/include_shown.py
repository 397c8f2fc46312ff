"""An ``include =`` value as testparm prints it.

Samba substitutes the macros of an include's path when it reads the line (lp_include
calls standard_sub_basic) and keeps the result as the value. testparm runs with no
client, so the per-client macros become what an empty connection gives; measured with
testparm 4.17 on one share per macro. ``include = registry`` is not printed at all:
Samba turns it into ``registry shares = yes``.

Macros whose result depends on the moment or the server itself (%T the time, %d the
process id, %h the host name, %v the version string, $(VAR) the environment) are left
as written: a file read on another computer cannot know them.
"""

from __future__ import annotations

import re

from sambatune.conf.syntax import name_key

#: What testparm's empty connection gives for each per-client macro.
_NO_CLIENT = {
    "U": "",  # the user name the client gave
    "D": "",  # its domain
    "m": "",  # its NetBIOS name
    "M": "",  # its DNS name
    "I": "0.0.0.0",  # its address
    "i": "0.0.0.0",  # the server address it reached
    "j": "0_0_0_0",
    "J": "0_0_0_0",
    "R": "UNKNOWN",  # the protocol it negotiated
    "a": "UNKNOWN",  # its architecture
}
_MACRO = re.compile(r"%(.)", re.DOTALL)


def include_as_testparm_prints(value: str, netbios_name: str | None, winbind_separator: str) -> str | None:
    """The value testparm prints for an include written as ``value``; None: not printed."""
    if name_key(value) == "registry":
        return None

    def substitute(match: re.Match[str]) -> str:
        letter = match.group(1)
        if letter in _NO_CLIENT:
            return _NO_CLIENT[letter]
        if letter in "LN" and netbios_name is not None:
            return netbios_name.upper()
        if letter == "w":
            return winbind_separator
        return match.group(0)

    return _MACRO.sub(substitute, value)
