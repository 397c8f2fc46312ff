"""The io_uring rules: when io_uring cannot work, when it sits in the wrong place, and when
it is worth a measured try; and the survey facts they stand on."""

from __future__ import annotations

from typing import Any

import pytest

from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.findings import PROBLEM, SUGGESTION, SURVEY, WARNING, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import load_knowledge
from sambatune.advisor.rules import RULE_IDS, io, rule_by_id
from sambatune.advisor.server_facts import ServerFacts
from sambatune.remote.survey import Survey

MODULES_DIR = "/usr/lib/x86_64-linux-gnu/samba/vfs"
GOOD = dict(kernel_release="6.1.0-18-amd64", vfs_modules=("fruit", "io_uring", "streams_xattr"))


def inputs(
    explicit: dict[str, dict[str, str]],
    *,
    version: tuple[int, int, int] | None = (4, 17, 12),
    os: str | None = "Linux",
    **facts: Any,
) -> AdvisorInput:
    facts.setdefault("vfs_modules_dir", MODULES_DIR)
    return AdvisorInput(
        ConfigView(explicit, {}, "/etc/samba/smb.conf"),
        ServerFacts(samba_version=version, os_system=os, label="test server", **facts),
    )


def run(rule_id: str, explicit: dict[str, dict[str, str]], **kwargs: Any) -> list[Finding]:
    return rule_by_id(rule_id)(inputs(explicit, **kwargs))


def change_of(finding: Finding) -> tuple[str, str, str, str | None]:
    data = finding.change.to_json() if finding.change else None
    assert data is not None
    return data["section"], data["parameter"], data["action"], data["value"]


def test_the_three_rules_are_registered_in_the_disk_io_group() -> None:
    ids = list(RULE_IDS)
    assert {"io-uring-unusable", "io-uring-not-last", "io-uring-worth-trying"} <= set(ids)
    # Most urgent first inside the group, right after the other disk I/O rules.
    start = ids.index("io-uring-unusable")
    assert ids[start : start + 3] == ["io-uring-unusable", "io-uring-not-last", "io-uring-worth-trying"]
    assert ids[start - 1] == "strict-allocate-slow-filesystem"


def test_the_release_that_added_the_module_is_in_the_vfs_objects_history() -> None:
    history = [version for version, _ in load_knowledge().history("vfs objects")]
    assert io.IO_URING_ADDED in history
    assert io.IO_URING_KERNEL == (5, 1, 0)
    assert {(5, 4, 14), (5, 4, 15)} == io.IO_URING_BAD_KERNELS


# --- the server facts ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "version"),
    [
        ("6.1.0-18-amd64", (6, 1, 0)),
        ("5.4.0-150-generic", (5, 4, 0)),
        ("5.4.15", (5, 4, 15)),
        ("6.18.44-fc-v669", (6, 18, 44)),
        ("4.19", (4, 19, 0)),
        ("", None),
        ("unknown", None),
    ],
)
def test_kernel_version_is_the_upstream_part_of_the_release(
    release: str, version: tuple[int, int, int] | None
) -> None:
    assert ServerFacts(kernel_release=release or None).kernel_version == version


def test_facts_come_from_the_survey_json() -> None:
    survey = Survey.from_json(
        {
            "target": "files1",
            "os": {"system": "Linux", "kernel": "5.15.0-91-generic", "io_uring_disabled": 2},
            "samba": {
                "version": [4, 19, 5],
                "vfs_modules_dir": MODULES_DIR,
                "vfs_modules": ["fruit", "io_uring"],
            },
        }
    )
    facts = ServerFacts.from_survey(survey)
    assert facts.kernel_release == "5.15.0-91-generic"
    assert facts.kernel_version == (5, 15, 0)
    assert facts.io_uring_disabled == 2
    assert facts.vfs_modules == ("fruit", "io_uring")
    assert facts.vfs_modules_dir == MODULES_DIR
    assert facts.has_vfs_module("io_uring") is True
    assert facts.has_vfs_module("ceph") is False


