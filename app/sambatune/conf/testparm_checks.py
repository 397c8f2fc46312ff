"""The checks testparm makes after Samba loaded the file, which make it end with an error.

smbd itself starts with such a file, and testparm still prints it, but testparm exits
with status 1, and SambaTune never applies a file testparm ends with an error for: so
lint reports each as an error at the line it is about. The checks follow
``do_global_parameter_checks`` and ``do_idmap_check`` in source3/utils/testparm.c
(Samba 4.x). Left out: the ones that look at the server's disks (the state and cache
directories exist, the passwd program can be run), which a file read on another
computer cannot answer.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sambatune.conf.effective import GLOBAL, EffectiveConfig, Origin
from sambatune.conf.syntax import name_key
from sambatune.conf.values import parse_boolean


class TestparmCheck(NamedTuple):
    origin: Origin
    parameter: str | None
    code: str
    message: str


#: testparm does not refuse to load such a file: it prints it, then exits with status 1.
ENDS_WITH_ERROR = (
    "; testparm prints the file but ends with an error (exit 1), so SambaTune will not apply it."
)

# The default idmap backends testparm allows on a domain member (testparm.c).
_DEFAULT_BACKENDS = ("tdb", "tdb2", "ldap", "autorid", "hash")
_IDMAP_BACKEND_KEY = re.compile(r"idmapconfig(.+):backend")
_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


class _Reader:
    def __init__(self, view: EffectiveConfig) -> None:
        self.view = view

    def value(self, name: str) -> str:
        return self.view.resolve(GLOBAL, name).value or ""

    def flag(self, name: str) -> bool:
        return parse_boolean(self.value(name)) is True

    def origin(self, *names: str) -> Origin:
        """Where the first of ``names`` the file sets is set; else [global]'s header."""
        section = self.view.global_section
        for name in names:
            setting = section.settings.get(name) or section.parametric.get(name)
            if setting is not None:
                return setting.origin
        if section.headers:
            return section.headers[0]
        return Origin(self.view.documents[0].path or "<document>" if self.view.documents else "<document>", 1)

    def security(self) -> str:
        """lp_security(): "user", "domain" or "ads"; "auto" follows the server role."""
        security = name_key(self.value("security"))
        if security in ("user", "domain", "ads"):
            return security
        return "ads" if self.role() == "member" else "user"

    def role(self) -> str:
        """lp_server_role() as "standalone", "member", "classic-dc" or "ad-dc"."""
        role = name_key(self.value("server role"))
        if role in ("activedirectorydomaincontroller", "domaincontroller", "dc"):
            return "ad-dc"
        if role in ("memberserver", "member"):
            return "member"
        if role in (
            "classicprimarydomaincontroller",
            "classicbackupdomaincontroller",
            "ipaprimarydomaincontroller",
        ):
            return "classic-dc"
        if role in ("standaloneserver", "standalone"):
            return "standalone"
        security = name_key(self.value("security"))
        if security in ("ads", "domain"):
            return "member"
        return "classic-dc" if self.flag("domain logons") else "standalone"

    def parametric(self) -> dict[str, tuple[str, Origin]]:
        section = self.view.global_section
        found = {
            name_key(name): (setting.value, setting.origin) for name, setting in section.parametric.items()
        }
        for name, forced in section.forced.items():
            if ":" in name:
                found[name_key(name)] = (forced.value, forced.origin)
        return found


