"""Cheap signing and encryption: which algorithms smbd prefers, and where it encrypts.

Since 4.15 two [global] lists decide what an SMB 3.1.1 client gets: smbd walks the
client's offer and keeps the algorithm that comes first in *its own* list
(source3/smbd/smb2_negprot.c, "lowest idx being preferred"), so the order in smb.conf is
the order that counts. Older dialects have no choice: SMB 2.x signs with HMAC-SHA256,
3.0 and 3.0.2 with AES-CMAC and encrypt with AES-128-CCM (same file, the defaults before
the negotiate contexts are read).

No rule here takes protection away without saying so: a reordering keeps every
algorithm and key size, and the one rule that narrows encryption says what stops being
encrypted.
"""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL
from sambatune.advisor.findings import (
    INFO,
    SUGGESTION,
    SURVEY,
    VERSION,
    ConfigChange,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.protocols import (
    CMAC,
    DEFAULT_ENCRYPTION_ALGORITHMS,
    DEFAULT_SIGNING_ALGORITHMS,
    ENCRYPTION_ALGORITHMS,
    ENCRYPTION_NAMES,
    GMAC,
    HMAC_SHA256,
    SIGNING_ALGORITHMS,
    SMB3_ALGORITHMS_ADDED,
    encryption,
    encryption_algorithms,
    list_text,
    measured_cost,
    required_in_global,
    signing,
    signing_algorithms,
)
from sambatune.advisor.rule import rule
from sambatune.remote.smb_sessions import SmbSession

NEGOTIATION_SOURCE = (
    "Samba source, source3/smbd/smb2_negprot.c (smbd keeps the first algorithm of its own list "
    "that the client offers)"
)
RELEASE_SOURCE = (
    "Samba 4.15 release notes (WHATSNEW): server smb3 signing algorithms, server smb3 encryption algorithms"
)
#: One core of SambaTune's test machine (AMD EPYC with AES-NI and PCLMULQDQ), OpenSSL
#: 3.0.19, `openssl speed -bytes 65536`: what each algorithm costs relative to the others.
CIPHER_SPEED_SOURCE = (
    "SambaTune measurement: `openssl speed -bytes 65536` (OpenSSL 3.0.19) on one core of "
    "the test machine (AMD EPYC with AES and carry-less multiply instructions)"
)
WINDOWS_GMAC_SOURCE = (
    "Microsoft Learn: What's new in SMB in Windows Server 2022 and Windows 11 (AES-128-GMAC "
    "signing); Microsoft's Windows Protocol Test Suites 4.21.9.0 release notes (2021) added "
    "tests of AES-GMAC signing in that release cycle"
)
#: Words in smbstatus' signing column for the two costlier algorithms.
COSTLY_SIGNING = {CMAC.upper(): CMAC, HMAC_SHA256.upper(): HMAC_SHA256, "AES-CMAC": CMAC}

MEASURE_SIGNED = (
    "Measure what signing costs on your share in one run (`sambatune bench smb-client "
    "--server H --share S --user U --security plain,signed`, from a client on SMB 3.1.1) "
    "before and after, then survey again: the client audit shows each session's signing algorithm."
)


def _signed_sessions(inputs: AdvisorInput) -> list[SmbSession]:
    audit = inputs.server.client_audit
    if audit is None:
        return []
    return [s for s in audit.sessions if s.signing and s.signing_degree != "partial"]


def _encrypted_sessions(inputs: AdvisorInput) -> list[SmbSession]:
    audit = inputs.server.client_audit
    return [s for s in audit.sessions if s.encryption] if audit is not None else []


def _list_evidence(name: str, items: list[str], inputs: AdvisorInput) -> Evidence:
    explicit = inputs.config.global_value(name)
    if explicit is None:
        return Evidence(VERSION, f"{name} is not set: the default {list_text(items)} applies")
    return Evidence.setting(GLOBAL, name, explicit, note=f"smbd's order: {list_text(items)}")


def _list_change(name: str, wanted: list[str], default: tuple[str, ...]) -> ConfigChange:
    if [w.upper() for w in wanted] == [d.upper() for d in default]:
        return ConfigChange(GLOBAL, name, "unset")
    return ConfigChange(GLOBAL, name, "set", list_text(wanted))


@rule("signing-gmac-not-first", "protocol")
def signing_gmac_not_first(inputs: AdvisorInput) -> Iterator[Finding]:
    """Signing is in use, but smbd's list does not put AES-128-GMAC first."""
    if not inputs.at_least(SMB3_ALGORITHMS_ADDED):
        return
    order = signing_algorithms(inputs)
    if order and order[0].upper() == GMAC:
        return
    required = signing(inputs)
    signed = _signed_sessions(inputs)
    if required is None and not signed:
        return
    evidence = [_list_evidence(SIGNING_ALGORITHMS, order, inputs)]
    if required is not None:
        evidence.append(Evidence.setting(GLOBAL, "server signing", required[1]))
    if signed:
        evidence.append(
            Evidence(
                SURVEY,
                f"{len(signed)} session(s) sign: "
                + ", ".join(f"{s.machine or '?'} {s.dialect or '?'} {s.signing}" for s in signed[:5]),
            )
        )
    wanted = [GMAC, *(a for a in order if a.upper() != GMAC)]
    yield Finding(
        id="signing-gmac-not-first",
        severity=SUGGESTION,
        title="Signing is in use, but AES-128-GMAC is not smbd's first choice",
        subject=GLOBAL,
        evidence=tuple(evidence),
        change=_list_change(SIGNING_ALGORITHMS, wanted, DEFAULT_SIGNING_ALGORITHMS),
        expected_effect=(
            "SMB 3.1.1 clients that offer AES-128-GMAC (Windows 11 and Windows Server 2022 "
            "do, for example) sign with it instead of AES-CMAC or HMAC-SHA256, which "
            "takes most of the signing work off both CPUs; the other clients keep what they "
            "sign with now, since SMB 2.x and 3.0 cannot negotiate anything else."
        ),
        effect_source=measured_cost(
            inputs,
            "signed",
            CIPHER_SPEED_SOURCE + ": AES-128-GCM, which does the GMAC work plus encryption, ran "
            "at about 4.2 GB/s, AES-CMAC at about 1.1 GB/s and HMAC-SHA256 at about 1.8 GB/s. "
            "Samba computes them with GnuTLS: take the ratio, not the figures. " + MEASURE_SIGNED,
        ),
        risk=(
            "None given up: only the order changes, every algorithm that was offered stays "
            "offered, and AES-128-GMAC is an AES-128 message authentication code like "
            "AES-CMAC, so every session stays signed as strongly as before."
        ),
        applies_to_version=f"{inputs.version_label()}: the list exists since 4.15, which "
        "also added AES-128-GMAC signing.",
        parameters=(SIGNING_ALGORITHMS, "server signing"),
        sources=(
            *inputs.sources(SIGNING_ALGORITHMS),
            NEGOTIATION_SOURCE,
            RELEASE_SOURCE,
            WINDOWS_GMAC_SOURCE,
        ),
    )


def _gcm_first(order: list[str]) -> list[str]:
    """The list with each AES-CCM right after its AES-GCM twin of the same key size, the
    rest in place. smbd takes the first entry of its own list that the client offers, so
    this is all it takes for a client offering both to get GCM; Samba's default list
    (128-GCM, 128-CCM, 256-GCM, 256-CCM) already is this. A CCM without its twin gets the
    twin, so a 256-bit-only policy stays 256-bit."""
    wanted: list[str] = []
    emitted: set[str] = set()
    for algorithm in order:
        name = algorithm.upper()
        if name.endswith("-CCM"):
            twin = name.replace("-CCM", "-GCM")
            if twin not in emitted:
                spelled = next((a for a in order if a.upper() == twin), twin)
                wanted.append(spelled)
                emitted.add(twin)
        elif name in emitted:
            continue
        wanted.append(algorithm)
        emitted.add(name)
    return wanted


def _encrypts(inputs: AdvisorInput) -> list[Evidence]:
    """Why encryption is in play: a section that asks for it, or sessions that use it."""
    found = []
    for section in inputs.config.sections():
        encrypted = encryption(inputs, section)
        if encrypted is not None and inputs.config.where_set(section, encrypted[1]) == section:
            found.append(Evidence.setting(section, encrypted[1], encrypted[2]))
    sessions = _encrypted_sessions(inputs)
    if sessions:
        found.append(
            Evidence(
                SURVEY,
                f"{len(sessions)} session(s) encrypt: "
                + ", ".join(f"{s.machine or '?'} {s.dialect or '?'} {s.encryption}" for s in sessions[:5]),
            )
        )
    return found


@rule("encryption-gcm-not-first", "protocol")
def encryption_gcm_not_first(inputs: AdvisorInput) -> Iterator[Finding]:
    """Encryption is in use and smbd prefers CCM to GCM (or has no GCM at all)."""
    if not inputs.at_least(SMB3_ALGORITHMS_ADDED):
        return
    order = encryption_algorithms(inputs)
    wanted = _gcm_first(order)
    if [a.upper() for a in wanted] == [a.upper() for a in order]:
        return
    why = _encrypts(inputs)
    if not why:
        return
    lacks = not any(a.upper().endswith("-GCM") for a in order)
    yield Finding(
        id="encryption-gcm-not-first",
        severity=SUGGESTION,
        title="Encryption is in use, but smbd "
        + ("offers no AES-GCM" if lacks else "prefers AES-CCM to AES-GCM"),
        subject=GLOBAL,
        evidence=(_list_evidence(ENCRYPTION_ALGORITHMS, order, inputs), *why),
        change=_list_change(ENCRYPTION_ALGORITHMS, wanted, DEFAULT_ENCRYPTION_ALGORITHMS),
        expected_effect=(
            "SMB 3.1.1 clients encrypt with AES-GCM instead of AES-CCM: the same protection "
            "for a fraction of the CPU, which shows as throughput wherever encryption keeps a "
            "core busy. SMB 3.0 and 3.0.2 clients can only use AES-128-CCM and keep it."
        ),
        effect_source=measured_cost(
            inputs,
            "encrypted",
            CIPHER_SPEED_SOURCE + ": AES-128-GCM ran at about 4.2 GB/s and AES-128-CCM at about "
            "1.4 GB/s, three times slower. Samba encrypts with GnuTLS: take the ratio, not the "
            "figures, and measure a large read and write from an encrypting client "
            "(`sambatune bench smb-client --security plain,encrypted`) before and after.",
        ),
        risk=(
            "None given up: GCM and CCM both encrypt and authenticate every message, the key "
            "sizes in the list stay as they are (a 256-bit-only list stays 256-bit), and no "
            "algorithm that was offered is removed."
        ),
        applies_to_version=f"{inputs.version_label()}: the list exists since 4.15.",
        parameters=(ENCRYPTION_ALGORITHMS, "server smb encrypt"),
        sources=(*inputs.sources(ENCRYPTION_ALGORITHMS), NEGOTIATION_SOURCE, RELEASE_SOURCE),
    )


def _requires_itself(inputs: AdvisorInput, share: str) -> bool:
    own = [n for n in ENCRYPTION_NAMES if inputs.config.explicit_value(share, n) is not None]
    encrypted = encryption(inputs, share)
    return bool(own) and encrypted is not None and encrypted[0] == "required"


@rule("encryption-required-global", "protocol")
def encryption_required_global(inputs: AdvisorInput) -> Iterator[Finding]:
    found = required_in_global(inputs)
    if found is None:
        return
    name, value = found
    keep = [s for s in inputs.config.shares() if _requires_itself(inputs, s)]
    exposed = [s for s in inputs.config.shares() if s not in keep]
    evidence = [Evidence.setting(GLOBAL, name, value)]
    if keep:
        evidence.append(
            Evidence(
                "config",
                "required by their own line, and staying encrypted: " + ", ".join(f"[{s}]" for s in keep),
            )
        )
    if exposed:
        evidence.append(
            Evidence("config", "encrypted only because of [global]: " + ", ".join(f"[{s}]" for s in exposed))
        )
    yield Finding(
        id="encryption-required-global",
        severity=SUGGESTION,
        title=f"Every share must be encrypted ({name} = {value} in [global])",
        subject=GLOBAL,
        evidence=tuple(evidence),
        change=ConfigChange(GLOBAL, name, "unset"),
        expected_effect=(
            "Before removing the [global] line, write `server smb encrypt = required` into each "
            "share whose data must not cross the network readable (the advisor cannot know "
            "which). The other shares then read and write without AES on either end and can use "
            "sendfile and recvfile again; clients that ask for encryption themselves still get it."
        ),
        effect_source=measured_cost(
            inputs,
            "encrypted",
            "SambaTune measurement on Samba 4.17.12, loopback, 2 cores: a 256 MiB read ran at "
            "roughly 530-540 MiB/s encrypted against 640-1,100 MiB/s unencrypted (noisy, shared "
            "machine). Measure the cost on your share in one run "
            "(`sambatune bench smb-client --server H --share S --user U --security plain,encrypted`).",
        ),
        risk=(
            "This gives up encryption on every share that does not get its own line: their "
            "file data and names cross the network readable by anyone on the path, and "
            "sessions are no longer encrypted as a whole. Requests stay signed where signing "
            "is on. Keep [global] as it is if the network between clients and server is not "
            "trusted."
        ),
        applies_to_version="Since 4.14 the parameter is `server smb encrypt` (`smb encrypt` "
        "before); a share's own line overrides [global]'s.",
        parameters=("server smb encrypt",),
        sources=inputs.sources("server smb encrypt"),
    )


def _signing_reason(session: SmbSession, order: list[str]) -> str:
    dialect = session.dialect.upper()
    if dialect.startswith("SMB2"):
        return "SMB 2.x can only sign with HMAC-SHA256"
    if dialect.startswith(("SMB3_00", "SMB3_02")):
        return "SMB 3.0 and 3.0.2 can only sign with AES-CMAC"
    if order and order[0].upper() != GMAC:
        return "smbd's list does not put AES-128-GMAC first"
    return "the client did not offer AES-128-GMAC (Windows 10 and Windows Server 2019 do not)"


@rule("clients-costly-signing", "clients")
def clients_costly_signing(inputs: AdvisorInput) -> Iterator[Finding]:
    """Sessions signing with AES-CMAC or HMAC-SHA256, and why: mostly their dialect."""
    order = signing_algorithms(inputs) if inputs.at_least(SMB3_ALGORITHMS_ADDED) else []
    costly = [s for s in _signed_sessions(inputs) if s.signing.upper() in COSTLY_SIGNING]
    if not costly:
        return
    evidence = tuple(
        Evidence(
            SURVEY,
            f"{s.machine or '?'} ({s.address or 'address unknown'}) as {s.user or '?'}: "
            f"{s.dialect or 'dialect unknown'}, signs with {s.signing}: {_signing_reason(s, order)}",
        )
        for s in costly[:5]
    )
    if len(costly) > 5:
        evidence += (Evidence(SURVEY, f"and {len(costly) - 5} more session(s) with costlier signing"),)
    yield Finding(
        id="clients-costly-signing",
        severity=INFO,
        title=f"{len(costly)} session(s) sign with a costlier algorithm than AES-128-GMAC",
        subject="clients",
        evidence=evidence,
        change=None,
        expected_effect=(
            "A client that moves to SMB 3.1.1 with AES-128-GMAC (Windows 11 and Windows Server "
            "2022 do; an upgrade or the client's own settings, not the server's) spends "
            "much less CPU per signed request; until then its signing costs what its dialect "
            "allows."
        ),
        effect_source=measured_cost(
            inputs,
            "signed",
            CIPHER_SPEED_SOURCE + ": AES-CMAC about 1.1 GB/s and HMAC-SHA256 about "
            "1.8 GB/s against about 4.2 GB/s for AES-128-GCM. " + MEASURE_SIGNED,
        ),
        risk="Nothing changes on the server, and signing stays on: the client is what to upgrade.",
        applies_to_version="AES-128-GMAC signing needs SMB 3.1.1 on both sides and Samba 4.15 or later.",
        parameters=("server signing", SIGNING_ALGORITHMS),
        sources=(
            *inputs.sources("server signing", SIGNING_ALGORITHMS),
            NEGOTIATION_SOURCE,
            WINDOWS_GMAC_SOURCE,
        ),
    )
