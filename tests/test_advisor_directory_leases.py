"""The directory-leases rule: what smbd decides from four global settings (as
source3/param/loadparm.c lp_smb3_directory_leases does), the trade it explains, and the
one case where it proposes a change."""

from __future__ import annotations

from typing import Any

import pytest

from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.findings import INFO, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import load_knowledge
from sambatune.advisor.rules import RULE_IDS, leases, rule_by_id
from sambatune.advisor.server_facts import ServerFacts

V422 = (4, 22, 0)


def run(
    explicit: dict[str, str] | None = None,
    effective: dict[str, str] | None = None,
    *,
    version: tuple[int, int, int] | None = V422,
) -> list[Finding]:
    view = ConfigView({"global": explicit or {}}, {"global": effective or {}}, "/etc/samba/smb.conf")
    return rule_by_id("directory-leases")(AdvisorInput(view, ServerFacts(samba_version=version)))


def only(**kwargs: Any) -> Finding:
    found = run(**kwargs)
    assert len(found) == 1
    assert found[0].severity == INFO and found[0].subject == "global"
    return found[0]


def test_registered_with_the_other_caching_rules() -> None:
    ids = list(RULE_IDS)
    assert ids.index("directory-leases") == ids.index("strict-locking-on") + 1


@pytest.mark.parametrize("version", [(4, 21, 4), (4, 17, 12)])
def test_silent_before_4_22(version: tuple[int, int, int]) -> None:
    assert run({"smb3 directory leases": "yes", "clustering": "yes"}, version=version) == []


def test_unknown_version_is_judged_as_the_reference_release_and_stays_silent() -> None:
    assert run(version=None) == []


def test_the_default_is_on_and_the_trade_is_explained() -> None:
    finding = only()
    assert finding.title == "Directory leases are on: clients may cache directory listings"
    assert finding.change is None
    assert finding.evidence[0].text == "smb3 directory leases = auto in [global] (the default)"
    # the speed side and the staleness side, in our words
    assert "answer repeated listings without asking the server" in finding.expected_effect
    assert "strict rename" in finding.expected_effect
    assert "NFS" in finding.risk and "outside Samba" in finding.risk
    assert "TrueNAS 25.10 (after a performance regression" in finding.risk
    # the measurement plan: the small-file benchmark's list step through a real client
    assert "sambatune bench files --server H --share S" in finding.effect_source
    assert "takes a directory lease" in finding.effect_source and "--path" in finding.effect_source
    assert "bench/directory_leases.py" in finding.effect_source


def test_testparms_default_counts_like_the_missing_line() -> None:
    assert only(effective={"smb3 directory leases": "Auto"}).title.startswith("Directory leases are on")


@pytest.mark.parametrize("value", ["no", "No", "false", "0"])
def test_switched_off_in_the_file(value: str) -> None:
    finding = only(explicit={"smb3 directory leases": value})
    assert finding.title == f"Directory leases are off (smb3 directory leases = {value})"
    assert finding.evidence[0].text.endswith("(set in the file)")
    assert finding.change is None
    # staleness is the price of having them on, not a risk of this state
    assert finding.risk.startswith("None while they stay off. Switched on: ")


def test_auto_is_off_on_a_cluster() -> None:
    finding = only(explicit={"clustering": "yes"})
    assert finding.title == "Directory leases are off: this is a cluster and the setting is auto"
    assert any(e.parameter == "clustering" for e in finding.evidence)
    assert finding.change is None


def test_forcing_them_on_a_cluster_is_the_one_conflict_with_a_change() -> None:
    finding = only(explicit={"smb3 directory leases": "yes", "clustering": "yes"})
    assert finding.title == "Directory leases are forced on in a cluster"
    assert finding.change is not None
    assert finding.change.to_json() == {
        "kind": "smb.conf",
        "section": "global",
        "parameter": "smb3 directory leases",
        "action": "unset",
        "value": None,
    }


@pytest.mark.parametrize(
    ("setting", "blocker"),
    [
        ({"smb2 leases": "no"}, "smb2 leases = no in [global]"),
        ({"oplocks": "no"}, "oplocks = no in [global]"),
        ({"kernel oplocks": "yes"}, "kernel oplocks = yes in [global]"),
    ],
)
def test_the_other_settings_that_rule_them_out(setting: dict[str, str], blocker: str) -> None:
    finding = only(explicit=setting)
    assert finding.title == f"Directory leases are off because {blocker}"
    assert blocker in [e.text for e in finding.evidence]
    forced = only(explicit={"smb3 directory leases": "yes", **setting})
    assert forced.title == f"smb3 directory leases = yes has no effect: {blocker}"
    assert forced.change is None  # the line does nothing; removing it would change nothing


def test_a_value_samba_refuses_is_left_to_lint() -> None:
    assert run({"smb3 directory leases": "sometimes"}) == []


def test_sources_name_samba_and_only_vendors_we_can_cite() -> None:
    finding = only()
    assert any("smb3directoryleases.xml" in s for s in finding.sources)
    assert any("lp_smb3_directory_leases" in s for s in finding.sources)
    assert any("4.22 release notes" in s for s in finding.sources)
    vendors = [s for s in finding.sources if "TrueNAS" in s or "Unraid" in s]
    assert vendors == list(leases.VENDOR_SOURCES)
    knowledge = load_knowledge()
    assert all(knowledge.explained(p) for p in finding.parameters)
