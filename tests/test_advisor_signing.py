"""Cheap signing and encryption (advisor/rules/signing.py): the order of smbd's algorithm
lists, encryption required in [global], and clients that sign the costly way."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sambatune.advisor.findings import SUGGESTION, Change, ConfigChange, Finding
from sambatune.advisor.protocols import (
    DEFAULT_ENCRYPTION_ALGORITHMS,
    DEFAULT_SIGNING_ALGORITHMS,
    algorithm_list,
)
from sambatune.wizard.change import apply_change
from test_advisor_rules import audit, conf, run, session

SIGN = "server smb3 signing algorithms"
ENCRYPT = "server smb3 encryption algorithms"
V414 = (4, 14, 0)


def edits(change: Change | None) -> list[tuple[str, str, str, str | None]]:
    assert isinstance(change, ConfigChange)
    return [(e.section, e.parameter, e.action, e.value) for e in (change, *change.also)]


def test_lists_resolve_as_smbd_resolves_them() -> None:
    assert algorithm_list(None, DEFAULT_SIGNING_ALGORITHMS) == list(DEFAULT_SIGNING_ALGORITHMS)
    assert algorithm_list("hmac-sha256, aes-128-cmac", DEFAULT_SIGNING_ALGORITHMS) == [
        "HMAC-SHA256",
        "AES-128-CMAC",
    ]
    # A leading - or + edits the default (testparm -sv prints the result this way).
    assert algorithm_list("-AES-128-GMAC", DEFAULT_SIGNING_ALGORITHMS) == ["AES-128-CMAC", "HMAC-SHA256"]
    assert algorithm_list("-AES-128-GCM -AES-128-CCM", DEFAULT_ENCRYPTION_ALGORITHMS) == [
        "AES-256-GCM",
        "AES-256-CCM",
    ]


def test_gmac_goes_first_and_every_other_algorithm_stays() -> None:
    [finding] = run(
        "signing-gmac-not-first",
        explicit=conf(global_={SIGN: "HMAC-SHA256 AES-128-CMAC"}),
        clients=audit(session("SMB3_11", signing="AES-128-CMAC")),
    )
    assert finding.severity == SUGGESTION
    assert edits(finding.change) == [("global", SIGN, "set", "AES-128-GMAC, HMAC-SHA256, AES-128-CMAC")]
    assert "None given up" in finding.risk
    assert any(e.kind == "survey" for e in finding.evidence)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(explicit=conf(global_={"server signing": "mandatory", SIGN: "AES-128-GMAC, HMAC-SHA256"})),
        dict(explicit=conf(global_={"server signing": "mandatory"})),
        dict(explicit=conf(global_={"server signing": "mandatory", SIGN: "AES-128-CMAC"}), version=V414),
        dict(explicit=conf(global_={SIGN: "AES-128-CMAC"})),  # nothing signs
    ],
    ids=["starts with GMAC", "default", "before 4.15", "signing not in use"],
)
def test_no_gmac_suggestion_when_it_is_first_or_cannot_be(kwargs: dict[str, object]) -> None:
    assert run("signing-gmac-not-first", **kwargs) == []


def test_gcm_keeps_the_key_sizes_of_the_list() -> None:
    encrypted = conf(global_={ENCRYPT: "AES-256-CCM", "server smb encrypt": "required"})
    [finding] = run("encryption-gcm-not-first", explicit=encrypted)
    assert edits(finding.change) == [("global", ENCRYPT, "set", "AES-256-GCM, AES-256-CCM")]
    assert "offers no AES-GCM" in finding.title
    by_clients = run(
        "encryption-gcm-not-first",
        explicit=conf(global_={ENCRYPT: "AES-128-CCM, AES-256-GCM"}),
        clients=audit(session(encryption="AES-128-CCM")),
    )
    # AES-128-CCM gets its GCM twin ahead of it: a 128-bit client need not fall back to CCM.
    assert edits(by_clients[0].change) == [
        ("global", ENCRYPT, "set", "AES-128-GCM, AES-128-CCM, AES-256-GCM")
    ]
    assert (
        run("encryption-gcm-not-first", explicit=conf(global_={ENCRYPT: "AES-128-GCM"}), version=V414) == []
    )


@pytest.mark.parametrize(
    "written",
    [None, ", ".join(DEFAULT_ENCRYPTION_ALGORITHMS), "AES-256-GCM AES-256-CCM", "AES-128-GCM"],
    ids=["default", "default written out", "256-bit pair", "GCM only"],
)
def test_no_gcm_suggestion_when_every_ccm_follows_its_gcm(written: str | None) -> None:
    """Samba's own default is 128-GCM, 128-CCM, 256-GCM, 256-CCM: a client offering both
    of a pair already gets GCM, so there is nothing to reorder."""
    settings = {"server smb encrypt": "required"} | ({ENCRYPT: written} if written else {})
    sessions = audit(session(encryption="AES-128-GCM"))
    assert run("encryption-gcm-not-first", explicit=conf(global_=settings), clients=sessions) == []


def test_encryption_required_in_global_names_what_would_stop_being_encrypted() -> None:
    explicit = conf(
        global_={"server smb encrypt": "required"},
        secret={"path": "/srv/secret", "server smb encrypt": "required"},
        data={"path": "/srv/data"},
    )
    [finding] = run("encryption-required-global", explicit=explicit)
    texts = [e.text for e in finding.evidence]
    assert any("[secret]" in t and "staying encrypted" in t for t in texts)
    assert any("[data]" in t and "only because of [global]" in t for t in texts)
    assert "readable" in finding.risk
    # The generic cost finding leaves the [global] line to this rule, and keeps the share's.
    cost = run("encryption-required-cost", explicit=explicit)
    assert [f.subject for f in cost] == ["secret"]


def test_the_signing_cost_finding_points_at_the_cheaper_order_first() -> None:
    [finding] = run("signing-required-cost", effective=conf(global_={"server signing": "mandatory"}))
    assert "signing-gmac-not-first" in finding.expected_effect


def test_costly_signing_says_why_per_session() -> None:
    sessions = audit(
        session("SMB2_10", signing="HMAC-SHA256"),
        session("SMB3_02", signing="AES-128-CMAC"),
        session("SMB3_11", signing="AES-128-CMAC"),
        session("SMB3_11"),
    )
    [finding] = run("clients-costly-signing", clients=sessions)
    reasons = [e.text.rsplit(": ", 1)[1] for e in finding.evidence]
    assert reasons == [
        "SMB 2.x can only sign with HMAC-SHA256",
        "SMB 3.0 and 3.0.2 can only sign with AES-CMAC",
        "the client did not offer AES-128-GMAC (Windows 10 and Windows Server 2019 do not)",
    ]
    assert finding.change is None


def all_findings() -> list[Finding]:
    explicit = conf(
        global_={
            "server signing": "mandatory",
            "server smb encrypt": "required",
            SIGN: "AES-128-CMAC, HMAC-SHA256",
            ENCRYPT: "AES-128-CCM, AES-128-GCM",
        },
        data={"path": "/srv/data"},
    )
    clients = audit(session("SMB3_02", signing="AES-128-CMAC"))
    found: list[Finding] = []
    for rule_id in (
        "signing-gmac-not-first",
        "encryption-gcm-not-first",
        "encryption-required-global",
        "clients-costly-signing",
    ):
        found += run(rule_id, explicit=explicit, clients=clients)
    return found


def test_every_finding_says_what_it_gives_up_and_cites_sources() -> None:
    findings = all_findings()
    assert len(findings) == 4
    for finding in findings:
        assert finding.risk.strip() and finding.sources, finding.id
        if finding.severity == SUGGESTION:
            assert "given up" in finding.risk or "gives up" in finding.risk, finding.id


def read_testparm(path: Path) -> dict[str, str]:
    result = subprocess.run(["testparm", "-s", "-v", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    values: dict[str, str] = {}
    for line in result.stdout.splitlines():
        name, sep, value = line.strip().partition(" = ")
        if sep:
            values.setdefault(name, value)
    return values


@pytest.mark.testbed  # runs Samba's own testparm
def test_testparm_takes_the_proposed_lists_with_samba_s_own_names(tmp_path: Path) -> None:
    """testparm does not check algorithm names (smbd does, at negotiation), so the proposed
    names are checked against the ones testparm prints for the defaults."""
    empty = tmp_path / "empty.conf"
    empty.write_text("[global]\n")
    defaults = read_testparm(empty)
    known = {name for key in (SIGN, ENCRYPT) for name in defaults[key].split(", ")}
    assert defaults[SIGN] == ", ".join(DEFAULT_SIGNING_ALGORITHMS)
    assert defaults[ENCRYPT] == ", ".join(DEFAULT_ENCRYPTION_ALGORITHMS)

    path = tmp_path / "smb.conf"
    live = f"[global]\n\t{SIGN} = HMAC-SHA256 AES-128-CMAC\n\t{ENCRYPT} = AES-256-CCM\n".encode()
    proposals = run(
        "signing-gmac-not-first",
        explicit=conf(global_={SIGN: "HMAC-SHA256 AES-128-CMAC", "server signing": "mandatory"}),
    ) + run(
        "encryption-gcm-not-first",
        explicit=conf(global_={ENCRYPT: "AES-256-CCM", "server smb encrypt": "desired"}),
    )
    changed = live
    for finding in proposals:
        assert isinstance(finding.change, ConfigChange)
        changed = apply_change(changed, finding.change, str(path))
    path.write_bytes(changed)
    values = read_testparm(path)
    assert values[SIGN] == "AES-128-GMAC, HMAC-SHA256, AES-128-CMAC"
    assert values[ENCRYPT] == "AES-256-GCM, AES-256-CCM"
    assert set(values[SIGN].split(", ")) | set(values[ENCRYPT].split(", ")) <= known
