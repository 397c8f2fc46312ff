"""Which SMB dialects a server will speak, from its protocol limits and its version."""

from __future__ import annotations

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
