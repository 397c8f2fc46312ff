"""The Mac-client rules (advisor/rules/macos.py): fruit on every share, the per-entry
access computation of Mac listings, and .DS_Store."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sambatune.advisor.findings import SUGGESTION, Change, ConfigChange, Finding
from sambatune.advisor.measurements import DirscalePoint, Measurements
from sambatune.advisor.rules import macos
from sambatune.conf.lint import MANY_NAME_PATTERNS
from sambatune.wizard.change import apply_change
from test_advisor_rules import conf, run

FRUIT = "catia fruit streams_xattr"
RULES = ("macos-fruit-not-on-every-share", "macos-listing-max-access", "macos-ds-store")


def edits(change: Change | None) -> list[tuple[str, str, str | None]]:
    assert isinstance(change, ConfigChange)
    return [(e.section, e.parameter, e.value) for e in (change, *change.also)]


def mixed() -> dict[str, dict[str, str]]:
    """[global] runs fruit; [own] replaces the stack without it; [plain] inherits fruit;
    [printers] is a print share."""
    return conf(
        global_={"vfs objects": FRUIT},
        plain={"path": "/srv/plain"},
        own={"path": "/srv/own", "vfs objects": "acl_xattr io_uring"},
        printers={"path": "/var/spool/samba", "printable": "yes"},
    )


def test_the_aapl_finding_lists_exactly_the_shares_without_fruit() -> None:
    [finding] = run(
        "macos-fruit-not-on-every-share",
        explicit=conf(
            mac={"path": "/srv/mac", "vfs objects": FRUIT},
            photos={"path": "/srv/photos", "vfs objects": "fruit streams_xattr"},
            docs={"path": "/srv/docs"},
            scans={"path": "/srv/scans", "vfs objects": "recycle"},
            printers={"path": "/var/spool/samba", "printable": "yes"},
        ),
    )
    lacking = [e.section for e in finding.evidence if "without fruit" in e.text]
    assert lacking == ["docs", "scans"]
    # [docs] inherits [global]'s (empty) stack: one [global] line covers it; [scans] has its own.
    assert edits(finding.change) == [
        ("global", "vfs objects", FRUIT),
        ("scans", "vfs objects", f"recycle {FRUIT}"),
    ]
    assert finding.subject == "global"
    assert "first" in finding.expected_effect


def test_fruit_in_global_is_missing_only_where_a_share_replaces_the_stack() -> None:
    [finding] = run("macos-fruit-not-on-every-share", explicit=mixed())
    assert [e.section for e in finding.evidence if "without fruit" in e.text] == ["own"]
    # fruit's trio goes above io_uring, which does the I/O at the bottom of the stack.
    assert edits(finding.change) == [("own", "vfs objects", f"acl_xattr {FRUIT} io_uring")]


@pytest.mark.parametrize(
    "explicit",
    [
        conf(data={"path": "/srv/data"}, other={"path": "/srv/other", "vfs objects": "recycle"}),
        conf(global_={"vfs objects": FRUIT}, data={"path": "/srv/data"}),
        conf(),
    ],
    ids=["no fruit anywhere", "fruit everywhere", "no shares"],
)
def test_no_aapl_finding_unless_fruit_is_on_some_shares_but_not_all(
    explicit: dict[str, dict[str, str]],
) -> None:
    assert run("macos-fruit-not-on-every-share", explicit=explicit) == []


def test_the_trio_keeps_other_modules_in_order() -> None:
    assert macos.with_mac_modules(["fruit", "acl_xattr"]) == ["acl_xattr", "catia", "fruit", "streams_xattr"]
    assert macos.with_mac_modules([]) == ["catia", "fruit", "streams_xattr"]


def test_max_access_covers_every_fruit_share_and_quotes_a_recorded_listing() -> None:
    measured = Measurements(dirscale=(DirscalePoint("plain", 10_000, 0.2, 1.5, False),))
    [finding] = run("macos-listing-max-access", explicit=mixed(), measurements=measured)
    assert [e.section for e in finding.evidence if e.kind == "config"] == ["plain"]
    assert any(e.kind == "measurement" and "10,000 files" in e.text for e in finding.evidence)
    assert edits(finding.change) == [("global", "readdir_attr:aapl_max_access", "no")]
    assert "No security is given up" in finding.risk
    assert "--path /Volumes/SHARE --count 10000" in finding.effect_source


def test_max_access_set_in_a_share_is_changed_in_that_share() -> None:
    explicit = conf(mac={"path": "/srv/mac", "vfs objects": FRUIT, "readdir_attr:aapl_max_access": "yes"})
    [finding] = run("macos-listing-max-access", explicit=explicit)
    assert edits(finding.change) == [("mac", "readdir_attr:aapl_max_access", "no")]


def test_ds_store_is_added_to_the_existing_list_with_delete_veto_files() -> None:
    explicit = conf(mac={"path": "/srv/mac", "vfs objects": FRUIT, "veto files": "/Thumbs.db/"})
    [finding] = run("macos-ds-store", explicit=explicit)
    assert edits(finding.change) == [
        ("mac", "veto files", "/Thumbs.db/.DS_Store/"),
        ("mac", "delete veto files", "yes"),
    ]
    assert "._*" in finding.expected_effect  # fruit vetoes those itself
    assert "view settings" in finding.risk


def test_ds_store_stays_silent_where_it_is_vetoed_or_the_list_is_already_long() -> None:
    vetoed = conf(mac={"path": "/srv/mac", "vfs objects": FRUIT, "veto files": "/.ds_store/"})
    assert run("macos-ds-store", explicit=vetoed) == []
    many = "/" + "/".join(f"*.t{i}" for i in range(MANY_NAME_PATTERNS - 1)) + "/"
    long_list = conf(mac={"path": "/srv/mac", "vfs objects": FRUIT, "veto files": many})
    assert run("macos-ds-store", explicit=long_list) == []
    # ... so the pattern-cost rule never has a reason to warn about our line.
    assert run("hide-veto-patterns", explicit=long_list) == []


def all_findings() -> list[Finding]:
    found: list[Finding] = []
    for rule_id in RULES:
        found += run(rule_id, explicit=mixed(), measurements=Measurements())
    return found


def test_every_finding_says_what_it_risks_and_cites_sources() -> None:
    findings = all_findings()
    assert {f.id for f in findings} == set(RULES)
    for finding in findings:
        assert finding.risk.strip(), finding.id
        assert finding.sources, finding.id
        assert any("vfs_fruit" in s for s in finding.sources), finding.id
        if finding.severity == SUGGESTION:
            assert "security" in finding.risk, finding.id


@pytest.mark.testbed  # runs Samba's own testparm
def test_testparm_accepts_the_proposed_changes_and_every_share_gets_fruit(tmp_path: Path) -> None:
    live = (
        "[global]\n\tvfs objects = catia fruit streams_xattr\n"
        f"[plain]\n\tpath = {tmp_path}\n"
        f"[own]\n\tpath = {tmp_path}\n\tvfs objects = acl_xattr io_uring\n"
        f"[printers]\n\tpath = {tmp_path}\n\tprintable = yes\n"
    ).encode()
    path = tmp_path / "smb.conf"
    changed = live
    for finding in all_findings():
        assert isinstance(finding.change, ConfigChange)
        changed = apply_change(changed, finding.change, str(path))
    path.write_bytes(changed)
    result = subprocess.run(["testparm", "-s", "-v", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    sections: dict[str, dict[str, str]] = {}
    current = ""
    for line in result.stdout.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            sections[current] = {}
        elif "=" in line and current:
            name, _, value = line.partition("=")
            sections[current][name.strip()] = value.strip()
    for share in ("plain", "own"):
        stack = (sections[share].get("vfs objects") or sections["global"]["vfs objects"]).split()
        assert stack[stack.index("fruit") + 1] == "streams_xattr", stack
    assert sections["global"]["readdir_attr:aapl_max_access"] == "no"
    # .DS_Store was judged where fruit ran before these changes; advising again adds [own].
    assert sections["plain"]["veto files"] == "/.DS_Store/"
    assert sections["plain"]["delete veto files"] == "Yes"


def test_vfs_objects_is_split_as_samba_splits_it() -> None:
    """Samba's list separators are blanks, commas and semicolons (lib/util/util_strlist.c
    str_list_make_v3 via lp_string_list); a share listing 'catia;fruit;streams_xattr'
    runs fruit and must not be reported as lacking it."""
    assert not run(
        "macos-fruit-not-on-every-share",
        explicit=conf(
            mac={"path": "/srv/mac", "vfs objects": "catia;fruit;streams_xattr"},
            photos={"path": "/srv/photos", "vfs objects": "catia, fruit, streams_xattr"},
        ),
    )


@pytest.mark.testbed  # runs Samba's own testparm
def test_a_share_above_a_late_global_gets_fruit_in_its_own_section(tmp_path: Path) -> None:
    """[early] is defined above [global], so it never sees [global]'s fruit (testparm shows
    its vfs objects empty). Proposing [global]'s line again would change nothing."""
    from sambatune.advisor.gather import explicit_from_file
    from sambatune.conf.testparm_output import dump_by_section
    from sambatune.remote.local import LocalTransport
    from sambatune.remote.samba_ops import run_testparm

    path = tmp_path / "smb.conf"
    path.write_text(
        f"[early]\n\tpath = {tmp_path}\n[global]\n\tvfs objects = {FRUIT}\n[late]\n\tpath = {tmp_path}\n"
    )

    def advise() -> list[Finding]:
        local = LocalTransport()
        explicit = explicit_from_file(local, str(path))
        effective = dump_by_section(run_testparm(local, str(path), verbose=True).dump)
        return run("macos-fruit-not-on-every-share", explicit=explicit, effective=effective)

    [finding] = advise()
    assert edits(finding.change) == [("early", "vfs objects", FRUIT)]
    assert finding.subject == "early"
    assert isinstance(finding.change, ConfigChange)
    path.write_bytes(apply_change(path.read_bytes(), finding.change, str(path)))
    assert advise() == []