def test_a_survey_without_the_new_facts_says_unknown_not_missing() -> None:
    facts = ServerFacts.from_survey(Survey.from_json({"os": {"system": "Linux"}, "samba": {}}))
    assert facts.kernel_release is None and facts.kernel_version is None
    assert facts.io_uring_disabled is None
    assert facts.vfs_modules is None
    assert facts.has_vfs_module("io_uring") is None


@pytest.mark.parametrize(
    ("item", "name"),
    [
        ("io_uring", "io_uring"),
        ("/usr/lib/samba/vfs/io_uring.so", "io_uring"),
        ("fruit", "fruit"),
        ("shadow_copy2:snapdir", "shadow_copy2"),
    ],
)
def test_module_names_are_derived_as_smbd_derives_them(item: str, name: str) -> None:
    assert io.vfs_module_name(item) == name


# --- io-uring-unusable ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "evidence", "effect"),
    [
        (dict(version=(4, 11, 17)), "has no io_uring module", "NT_STATUS_BAD_NETWORK_NAME"),
        (dict(os="FreeBSD"), "only on Linux", "NT_STATUS_BAD_NETWORK_NAME"),
        (dict(vfs_modules=("fruit",)), f"no io_uring.so in {MODULES_DIR}", "NT_STATUS_BAD_NETWORK_NAME"),
        (dict(version=(4, 12, 2), **GOOD), "did not retry short reads", "bug 14361"),
        (dict(kernel_release="4.19.0-26-amd64"), "older than 5.1", "NT_STATUS_UNSUCCESSFUL"),
        (dict(kernel_release="5.4.14"), "5.4.14, 5.4.15", "5.4.16"),
        (dict(kernel_release="5.4.15-arch1-1"), "5.4.14, 5.4.15", "5.4.16"),
        (dict(io_uring_disabled=2, **GOOD), "io_uring_disabled = 2", "instead of falling back"),
    ],
)
def test_io_uring_that_cannot_work_is_a_problem_and_comes_out(
    kwargs: dict[str, Any], evidence: str, effect: str
) -> None:
    found = run("io-uring-unusable", {"data": {"vfs objects": "fruit streams_xattr io_uring"}}, **kwargs)
    assert len(found) == 1
    finding = found[0]
    assert finding.severity == PROBLEM and finding.subject == "data"
    assert any(evidence in e.text for e in finding.evidence[1:]), [e.text for e in finding.evidence]
    assert effect in finding.expected_effect
    assert change_of(finding) == ("data", "vfs objects", "set", "fruit streams_xattr")
    assert any("vfs_io_uring(8)" in s for s in finding.sources)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(**GOOD),
        dict(kernel_release="5.4.16", vfs_modules=("io_uring",)),
        dict(kernel_release="5.1.0", vfs_modules=("io_uring",), version=(4, 12, 3)),
        dict(io_uring_disabled=1, **GOOD),  # privileged processes may still use it
        dict(),  # nothing known beyond the version: no claim
    ],
)
def test_io_uring_that_can_work_is_no_problem(kwargs: dict[str, Any]) -> None:
    assert run("io-uring-unusable", {"data": {"vfs objects": "io_uring"}}, **kwargs) == []


def test_a_share_left_without_modules_keeps_an_empty_list_instead_of_inheriting_global() -> None:
    explicit = {"global": {"vfs objects": "fruit streams_xattr"}, "data": {"vfs objects": "io_uring"}}
    (finding,) = run("io-uring-unusable", explicit, kernel_release="4.19.0")
    assert change_of(finding) == ("data", "vfs objects", "set", "")
    (alone,) = run("io-uring-unusable", {"data": {"vfs objects": "io_uring"}}, kernel_release="4.19.0")
    assert change_of(alone) == ("data", "vfs objects", "unset", None)


def test_a_module_named_by_its_path_counts() -> None:
    explicit = {"global": {"vfs objects": "/usr/lib/samba/vfs/io_uring.so"}}
    (finding,) = run("io-uring-unusable", explicit, vfs_modules=("fruit",))
    assert finding.subject == "global"
    assert "every share that uses [global]'s list" in finding.title


# --- io-uring-not-last ------------------------------------------------------------------------


