"""Who is connected and how: judged from the client audit the survey took
(:mod:`sambatune.remote.client_audit`), session by session.

These rules never propose weakening anything: an old or unsigned client is met by
upgrading or configuring the client, not by lowering what the server accepts. None of
them proposes an smb.conf edit; each says what to check on the client and how to
measure the difference.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from sambatune.advisor.findings import INFO, SUGGESTION, SURVEY, WARNING, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import rule
from sambatune.conf.syntax import name_key
from sambatune.remote.client_audit import AdvertisedInterface, ClientAudit
from sambatune.remote.smb_sessions import SmbSession

#: Accounts a guest session runs as: without a password there is no key to sign with.
GUEST_USERS = {"nobody", "guest", ""}
#: ``server signing`` values that make every authenticated session sign.
SIGNING_REQUIRED = {"mandatory", "required", "forced"}

MEASURE_FROM_CLIENT = (
    "Measure from that client before and after (`sambatune bench smb-client`, or a copy "
    "timed on the client), then survey again: the audit shows the session's new dialect, "
    "signing and channels from the server's side."
)
CLIENT_SOURCES = (
    "Microsoft Learn: SMB security hardening (signing and encryption)",
    "Microsoft Learn: Detect, enable and disable SMBv1, SMBv2 and SMBv3",
)
MULTICHANNEL_SOURCES = (
    "smb.conf(5): server multi channel support, interfaces",
    "Samba wiki: Server-Side Multichannel",
    "Microsoft Learn: SMB Multichannel (requirements: RSS or several NICs, same speed)",
)


def _audit(inputs: AdvisorInput) -> ClientAudit | None:
    return inputs.server.client_audit


def _who(session: SmbSession) -> str:
    return f"{session.machine or '?'} ({session.address or 'address unknown'}) as {session.user or '?'}"


def _signing(session: SmbSession) -> str:
    if not session.signing:
        return "none"
    if session.signing_degree == "partial":
        return f"{session.signing} on the session setup only (partial)"
    return session.signing


def _session_evidence(sessions: list[SmbSession], what: str) -> tuple[Evidence, ...]:
    shown = [
        Evidence(
            SURVEY,
            f"{_who(s)}: {s.dialect or 'dialect unknown'}, signing {_signing(s)}, "
            f"encryption {s.encryption or 'none'}"
            + (f", {s.channels} channel(s)" if s.channels is not None else ""),
        )
        for s in sessions[:5]
    ]
    if len(sessions) > 5:
        shown.append(Evidence(SURVEY, f"and {len(sessions) - 5} more session(s) {what}"))
    return tuple(shown)


@rule("clients-smb1", "clients")
def smb1_clients(inputs: AdvisorInput) -> Iterator[Finding]:
    audit = _audit(inputs)
    old = [s for s in audit.sessions if s.smb1] if audit else []
    if not old:
        return
    yield Finding(
        id="clients-smb1",
        severity=WARNING,
        title=f"{len(old)} session(s) still use SMB1",
        subject="clients",
        evidence=_session_evidence(old, "on SMB1"),
        change=None,
        expected_effect=(
            "Once these clients speak SMB2 or later they get large requests, credits and "
            "compounding (more per round trip), leases, and signing that does not cost "
            "SMB1's MD5; the server can then stop accepting SMB1 altogether."
        ),
        effect_source="Protocol design; not measured here. " + MEASURE_FROM_CLIENT,
        risk=(
            "Nothing changes on the server. Upgrading or reconfiguring the client is the "
            "fix; a device that can only speak SMB1 should be replaced or isolated, not "
            "kept by keeping SMB1 open for everyone."
        ),
        applies_to_version="Samba 4.11 and later refuse SMB1 unless `server min protocol` "
        "allows it; this server allows it, and these clients use it.",
        parameters=("server min protocol",),
        sources=(*inputs.sources("server min protocol"), *CLIENT_SOURCES),
    )


@rule("clients-unsigned", "clients")
def unsigned_clients(inputs: AdvisorInput) -> Iterator[Finding]:
    """Authenticated sessions that neither sign nor encrypt. Guest sessions cannot sign
    (no password, no key) and are left out."""
    audit = _audit(inputs)
    unsigned = (
        [s for s in audit.sessions if s.unsigned and s.user.lower() not in GUEST_USERS] if audit else []
    )
    if not audit or not unsigned:
        return
    required = name_key(audit.server_signing) in SIGNING_REQUIRED
    yield Finding(
        id="clients-unsigned",
        severity=WARNING if required else SUGGESTION,
        title=f"{len(unsigned)} signed-in session(s) are neither signed nor encrypted",
        subject="clients",
        evidence=(
            *_session_evidence(unsigned, "unsigned"),
            Evidence(
                SURVEY,
                f"server signing = {audit.server_signing or 'unknown'} (effective)"
                + (": the server requires signing, yet these sessions are not signed" if required else ""),
            ),
        ),
        change=None,
        expected_effect=(
            "With signing on (on the client, or by requiring it on the server) nobody on the "
            "path can alter these sessions' requests. On SMB 3.1.1 the AES-GMAC signature "
            "costs little; on SMB2 and 3.0 (HMAC-SHA256, AES-CMAC) it costs more CPU."
        ),
        effect_source="Not measured here: the cost depends on the dialect and the CPUs. "
        + MEASURE_FROM_CLIENT,
        risk=(
            "Signing only adds protection. Clients with a slow CPU on SMB2 or 3.0 may lose "
            "some throughput: measure them. Turning signing off anywhere is not the answer."
        ),
        applies_to_version="smbstatus prints whether a session signs, not whether it was "
        "required: the server's side is `server signing`, the client's its own policy.",
        parameters=("server signing",),
        sources=(*inputs.sources("server signing"), *CLIENT_SOURCES),
    )


@rule("clients-smb2", "clients")
def smb2_clients(inputs: AdvisorInput) -> Iterator[Finding]:
    audit = _audit(inputs)
    older = [s for s in audit.sessions if s.smb2] if audit else []
    if not older:
        return
    yield Finding(
        id="clients-smb2",
        severity=INFO,
        title=f"{len(older)} session(s) use SMB 2.x rather than SMB3",
        subject="clients",
        evidence=_session_evidence(older, "on SMB 2.x"),
        change=None,
        expected_effect=(
            "On SMB3 (3.1.1 where possible) these clients could use multichannel, the cheap "
            "AES-GMAC signing, encryption where a share needs it and pre-authentication "
            "integrity; SMB 2.x has none of them."
        ),
        effect_source="Protocol features; not measured here. " + MEASURE_FROM_CLIENT,
        risk=(
            "Nothing changes on the server. A client that stays on 2.x by its own policy "
            "(an old OS, a NAS, a Linux mount with `vers=2.1`) is changed on that client."
        ),
        parameters=("server max protocol",),
        sources=(*inputs.sources("server max protocol"), *CLIENT_SOURCES),
    )


@rule("clients-single-channel", "clients")
def single_channel(inputs: AdvisorInput) -> Iterator[Finding]:
    """One TCP connection per session although multichannel is on and several interfaces
    (or one with RSS) are advertised."""
    audit = _audit(inputs)
    if not audit or audit.multichannel is not True or not audit.several_interfaces:
        return
    single = [s for s in audit.sessions if s.channels == 1 and not s.smb1 and not s.smb2]
    if not single:
        return
    interfaces = ", ".join(_describe(i) for i in audit.interfaces)
    reasons = [
        "the client does not do multichannel (Windows 8 and later and macOS 11 and later "
        "do; the Linux kernel client only with the `multichannel` mount option)",
        "the client has a single NIC without RSS, so it opens one connection (Windows: "
        "`Get-SmbClientNetworkInterface` shows RSS Capable; RSS switched off in the "
        "adapter's settings is a common cause)",
        "the advertised interfaces differ in speed: Windows only uses the fastest ones",
    ]
    off_subnet = [s for s in single if _reachable(s, audit.interfaces) <= 1]
    if off_subnet:
        reasons.insert(
            0,
            f"{', '.join(sorted({s.machine for s in off_subnet}))} share(s) a subnet with "
            "only one of the advertised interfaces, so the others are not reachable "
            "directly",
        )
    yield Finding(
        id="clients-single-channel",
        severity=INFO,
        title=f"{len(single)} SMB3 session(s) use one channel while multichannel is on",
        subject="clients",
        evidence=(
            *_session_evidence(single, "with one channel"),
            Evidence(SURVEY, f"server multi channel support = Yes; advertised: {interfaces}"),
        ),
        change=None,
        expected_effect=(
            "A multichannel client spreads a transfer over several connections (several "
            "NICs, or the queues of one RSS NIC), so a large copy can grow towards the sum "
            "of the links. Likely reasons for one channel: " + "; ".join(reasons) + "."
        ),
        effect_source=(
            "Not measured here (loopback is one link). Measure a large copy from that client "
            "(`sambatune bench smb-client`), fix the client's side, check the channels "
            "(Windows: `Get-SmbMultichannelConnection`; or survey again: the audit counts "
            "the server's connections per session), then measure again."
        ),
        risk="Nothing changes on the server; the client's NIC or mount settings are what to look at.",
        applies_to_version="Multichannel is stable and on by default since Samba 4.15 on Linux and FreeBSD.",
        parameters=("server multi channel support",),
        sources=(*inputs.sources("server multi channel support"), *MULTICHANNEL_SOURCES),
    )


def _describe(interface: AdvertisedInterface) -> str:
    speed = f"{interface.speed_mbit} Mbit/s" if interface.speed_mbit else "speed unknown"
    rss = ", RSS" if interface.capability == "RSS" else ""
    return f"{interface.name} ({speed}{rss})"


def _reachable(session: SmbSession, interfaces: list[AdvertisedInterface]) -> int:
    """How many advertised interfaces share a subnet with the client's address; the
    number of interfaces when the address or the prefixes are unknown (no claim)."""
    parts = session.address.split(":")
    try:
        client = ipaddress.ip_address(":".join(parts[1:-1]) if len(parts) >= 3 else session.address)
    except ValueError:
        return len(interfaces)
    reachable = 0
    for interface in interfaces:
        for address in interface.addresses:
            if "/" not in address:
                return len(interfaces)
            try:
                network = ipaddress.ip_interface(address).network
            except ValueError:
                continue
            if client.version == network.version and client in network:
                reachable += 1
                break
    return reachable
