"""SMB1-only parameters: noise when SMB1 is off, real knobs when it is on."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import as_bytes
from sambatune.advisor.findings import INFO, SUGGESTION, WARNING, ConfigChange, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.protocols import smb1_enabled, smb1_reason
from sambatune.advisor.rule import rule

#: SMB1-only, but also decides whether `wide links` works, so it is never "no effect".
_HAS_SIDE_EFFECTS = {"smb1 unix extensions", "unix extensions"}
#: The 4.x default of `max xmit`; below 2048 clients are known to misbehave.
MAX_XMIT_DEFAULT = 16644
MAX_XMIT_FLOOR = 2048


@rule("smb1-parameter-without-smb1", "smb1")
def smb1_parameter_without_smb1(inputs: AdvisorInput) -> Iterator[Finding]:
    if smb1_enabled(inputs):
        return
    knowledge = inputs.knowledge
    for name in knowledge.smb1_only_names():
        if name in _HAS_SIDE_EFFECTS:
            continue
        removal = knowledge.removal(name)
        if removal is not None and inputs.at_least(removal.removed_in):
            continue  # the removed-parameter finding says more
        for section, value in inputs.config.set_in(name):
            yield Finding(
                id="smb1-parameter-without-smb1",
                severity=INFO,
                title=f"{name} has no effect: this server does not speak SMB1",
                subject=section,
                evidence=(Evidence.setting(section, name, value), Evidence("version", smb1_reason(inputs))),
                change=ConfigChange(section, name, "unset"),
                expected_effect=(
                    "No speed change: the parameter only shapes SMB1 sessions, and SMB2/3 "
                    "clients never see it. Removing it keeps readers from believing it tunes "
                    "something."
                ),
                effect_source="Follows from the protocol: SMB2/3 negotiate their own sizes.",
                risk="None while SMB1 stays off.",
                applies_to_version=smb1_reason(inputs),
                parameters=(name,),
                sources=inputs.sources(name, "server min protocol"),
            )


@rule("smb1-max-xmit-small", "smb1")
def smb1_max_xmit_small(inputs: AdvisorInput) -> Iterator[Finding]:
    if not smb1_enabled(inputs):
        return
    for section, value in inputs.config.set_in("max xmit"):
        size = as_bytes(value)
        if size is None or size >= MAX_XMIT_DEFAULT:
            continue
        yield Finding(
            id="smb1-max-xmit-small",
            severity=WARNING if size < MAX_XMIT_FLOOR else SUGGESTION,
            title=f"max xmit = {value} splits SMB1 requests into small pieces",
            subject=section,
            evidence=(Evidence.setting(section, "max xmit", value), Evidence("version", smb1_reason(inputs))),
            change=ConfigChange(section, "max xmit", "unset"),
            expected_effect=(
                f"SMB1 clients negotiate buffers of up to {MAX_XMIT_DEFAULT:,} bytes (the "
                "default) again, so each request carries more data and fewer round trips are "
                "needed."
            ),
            effect_source=(
                "Speed.txt (2000) saw trouble below 2048 bytes and called the default best for "
                "most clients; still so for SMB1. Not re-measured: measure an SMB1 client "
                "before and after."
            ),
            risk=(
                "Only a very slow client of the 1990s, which Speed.txt lowered it for, could "
                "prefer small buffers."
            ),
            applies_to_version=smb1_reason(inputs),
            parameters=("max xmit",),
            sources=inputs.sources("max xmit"),
        )
