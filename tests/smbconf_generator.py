"""Random smb.conf files that exercise every reading rule, for checks against testparm.

The files mix case and blank variants of names (``Max  XMIT``, ``maxxmit``,
``m ax xmit``), synonyms and inverse synonyms, duplicates, backslash continuation
lines split at random places, values with ``#`` and ``;``, parameters before any
section, repeated sections, every spelling of [global], ``copy =``, tabs, CRLF,
comments and lines without ``=``. Only parameters whose setter does nothing
beyond storing its value are used, so testparm's dump shows exactly what the file
says.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

# canonical name -> spellings a file may use (synonyms included), by scope.
SHARE_PARAMETERS: dict[str, tuple[str, ...]] = {
    "read only": ("read only", "writeable", "writable", "write ok"),
    "guest ok": ("guest ok", "public"),
    "browseable": ("browseable", "browsable"),
    "oplocks": ("oplocks",),
    "level2 oplocks": ("level2 oplocks",),
    "strict sync": ("strict sync",),
    "store dos attributes": ("store dos attributes",),
    "ea support": ("ea support",),
    "follow symlinks": ("follow symlinks",),
    "hide dot files": ("hide dot files",),
    "guest only": ("guest only", "only guest"),
    "strict locking": ("strict locking",),
    "case sensitive": ("case sensitive", "casesignames"),
    "default case": ("default case",),
    "map readonly": ("map readonly",),
    "mangled names": ("mangled names",),
    "csc policy": ("csc policy",),
    "max connections": ("max connections",),
    "block size": ("block size",),
    "aio read size": ("aio read size",),
    "aio write size": ("aio write size",),
    "create mask": ("create mask", "create mode"),
    "directory mask": ("directory mask", "directory mode"),
    "force create mode": ("force create mode",),
    "force directory mode": ("force directory mode",),
    "comment": ("comment",),
    "preexec": ("preexec", "exec"),
    "force user": ("force user",),
    "force group": ("force group", "group"),
    "veto files": ("veto files",),
    "hide files": ("hide files",),
    "veto oplock files": ("veto oplock files",),
    "vfs objects": ("vfs objects", "vfs object"),
    "valid users": ("valid users",),
    "hosts allow": ("hosts allow", "allow hosts"),
    "hosts deny": ("hosts deny", "deny hosts"),
    "mangling char": ("mangling char",),
    "ntvfs handler": ("ntvfs handler",),
}
GLOBAL_PARAMETERS: dict[str, tuple[str, ...]] = {
    "workgroup": ("workgroup",),
    "netbios name": ("netbios name",),
    "server string": ("server string",),
    "socket options": ("socket options",),
    "read raw": ("read raw",),
    "write raw": ("write raw",),
    "large readwrite": ("large readwrite",),
    "deadtime": ("deadtime", "dead time"),
    "keepalive": ("keepalive",),
    "lpq cache time": ("lpq cache time",),
    "max xmit": ("max xmit",),
    "smb2 max read": ("smb2 max read",),
    "min receivefile size": ("min receivefile size",),
    "server signing": ("server signing",),
    "server min protocol": ("server min protocol", "min protocol"),
    "server max protocol": ("server max protocol", "max protocol", "protocol"),
    "server smb encrypt": ("server smb encrypt", "smb encrypt"),
    "smb1 unix extensions": ("smb1 unix extensions", "unix extensions"),
    "disable spoolss": ("disable spoolss", "enable spoolss"),
    "interfaces": ("interfaces",),
    "name resolve order": ("name resolve order",),
    "server smb3 encryption algorithms": ("server smb3 encryption algorithms",),
    "realm": ("realm",),
}
PARAMETRIC = ("acl_xattr:ignore system acls", "foo:Bar", "IdMap Config X : Backend", "fruit:model")
# Protocol values that keep min <= max whatever the draw (testparm rejects min > max).
MIN_PROTOCOLS = ("NT1", "SMB2", "SMB2_02", "default", "LANMAN1", "smb2_02", "nt1")
MAX_PROTOCOLS = ("SMB3", "SMB3_11", "default", "smb3", "SMB3_02", "SMB3_00")
WORDS = (
    "alpha",
    "beta",
    "Gamma",
    "delta",
    "x",
    "%U",
    "%S",
    "@staff",
    "a,b",
    "c;d",
    '"q r"',
    "#",
    "; off",
    "# note",
    "/srv/x",
    "tmp*",
    "/.*/",
    "é",
    "K",
    "64",
)
LIST_ITEMS = (
    "AES-128-GCM",
    "AES-128-CCM",
    "AES-256-GCM",
    "AES-256-CCM",
    "+AES-256-GCM",
    "-AES-128-CCM",
    "-AES-256-CCM",
    "+x",
)
HOSTS = ("127.", "10.0.0.0/8", "EXCEPT", "host1", "192.168.1.", "ALL", "LOCAL")
BLANK_CHOICES = (" ", " ", " ", "  ", "\t", " \t ", "")


@dataclass
class GeneratedConfig:
    text: str
    shares: list[str] = field(default_factory=list)


class ConfigGenerator:
    """Random configs from a seed; ``generate()`` gives one file's text."""

    def __init__(self, seed: int, enum_values: dict[str, tuple[str, ...]]) -> None:
        self.random = random.Random(seed)
        self.enum_values = enum_values

    # -- names ---------------------------------------------------------------------
    def spell(self, name: str) -> str:
        """A case and blank variant Samba still matches (strwicmp ignores both)."""
        r = self.random
        choice = r.random()
        if choice < 0.3:
            return name
        letters = [c.upper() if r.random() < 0.3 else c for c in name]
        text = "".join(letters)
        if choice < 0.5:
            return text.replace(" ", "")
        if choice < 0.7:
            return text.replace(" ", r.choice(("  ", "\t", " \t")))
        if choice < 0.8 and len(text) > 3:
            cut = r.randrange(1, len(text) - 1)
            return text[:cut] + " " + text[cut:]
        return text

    # -- values ----------------------------------------------------------------------
    def value(self, canonical: str, kind: str) -> str:
        r = self.random
        if canonical == "server min protocol":
            return r.choice(MIN_PROTOCOLS)
        if canonical == "server max protocol":
            return r.choice(MAX_PROTOCOLS)
        if kind in ("boolean", "boolean-rev"):
            word = r.choice(("yes", "no", "true", "false", "on", "off", "1", "0"))
            word = "".join(c.upper() if r.random() < 0.3 else c for c in word)
            if len(word) > 1 and r.random() < 0.1:
                cut = r.randrange(1, len(word))
                word = word[:cut] + " " + word[cut:]
            return word
        if kind == "enum":
            word = r.choice(self.enum_values[canonical])
            return "".join(c.upper() if r.random() < 0.3 else c for c in word)
        if kind == "integer":
            return r.choice(
                (
                    str(r.randrange(0, 100000)),
                    "0x1f",
                    "010",
                    "12abc",
                    "abc",
                    "-5",
                    " +7",
                    "99999999999",
                    "0X10",
                    "08",
                )
            )
        if kind == "bytes":
            return r.choice(
                (str(r.randrange(0, 70000)), "64k", "1M", "2 K", "1m", "007", "+5", "16384", "1G")
            )
        if kind == "octal":
            return r.choice(("0755", "755", "0644junk", "0", "0777", "-1", "0600 x", "17"))
        if kind == "char":
            return r.choice(("~", "_", "ab", "^", "x"))
        if canonical == "name resolve order":
            methods = ("lmhosts", "host", "wins", "bcast") if r.random() > 0.05 else WORDS
            return r.choice((" ", ", ", ",")).join(r.choice(methods) for _ in range(r.randint(1, 4)))
        if kind == "list":
            items = [r.choice(LIST_ITEMS) for _ in range(r.randint(1, 3))]
            if r.random() > 0.05:  # a plain item after an edit is refused: keep it rare
                edits = [item for item in items if item[0] in "+-"]
                plain = [item for item in items if item[0] not in "+-"]
                items = (plain[:1] + edits) if plain else edits
            return ", ".join(items)
        if kind == "cmdlist":
            separator = r.choice((" ", ", ", ",", ";", "  ", "\t"))
            pool = HOSTS if "host" in canonical else (*WORDS[:6], "acl_xattr", "fruit", '"a b"')
            return separator.join(r.choice(pool) for _ in range(r.randint(1, 4)))
        words = [r.choice(WORDS) for _ in range(r.randint(1, 5))]
        return "".join(word + r.choice(BLANK_CHOICES[:5]) for word in words).strip(" \t")

    # -- lines ----------------------------------------------------------------------
    def assignment(self, written: str, value: str) -> list[str]:
        """One parameter, sometimes split over backslash continuation lines."""
        r = self.random
        indent = r.choice(("", "   ", "\t", " ", "    "))
        left = r.choice((" ", "", "  ", "\t"))
        right = r.choice((" ", "", "  ", "\t"))
        trail = r.choice(("", "", "", " ", "\t"))
        line = f"{indent}{written}{left}={right}{value}{trail}"
        if r.random() < 0.15 and len(line.strip()) > 3:
            body = line.rstrip(" \t")
            start = len(body) - len(body.lstrip(" \t")) + 1
            if start < len(body):
                cut = r.randrange(start, len(body))
                joiner = r.choice(("\\", "\\ ", "\\\t", " \\"))
                return [body[:cut] + joiner, r.choice(("", "  ", "\t")) + body[cut:]]
        return [line]

    def filler(self) -> list[str]:
        r = self.random
        return [
            r.choice(
                (
                    "",
                    "# a comment",
                    "; another = comment",
                    "   # indented comment \\",
                    "just some words",
                    "\t",
                    "#",
                    ";",
                    "  ",
                )
            )
            if r.random() > 0.01
            else r.choice(("[[ not a header, Samba refuses it = no", "[]"))
        ]

    def generate(self, catalog_types: Mapping[str, str]) -> GeneratedConfig:
        r = self.random
        lines: list[str] = []
        shares: list[str] = []

        def parameters(pool: dict[str, tuple[str, ...]], count: int) -> None:
            for _ in range(count):
                canonical = r.choice(list(pool))
                written = self.spell(r.choice(pool[canonical]))
                lines.extend(self.assignment(written, self.value(canonical, catalog_types[canonical])))
                if r.random() < 0.1:
                    lines.extend(self.filler())
                if r.random() < 0.05:
                    lines.extend(self.assignment(self.spell(r.choice(PARAMETRIC)), "v" + str(r.random())[:4]))

        if r.random() < 0.5:
            parameters(GLOBAL_PARAMETERS, r.randint(1, 3))
            parameters(SHARE_PARAMETERS, r.randint(0, 2))
        for _ in range(r.randint(3, 9)):
            roll = r.random()
            if roll < 0.25:
                lines.append(
                    r.choice(
                        (
                            "[global]",
                            "[Global]",
                            "[ global ]",
                            "[GLOBALS]",
                            "[glo bal]",
                            "[global] trailing words",
                        )
                    )
                )
                parameters(GLOBAL_PARAMETERS, r.randint(1, 4))
                parameters(SHARE_PARAMETERS, r.randint(0, 3))
            elif roll < 0.4 and shares:
                again = r.choice(shares)
                lines.append(f"[{r.choice((again, again.upper(), again.capitalize()))}]")
                parameters(SHARE_PARAMETERS, r.randint(1, 4))
            else:
                name = r.choice(
                    ("data", "Media", "projects", "scratch", "pub", " spaced ", "x1", "Backup")
                ) + str(len(shares))
                lines.append(f"[{name}]")
                shares.append(name)
                lines.extend(self.assignment("path", f"/srv/{name.strip()}"))
                if r.random() < 0.2 and len(shares) > 1:
                    source = r.choice(shares[:-1])
                    if r.random() < 0.5:
                        parameters(SHARE_PARAMETERS, 1)
                    lines.extend(self.assignment("copy", r.choice((source, source.upper()))))
                parameters(SHARE_PARAMETERS, r.randint(1, 6))
                if r.random() < 0.1:
                    parameters(GLOBAL_PARAMETERS, 1)  # global-only in a share: ignored
            lines.extend(self.filler())
        newline = "\r\n" if r.random() < 0.2 else "\n"
        text = newline.join(lines)
        if r.random() < 0.8:
            text += newline
        return GeneratedConfig(text, shares)
