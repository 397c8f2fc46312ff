"""The advisor quotes this server's own measurements: a signing/encryption comparison
(``bench smb-client --security``) and the small-file test's listings, recorded with the
smb.conf being judged, become the effect source and the evidence of their findings."""

from __future__ import annotations

import os

import pytest

from bench_sessions import BEFORE_CONF, context
from sambatune.advisor.measurements import ListingRate, Measurements, SecurityCost
from sambatune.advisor.recorded import recorded_measurements
from sambatune.advisor.rules import rule_by_id
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method
from sambatune.bench.small_files import SmallFilesBenchmark, SmallFilesOptions
from sambatune.bench.smb_client import SmbClientBenchmark
from test_advisor_rules import make_inputs
from test_bench_smb_security import _options, smb_root  # noqa: F401 (a fixture)
from testbed.smbd import SmbServer

SIGNED_SLOWER = SecurityCost("read", "signed", "plain", -0.25, True, "session 7")
ENCRYPTED_SAME = SecurityCost("write", "encrypted", "plain", -0.02, False, "session 7")


@pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")
def test_a_recorded_comparison_and_listing_become_measurements(smb_root: SmbServer) -> None:  # noqa: F811
    database = ResultsDatabase()
    compared = SmbClientBenchmark(
        None, Method(runs=2, warmup=0), _options(smb_root, security=("plain", "signed"))
    ).run()
    database.save(compared, context(BEFORE_CONF))
    files = SmallFilesBenchmark(
        None,
        Method(runs=2, warmup=0),
        SmallFilesOptions(server="127.0.0.1", share=smb_root.share, port=smb_root.port, count=30),
    ).run()
    database.save(files, context(BEFORE_CONF))

    measured, used = recorded_measurements(database, "127.0.0.1", BEFORE_CONF)
    assert {(c.operation, c.mode, c.baseline) for c in measured.security} == {
        ("write", "signed", "plain"),
        ("read", "signed", "plain"),
    }
    assert all(f"session {compared.session_id}" in c.source for c in measured.security)
    assert measured.listing is not None and measured.listing.files == 30
    assert measured.listing.share == smb_root.share and measured.listing.lists_per_second > 0
    assert set(used) == {compared.session_id, files.session_id}
    # Another smb.conf measured other settings: nothing of it counts.
    other, none_used = recorded_measurements(database, "127.0.0.1", BEFORE_CONF + b"# edited\n")
    assert other.security == () and other.listing is None and none_used == []


def test_signing_and_encryption_findings_quote_the_measured_cost() -> None:
    measurements = Measurements(security=(SIGNED_SLOWER, ENCRYPTED_SAME))
    explicit = {"global": {"server signing": "mandatory"}}
    (signing,) = rule_by_id("signing-required-cost")(
        make_inputs(explicit, explicit, measurements=measurements)
    )
    assert signing.effect_source.startswith("Measured on this server: signed reads 25% slower than plain")
    explicit = {"global": {"server smb encrypt": "required"}, "data": {}}
    findings = list(
        rule_by_id("encryption-required-global")(make_inputs(explicit, explicit, measurements=measurements))
    )
    assert findings and findings[0].effect_source.startswith(
        "Measured on this server: encrypted writes: no significant difference from plain"
    )
    # Without a comparison on record the finding says what is known, and how to measure.
    (unmeasured,) = rule_by_id("signing-required-cost")(
        make_inputs(explicit | {"global": {"server signing": "mandatory"}})
    )
    assert (
        not unmeasured.effect_source.startswith("Measured")
        and "--security plain,signed" in unmeasured.effect_source
    )


def test_a_mac_listing_finding_shows_the_recorded_listing() -> None:
    listing = ListingRate("data", 10_000, 4.0, "small-file test, session 9, run with this smb.conf")
    explicit = {"global": {"vfs objects": "catia fruit streams_xattr"}, "data": {"path": "/srv/data"}}
    findings = list(
        rule_by_id("macos-listing-max-access")(
            make_inputs(explicit, explicit, measurements=Measurements(listing=listing))
        )
    )
    assert findings
    texts = [e.text for e in findings[0].evidence]
    assert any("listing [data] with 10,000 files took 0.250 s" in t for t in texts), texts


def test_measurements_files_carry_the_comparison_and_the_listing() -> None:
    measurements = Measurements(security=(SIGNED_SLOWER,), listing=ListingRate("data", 2000, 12.5, "by hand"))
    assert Measurements.from_json(measurements.to_json()) == measurements