def test_io_uring_before_other_modules_is_a_warning_that_moves_it_last() -> None:
    (finding,) = run(
        "io-uring-not-last", {"data": {"vfs objects": "catia io_uring fruit streams_xattr"}}, **GOOD
    )
    assert finding.severity == WARNING
    assert change_of(finding) == ("data", "vfs objects", "set", "catia fruit streams_xattr io_uring")
    assert "Today fruit and streams_xattr miss" in finding.expected_effect
    assert io.LAST_BECAUSE in finding.expected_effect
    assert "does not call the next module" in finding.effect_source


def test_last_or_unusable_io_uring_is_not_reordered() -> None:
    assert run("io-uring-not-last", {"data": {"vfs objects": "fruit streams_xattr io_uring"}}, **GOOD) == []
    # When it cannot work at all, the problem finding proposes removing it instead.
    assert (
        run("io-uring-not-last", {"data": {"vfs objects": "io_uring fruit"}}, kernel_release="4.19.0") == []
    )


# --- io-uring-worth-trying ------------------------------------------------------------------


def test_a_share_without_io_uring_gets_a_measured_suggestion_to_append_it() -> None:
    explicit = {"global": {"vfs objects": "fruit streams_xattr"}, "data": {"path": "/srv/data"}}
    (finding,) = run("io-uring-worth-trying", explicit, **GOOD)
    assert finding.severity == SUGGESTION and finding.subject == "global"
    assert change_of(finding) == ("global", "vfs objects", "set", "fruit streams_xattr io_uring")
    assert "in effect for [data]" in finding.evidence[0].text
    survey_facts = [e.text for e in finding.evidence if e.kind == SURVEY]
    assert f"smbd can load {MODULES_DIR}/io_uring.so" in survey_facts
    assert any("Linux 6.1.0-18-amd64" in text for text in survey_facts)
    assert finding.effect_source.startswith("Not measured here unless a measurement says so")
    assert "sambatune wizard start --share" in finding.effect_source
    assert "significance test" in finding.effect_source
    assert io.LAST_BECAUSE in finding.expected_effect
    assert finding.parameters == ("vfs objects",)
    assert finding.sources


def test_shares_with_their_own_list_get_their_own_change() -> None:
    explicit = {
        "global": {"vfs objects": "acl_xattr"},
        "mac": {"vfs objects": "catia fruit streams_xattr"},
        "plain": {"path": "/srv/plain"},
        "fast": {"vfs objects": "fruit io_uring"},
        "cephfs": {"vfs objects": "ceph"},
        "printers": {"printable": "yes"},
    }
    found = run("io-uring-worth-trying", explicit, **GOOD)
    assert [change_of(f) for f in found] == [
        ("mac", "vfs objects", "set", "catia fruit streams_xattr io_uring"),
        ("global", "vfs objects", "set", "acl_xattr io_uring"),
    ]
    assert "in effect for [plain]" in found[1].evidence[0].text


def test_no_modules_anywhere_puts_io_uring_in_global() -> None:
    (finding,) = run("io-uring-worth-trying", {"a": {"path": "/a"}, "b": {"path": "/b"}}, **GOOD)
    assert change_of(finding) == ("global", "vfs objects", "set", "io_uring")
    assert "no vfs objects for [a], [b]" in finding.evidence[0].text


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(os="FreeBSD", **GOOD),
        dict(kernel_release="6.1.0"),  # modules unknown
        dict(kernel_release="6.1.0", vfs_modules=("fruit",)),
        dict(vfs_modules=("io_uring",)),  # kernel unknown
        dict(kernel_release="5.0.21", vfs_modules=("io_uring",)),
        dict(kernel_release="5.4.15", vfs_modules=("io_uring",)),
        dict(io_uring_disabled=1, **GOOD),
        dict(io_uring_disabled=2, **GOOD),
        dict(version=(4, 12, 2), **GOOD),
        dict(version=(4, 11, 0), **GOOD),
    ],
)
def test_no_suggestion_where_io_uring_may_not_work(kwargs: dict[str, Any]) -> None:
    assert run("io-uring-worth-trying", {"data": {"path": "/srv/data"}}, **kwargs) == []


def test_no_suggestion_without_shares() -> None:
    assert run("io-uring-worth-trying", {"global": {"workgroup": "W"}}, **GOOD) == []
