"""What clients may negotiate: dialects, multichannel, signing, encryption."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool
from sambatune.advisor.findings import (
    INFO,
    PROBLEM,
    SUGGESTION,
    WARNING,
    ConfigChange,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.advisor.protocols import (
    ENCRYPTION_NAMES,
    SMB1_OFF_BY_DEFAULT,
    encryption,
    is_domain_controller,
    is_smb1_dialect,
    max_protocol,
    measured_cost,
    required_in_global,
    signing,
    smb1_enabled,
    smb1_reason,
)
from sambatune.advisor.rule import back_to_default, rule
from sambatune.conf.syntax import name_key

#: Multichannel arrived (experimental) in 4.4 and became stable and on by default in 4.15.
MULTICHANNEL_ADDED: Version = (4, 4, 0)
MULTICHANNEL_BY_DEFAULT: Version = (4, 15, 0)
#: Where 4.15's default is on; elsewhere it stays off.
MULTICHANNEL_SYSTEMS = {"linux", "freebsd"}
#: A NIC this fast usually has RSS, which multichannel uses even on a single link.
RSS_CLASS_MBIT = 10_000


@rule("smb1-enabled", "protocol")
def smb1_on(inputs: AdvisorInput) -> Iterator[Finding]:
    if not smb1_enabled(inputs):
        return
    found = inputs.config.first_value(GLOBAL, "server min protocol", "min protocol")
    explicit = [
        (s, v)
        for name in ("server min protocol", "min protocol")
        for s, v in inputs.config.set_in(name)
        if s == GLOBAL
    ]
    if inputs.at_least(SMB1_OFF_BY_DEFAULT):
        if not explicit:
            return
        evidence = Evidence.setting(GLOBAL, found[0] if found else "server min protocol", explicit[0][1])
        change = ConfigChange(GLOBAL, found[0] if found else "server min protocol", "unset")
    else:
        evidence = Evidence("version", smb1_reason(inputs))
        change = ConfigChange(GLOBAL, "server min protocol", "set", "SMB2_02")
    yield Finding(
        id="smb1-enabled",
        severity=SUGGESTION,
        title="The server still accepts SMB1",
        subject=GLOBAL,
        evidence=(evidence,),
        change=change,
        expected_effect=(
            "Every client connects with SMB2 or later, whose large requests, credits and "
            "compounded operations move more per round trip than SMB1; the SMB1-only "
            "parameters stop mattering."
        ),
        effect_source="Protocol design; not measured here: measure an old client before and "
        "after if one remains.",
        risk=(
            "Devices that speak only SMB1 (old scanners, Windows XP, some backup appliances) "
            "can no longer connect. `smbstatus` shows the protocol of each session: check "
            "that none uses NT1 first."
        ),
        applies_to_version=smb1_reason(inputs),
        parameters=("server min protocol",),
        sources=inputs.sources("server min protocol"),
    )


@rule("protocol-max-below-smb3", "protocol")
def protocol_max_below_smb3(inputs: AdvisorInput) -> Iterator[Finding]:
    value = max_protocol(inputs)
    if value is None or name_key(value).startswith("smb3") or name_key(value) == "default":
        return
    found = inputs.config.first_value(GLOBAL, "server max protocol", "max protocol", "protocol")
    name = found[0] if found else "server max protocol"
    smb1_only = is_smb1_dialect(value)
    yield Finding(
        id="protocol-max-below-smb3",
        severity=PROBLEM if smb1_only else WARNING,
        title=f"Clients are held to {value} (server max protocol)",
        subject=GLOBAL,
        evidence=(Evidence.setting(GLOBAL, name, value),),
        change=ConfigChange(GLOBAL, name, "unset"),
        expected_effect=(
            (
                "Clients leave SMB1's small requests behind for SMB2/3, which carry up to 8 MiB "
                "per request and many requests in flight. "
                if smb1_only
                else ""
            )
            + "SMB3 brings multichannel, the cheap AES-GMAC signing and encryption when a "
            "share needs it; capping below it takes those away."
        ),
        effect_source="Protocol features; not measured here: measure before and after.",
        risk="Only a client with a broken SMB3 implementation would suffer; such clients are rare today.",
        applies_to_version="Leave it out of smb.conf: 4.15 also dropped the SMB2_22, SMB2_24 "
        "and SMB3_10 values, which now break the whole file.",
        parameters=("server max protocol",),
        sources=inputs.sources("server max protocol"),
    )


@rule("multichannel-off", "protocol")
def multichannel_off(inputs: AdvisorInput) -> Iterator[Finding]:
    name = "server multi channel support"
    if not inputs.at_least(MULTICHANNEL_ADDED):
        return
    nics = inputs.server.active_physical_nics
    several = len(nics) >= 2 or any((n.speed_mbit or 0) >= RSS_CLASS_MBIT for n in nics)
    nic_evidence = Evidence(
        "survey",
        f"{len(nics)} active network interface(s): "
        + (", ".join(f"{n.name} {n.speed_mbit or '?'} Mbit/s" for n in nics) or "none seen"),
    )
    explicit = inputs.config.explicit_value(GLOBAL, name)
    system = (inputs.server.os_system or "linux").lower()
    effect = (
        "Clients with several NICs, or one RSS-capable NIC, open several connections "
        "and spread a transfer across them, so throughput can grow with the links; on a "
        "single plain link nothing changes."
    )
    source = (
        "Samba release notes (4.4 added it, 4.15 made it stable); not measured here "
        "(loopback is one link): measure from a client with multichannel before and "
        "after."
    )
    if inputs.at_least(MULTICHANNEL_BY_DEFAULT):
        if as_bool(explicit) is not False or system not in MULTICHANNEL_SYSTEMS:
            return
        assert explicit is not None
        yield Finding(
            id="multichannel-off",
            severity=SUGGESTION if several else INFO,
            title="SMB3 multichannel is switched off",
            subject=GLOBAL,
            evidence=(Evidence.setting(GLOBAL, name, explicit), nic_evidence),
            change=ConfigChange(GLOBAL, name, "unset"),
            expected_effect=effect,
            effect_source=source,
            risk="None known on 4.15 and later.",
            applies_to_version=f"{inputs.version_label()}: stable and on by default on Linux "
            "and FreeBSD since 4.15.",
            parameters=(name,),
            sources=inputs.sources(name),
        )
        return
    if explicit is not None and as_bool(explicit) is True:
        yield Finding(
            id="multichannel-off",
            severity=WARNING,
            title="Multichannel is on, but experimental in this Samba version",
            subject=GLOBAL,
            evidence=(
                Evidence.setting(GLOBAL, name, explicit),
                Evidence("version", f"{inputs.version_label()} predates 4.15"),
            ),
            change=ConfigChange(GLOBAL, name, "unset"),
            expected_effect="Clients fall back to one connection per session, which is what "
            "this version was tested with.",
            effect_source="Samba release notes: experimental from 4.4 until 4.15.",
            risk="Clients with several links lose the extra throughput; upgrading to 4.15 or "
            "later gives it back safely.",
            applies_to_version="Experimental before 4.15.",
            parameters=(name,),
            sources=inputs.sources(name),
        )
    elif several:
        yield Finding(
            id="multichannel-off",
            severity=INFO,
            title="This Samba version cannot use the server's several links safely",
            subject=GLOBAL,
            evidence=(Evidence("version", f"{inputs.version_label()} predates 4.15"), nic_evidence),
            change=None,
            expected_effect="After an upgrade to 4.15 or later, " + effect[0].lower() + effect[1:],
            effect_source=source,
            risk="An upgrade is a bigger change than a parameter: test it first.",
            applies_to_version="Multichannel became stable, and on by default, in 4.15.",
            parameters=(name,),
            sources=inputs.sources(name),
        )


@rule("signing-required-cost", "protocol")
def signing_required_cost(inputs: AdvisorInput) -> Iterator[Finding]:
    signed = signing(inputs)
    if signed is None or is_domain_controller(inputs):
        return
    level, value = signed
    yield Finding(
        id="signing-required-cost",
        severity=INFO,
        title=f"Signing is {level} for every session (server signing = {value})",
        subject=GLOBAL,
        evidence=(Evidence.setting(GLOBAL, "server signing", value),),
        change=ConfigChange(GLOBAL, "server signing", "unset"),
        expected_effect=(
            "Sessions the client does not sign skip a checksum per packet and can use sendfile "
            "and recvfile. With SMB 3.1.1's AES-GMAC the saving is small; with older dialects "
            "it is larger. Clients that sign on their own keep signing. Where AES-128-GMAC is "
            "not first in `server smb3 signing algorithms`, putting it first (finding "
            "signing-gmac-not-first) cuts most of the cost and keeps the protection: try that "
            "before this."
        ),
        effect_source=measured_cost(
            inputs,
            "signed",
            "Not measured here: measure the cost on your share in one run (`sambatune bench "
            "smb-client --server H --share S --user U --security plain,signed`).",
        ),
        risk=(
            "Signing stops anyone on the network path from altering requests; keep it where "
            "that matters. Current Windows releases may insist on it from their side anyway."
        ),
        parameters=("server signing", "server smb3 signing algorithms"),
        sources=inputs.sources("server signing"),
    )


@rule("encryption-required-cost", "protocol")
def encryption_required_cost(inputs: AdvisorInput) -> Iterator[Finding]:
    for name in ENCRYPTION_NAMES:
        for section, value in inputs.config.set_in(name):
            encrypted = encryption(inputs, section)
            if encrypted is None or encrypted[2] != value:
                continue
            if section == GLOBAL and required_in_global(inputs) is not None:
                # encryption-required-global judges this line: it says which shares
                # would stop being encrypted, which this generic finding cannot.
                continue
            yield Finding(
                id="encryption-required-cost",
                severity=INFO,
                title=f"Traffic on {'every share' if section == GLOBAL else f'[{section}]'} is "
                f"encrypted ({name} = {value})",
                subject=section,
                evidence=(Evidence.setting(section, name, value),),
                change=back_to_default(inputs, section, name, "default"),
                expected_effect=(
                    "Reads and writes skip AES on both ends and can use sendfile/recvfile, "
                    "which frees CPU; on a CPU-bound server that shows as throughput."
                ),
                effect_source=measured_cost(
                    inputs,
                    "encrypted",
                    "SambaTune measurement on Samba 4.17.12, loopback, 2 cores: a 256 MiB read "
                    "ran at roughly 530-540 MiB/s encrypted against 640-1,100 MiB/s "
                    "unencrypted (noisy, shared machine). Measure your own in one run "
                    "(`sambatune bench smb-client ... --security plain,encrypted`).",
                ),
                risk="The data crosses the network readable by anyone on the path: keep "
                "encryption wherever the network is not trusted.",
                parameters=("server smb encrypt", "server smb3 encryption algorithms"),
                sources=inputs.sources("server smb encrypt"),
            )
