"""Which SMB dialects a server will speak, from its protocol limits and its version."""

from __future__ import annotations

import re

from sambatune.advisor.config_view import GLOBAL
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.conf.syntax import name_key

#: The dialect names smb.conf accepts that belong to SMB1 (oldest first).
SMB1_DIALECTS = ("core", "coreplus", "lanman1", "lanman2", "nt1")
#: 4.11 raised the default ``server min protocol`` to SMB2_02, switching SMB1 off.
SMB1_OFF_BY_DEFAULT: Version = (4, 11, 0)


def is_smb1_dialect(value: str | None) -> bool:
    # Samba matches enum values ignoring case and blanks: "NT 1" is NT1.
    return name_key(value or "") in SMB1_DIALECTS


def min_protocol(inputs: AdvisorInput) -> str | None:
    found = inputs.config.first_value(GLOBAL, "server min protocol", "min protocol")
    return found[1] if found else None


def max_protocol(inputs: AdvisorInput) -> str | None:
    found = inputs.config.first_value(GLOBAL, "server max protocol", "max protocol", "protocol")
    return found[1] if found else None


def smb1_enabled(inputs: AdvisorInput) -> bool:
    """True when clients can still connect with SMB1."""
    lowest = min_protocol(inputs)
    if lowest:
        return is_smb1_dialect(lowest)
    return not inputs.at_least(SMB1_OFF_BY_DEFAULT)


def smb1_reason(inputs: AdvisorInput) -> str:
    """One sentence on why SMB1 is on or off for this server."""
    lowest = min_protocol(inputs)
    version = inputs.version_label()
    if lowest and is_smb1_dialect(lowest):
        return f"{version} accepts SMB1 here because server min protocol = {lowest}."
    if lowest:
        return (
            f"{version} refuses SMB1 here (server min protocol = {lowest}); SMB1 has been "
            "off by default since 4.11."
        )
    if inputs.at_least(SMB1_OFF_BY_DEFAULT):
        return f"{version} refuses SMB1 by default (it has since 4.11)."
    return f"{version} predates 4.11, so it still accepts SMB1 by default."


_REQUIRED = {"required", "mandatory", "force", "forced", "enforced"}
_DESIRED = {"desired"}
#: The parameter was called `smb encrypt` before 4.14.
ENCRYPTION_NAMES = ("server smb encrypt", "smb encrypt")


def encryption(inputs: AdvisorInput, section: str) -> tuple[str, str, str] | None:
    """("required"|"desired", parameter, value) when ``section`` encrypts; None otherwise."""
    found = inputs.config.first_value(section, *ENCRYPTION_NAMES)
    if found is None:
        return None
    word = found[1].strip().lower()
    if word in _REQUIRED:
        return "required", found[0], found[1]
    if word in _DESIRED:
        return "desired", found[0], found[1]
    return None


def required_in_global(inputs: AdvisorInput) -> tuple[str, str] | None:
    """(parameter, value) when [global]'s own line requires encryption everywhere."""
    encrypted = encryption(inputs, GLOBAL)
    if encrypted is None or encrypted[0] != "required":
        return None
    if inputs.config.explicit_value(GLOBAL, encrypted[1]) is None:
        return None
    return encrypted[1], encrypted[2]


def is_domain_controller(inputs: AdvisorInput) -> bool:
    role = (inputs.config.global_value("server role") or "").lower()
    return "domain controller" in role and "classic" not in role


def signing(inputs: AdvisorInput) -> tuple[str, str] | None:
    """("required"|"desired", value) when the server insists on or prefers signing."""
    value = inputs.config.global_value("server signing")
    if value is None:
        return None
    word = value.strip().lower()
    if word in _REQUIRED:
        return "required", value
    if word in _DESIRED:
        return "desired", value
    return None


#: ``server smb3 signing algorithms`` and ``server smb3 encryption algorithms`` (and the
#: AES-GMAC signing they allow) arrived in 4.15 (WHATSNEW 4.15.0).
SMB3_ALGORITHMS_ADDED: Version = (4, 15, 0)
SIGNING_ALGORITHMS = "server smb3 signing algorithms"
ENCRYPTION_ALGORITHMS = "server smb3 encryption algorithms"
GMAC = "AES-128-GMAC"
CMAC = "AES-128-CMAC"
HMAC_SHA256 = "HMAC-SHA256"
#: lib/param/loadparm.h DEFAULT_SMB3_SIGNING_ALGORITHMS / _ENCRYPTION_ALGORITHMS (4.15-4.17).
DEFAULT_SIGNING_ALGORITHMS = (GMAC, CMAC, HMAC_SHA256)
DEFAULT_ENCRYPTION_ALGORITHMS = ("AES-128-GCM", "AES-128-CCM", "AES-256-GCM", "AES-256-CCM")
#: How smbd's names are spelled (it matches them ignoring case: lp_set_enum_parm).
_ALGORITHM_SPELLING = {
    name.upper(): name for name in DEFAULT_SIGNING_ALGORITHMS + DEFAULT_ENCRYPTION_ALGORITHMS
}
# str_list_make_v3 splits on blanks and commas (and ; in older lists); quotes are rare here.
_LIST_SEPARATORS = re.compile(r"[\s,;]+")


def algorithm_list(value: str | None, default: tuple[str, ...]) -> list[str]:
    """An smb.conf algorithm list as smbd resolves it (lib/param/loadparm.c, P_LIST):
    a value whose first item starts with + or - edits the default (+ appends what is not
    there yet, - removes); any other value replaces the default. Names come back spelled
    as smbd prints them; None (not set) is the default."""
    if value is None:
        return list(default)
    items = [item for item in _LIST_SEPARATORS.split(value.strip()) if item]
    if not items or items[0][:1] not in "+-" or len(items[0]) < 2:
        return [_ALGORITHM_SPELLING.get(item.upper(), item) for item in items]
    result = list(default)
    for item in items:
        name = _ALGORITHM_SPELLING.get(item[1:].upper(), item[1:])
        if item[0] == "+" and name.upper() not in (r.upper() for r in result):
            result.append(name)
        elif item[0] == "-":
            result = [r for r in result if r.upper() != name.upper()]
    return result


def signing_algorithms(inputs: AdvisorInput) -> list[str]:
    return algorithm_list(inputs.config.global_value(SIGNING_ALGORITHMS), DEFAULT_SIGNING_ALGORITHMS)


def encryption_algorithms(inputs: AdvisorInput) -> list[str]:
    return algorithm_list(inputs.config.global_value(ENCRYPTION_ALGORITHMS), DEFAULT_ENCRYPTION_ALGORITHMS)


def list_text(items: list[str]) -> str:
    """A list written the way testparm prints it."""
    return ", ".join(items)


def measured_cost(inputs: AdvisorInput, mode: str, otherwise: str) -> str:
    """The effect source of a signing or encryption finding: this server's own comparison
    of ``mode`` sessions with plain ones (``bench smb-client --security``) when one ran
    with this smb.conf, before ``otherwise`` (what is known without it)."""
    costs = inputs.measurements.security_cost(mode)
    if not costs:
        return otherwise
    return (
        "Measured on this server: "
        + "; ".join(c.sentence() for c in costs)
        + f" ({costs[0].source}; the client's own CPU work is in these figures too). "
        + otherwise
    )