def testparm_checks(view: EffectiveConfig) -> list[TestparmCheck]:
    """What testparm would end with an error for (empty: nothing)."""
    read = _Reader(view)
    found: list[TestparmCheck] = []

    def refuse(code: str, message: str, *names: str) -> None:
        origin = read.origin(*names)
        found.append(TestparmCheck(origin, names[0] if names else None, code, message + ENDS_WITH_ERROR))

    security = read.security()
    if security in ("domain", "ads") and not read.flag("encrypt passwords"):
        refuse(
            "testparm-encrypt-passwords",
            f"security = {security} needs 'encrypt passwords = yes'",
            "encrypt passwords",
            "security",
        )
    if security == "ads":
        if not read.value("workgroup"):
            refuse(
                "testparm-ads-workgroup",
                "security = ADS needs a workgroup",
                "security",
            )
        if not read.value("realm"):
            refuse(
                "testparm-ads-realm",
                "security = ADS needs 'realm' (the AD domain's DNS name)",
                "security",
                "server role",
            )
    if read.flag("wins support") and read.value("wins server").strip():
        refuse(
            "testparm-wins",
            "'wins support = yes' and 'wins server' cannot both be set (nmbd stops)",
            "wins server",
            "wins support",
        )
    if security == "user" and read.flag("unix password sync") and not read.flag("pam password change"):
        program = read.value("passwd program").strip()
        if not program:
            refuse(
                "testparm-passwd-program",
                "'unix password sync' is on but no 'passwd program' is set",
                "unix password sync",
            )
        elif "%u" not in program:
            refuse(
                "testparm-passwd-program-user",
                f"'passwd program' ({program}) needs %u for the user name",
                "passwd program",
            )
        if read.flag("encrypt passwords") and "%o" in read.value("passwd chat"):
            refuse(
                "testparm-passwd-chat",
                "'passwd chat' uses %o, the old password in plain text, which encrypted passwords never give",
                "passwd chat",
            )
    if len(read.value("winbind separator")) != 1:
        refuse(
            "testparm-winbind-separator",
            "'winbind separator' must be a single character",
            "winbind separator",
        )
    if read.role() != "standalone":
        found += _idmap_checks(read)
    return found


def _idmap_checks(read: _Reader) -> list[TestparmCheck]:
    """A domain member's idmap: an allowed default backend, ranges that do not overlap."""
    found: list[TestparmCheck] = []
    options = read.parametric()
    # Samba always sets the default domain's backend (lp_load_ex), written or not.
    options.setdefault(
        "idmapconfig*:backend", (read.value("idmap backend") or "tdb", read.origin("idmap backend"))
    )
    default_backend = options.get("idmapconfig*:backend", (read.value("idmap backend"), None))
    backend_origin = default_backend[1] or read.origin("idmap backend")
    if name_key(default_backend[0]) not in _DEFAULT_BACKENDS:
        found.append(
            TestparmCheck(
                backend_origin,
                "idmap config * : backend",
                "testparm-idmap-default-backend",
                f"'{default_backend[0]}' cannot be the default idmap "
                "backend (idmap config * : backend)" + ENDS_WITH_ERROR,
            )
        )
    domains: list[tuple[str, str, int, int, Origin]] = []
    for key, (backend, origin) in options.items():
        match = _IDMAP_BACKEND_KEY.fullmatch(key)
        if match is None:
            continue
        domain = match.group(1)
        low = high = 0
        if read.role() != "ad-dc":
            text, where = options.get(f"idmapconfig{domain}:range", ("", origin))
            parsed = _RANGE.match(text)
            if parsed is None:
                continue  # testparm reports an invalid range but does not refuse for it
            low, high, origin = int(parsed.group(1)), int(parsed.group(2)), where
        domains.append((domain.upper(), name_key(backend), low, high, origin))
    for index, (domain, backend, low, high, origin) in enumerate(domains):
        for other, other_backend, other_low, other_high, _ in domains[:index]:
            if not (
                other_low <= low <= other_high or other_low <= high <= other_high or low <= other_low <= high
            ):
                continue
            if backend == other_backend and backend in ("ad", "nss"):
                continue
            found.append(
                TestparmCheck(
                    origin,
                    None,
                    "testparm-idmap-overlap",
                    f"The idmap range of {domain} ({backend}) overlaps "
                    f"the range of {other} ({other_backend})" + ENDS_WITH_ERROR,
                )
            )
            return found
    return found
