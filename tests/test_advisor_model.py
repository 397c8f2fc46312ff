"""The advisor's model and its agreement with the parameter knowledge and the seeds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from parameter_text_overlap import man_page_text, runs, shared_digests, shared_runs, words
from sambatune.advisor import protocols
from sambatune.advisor.advice import advise
from sambatune.advisor.config_view import (
    ConfigView,
    as_bool,
    as_bytes,
    fold,
    name_list,
    same_value,
)
from sambatune.advisor.findings import (
    INFO,
    PROBLEM,
    SUGGESTION,
    WARNING,
    ClientChange,
    ConfigChange,
    Evidence,
    Finding,
    HostChange,
    describe_change,
    sort_findings,
)
from sambatune.advisor.knowledge import load_knowledge, parse_version
from sambatune.advisor.measurements import Measurements
from sambatune.advisor.rule_data import load_rule_data
from sambatune.advisor.rules import RULE_IDS, durability, io
from sambatune.advisor.rules import protocol as protocol_rules
from sambatune.errors import InvalidInput
from test_advisor_rules import CASES, conf, make_inputs, run
from test_parameter_knowledge import MAN_PAGE, SEED_DIGESTS, seeds_directory

# --- the findings model ------------------------------------------------------------------


def finding(severity: str, rule_id: str = "x", subject: str = "global") -> Finding:
    return Finding(rule_id, severity, "t", subject, (Evidence("config", "e"),), None, "e", "s", "r")


def test_findings_refuse_unknown_severities_and_missing_evidence() -> None:
    with pytest.raises(ValueError):
        finding("critical")
    with pytest.raises(ValueError):
        Finding("x", INFO, "t", "global", (), None, "e", "s", "r")
    with pytest.raises(ValueError):
        ConfigChange("global", "log level", "set")
    with pytest.raises(ValueError):
        ConfigChange("global", "log level", "unset", "1")
    with pytest.raises(ValueError):
        Evidence("rumour", "x")


def test_sorting_is_by_severity_and_stable_within_one() -> None:
    items = [
        finding(INFO, "a"),
        finding(PROBLEM, "b"),
        finding(INFO, "c"),
        finding(SUGGESTION, "d"),
        finding(WARNING, "e"),
        finding(PROBLEM, "f"),
    ]
    assert [f.id for f in sort_findings(items)] == ["b", "f", "e", "d", "a", "c"]


def test_changes_serialise_with_their_kind() -> None:
    recipe = ConfigChange(
        "data", "case sensitive", "set", "yes", also=(ConfigChange("data", "preserve case", "set", "no"),)
    )
    assert recipe.to_json() == {
        "kind": "smb.conf",
        "section": "data",
        "parameter": "case sensitive",
        "action": "set",
        "value": "yes",
        "also": [
            {
                "kind": "smb.conf",
                "section": "data",
                "parameter": "preserve case",
                "action": "set",
                "value": "no",
            }
        ],
    }
    assert "[data] preserve case = no" in recipe.describe()
    assert ClientChange("w", "d", "sambatune client plan").to_json()["kind"] == "client"
    assert HostChange("eth0", "d", "ethtool eth0").to_json()["kind"] == "server-host"


def test_every_face_describes_a_change_from_its_json_as_the_advisor_does() -> None:
    """The CLI, the wizard report and the page show a finding's change from its JSON: the
    words are the change's own describe(), whatever its kind."""
    unset = ConfigChange("global", "socket options", "unset")
    recipe = ConfigChange("data", "case sensitive", "set", "yes", also=(unset,))
    client = ClientChange("window", "a larger receive window", "sambatune client plan")
    host = HostChange("eth0", "turn on jumbo frames", "ip link set eth0 mtu 9000")
    for change in (unset, recipe, client, host, HostChange("net", "check the cable")):
        assert describe_change(change.to_json()) == change.describe()
    assert ConfigChange.from_json(recipe.to_json()) == recipe
    assert recipe.describe() == (
        "[data] case sensitive = yes; [global] remove 'socket options' (back to the default)"
    )


def test_advice_is_sorted_counted_and_serialisable() -> None:
    inputs = make_inputs({"global": {"log level": "3", "read size": "1", "socket options": "SO_RCVBUF=8192"}})
    advice = advise(inputs)
    severities = [f.severity for f in advice.findings]
    assert severities == sorted(severities, key=["problem", "warning", "suggestion", "info"].index)
    assert advice.counts()["problem"] == 1
    data = json.loads(json.dumps(advice.to_json()))
    assert data["samba_version"] == "4.17.12"
    assert {f["id"] for f in data["findings"]} >= {
        "socket-options-fixed-buffers",
        "log-level-high",
        "removed-parameter",
    }
    assert all(f["id"] in RULE_IDS for f in data["findings"])


# --- reading smb.conf mappings -----------------------------------------------------------


def test_config_view_inherits_from_global_and_matches_names_like_samba() -> None:
    view = ConfigView(
        explicit={"Globals": {"Strict  Sync": "no"}, "Data": {"oplocks": "no"}},
        effective={
            "global": {"strict sync": "No", "oplocks": "Yes", "log level": "1"},
            "data": {"oplocks": "No"},
        },
    )
    assert view.sections() == ["global", "data"]
    assert view.value("data", "strict sync") == "no"
    assert view.value("DATA", "oplocks") == "no"
    assert view.value("data", "log level") == "1"
    assert view.set_in("StrictSync") == [("global", "no")]
    assert view.where_set("data", "strict sync") == "global"
    assert view.where_set("data", "log level") is None
    assert view.first_value("global", "smb encrypt", "strict sync") == ("strict sync", "no")


def test_value_spellings() -> None:
    assert [as_bool(v) for v in ("Yes", "true", "1", "on", "No", "off", "Auto", None)] == [
        True,
        True,
        True,
        True,
        False,
        False,
        None,
        None,
    ]
    assert [as_bytes(v) for v in ("16384", "64k", "1M", "x", None)] == [16384, 65536, 1 << 20, None, None]
    assert name_list("/*.tmp/.DS_Store//Thumbs.db/") == ["*.tmp", ".DS_Store", "Thumbs.db"]


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize(
    ("parameter", "text"),
    [
        ("read only", "enabled"),  # the advisor's own parser read this as yes
        ("smb2 max read", "3G"),  # ... and this as 3 GiB
    ],
)
def test_the_advisor_refuses_what_samba_refuses(parameter: str, text: str, tmp_path: Path) -> None:
    """Issue 16, one parser: the advisor used its own as_bool/as_bytes, which took values
    Samba refuses. lib/util/util_str.c set_boolean() knows yes/no/true/false/on/off/1/0 only;
    lib/util/util_str.c conv_str_size_error() plus the INT_MAX check in lib/param/loadparm.c
    refuse sizes of 2 GiB and more. testparm agrees."""
    parse = as_bool if parameter == "read only" else as_bytes
    assert parse(text) is None
    config = tmp_path / "smb.conf"
    config.write_text(f"[global]\n{parameter} = {text}\n")
    assert subprocess.run(["testparm", "-s", str(config)], capture_output=True).returncode != 0


def test_the_advisor_reads_values_like_the_conf_engine() -> None:
    """The advisor's parsers are the conf engine's (sambatune.conf.values, conf.syntax); each
    case below is one where the advisor's own copies used to disagree with Samba."""
    assert as_bytes("+16K") == 16384  # strtoull takes the sign (testparm: 16384)
    assert not same_value("enabled", "yes")  # not a boolean to Samba
    assert same_value("Unix Only", "unixonly")  # enums compare like strwicmp
    # A no-break space is no blank to Samba's isspace(): a different (unknown) name.
    assert fold("max\u00a0xmit") != fold("max xmit") == fold("MaxXmit")
    # source3/lib/util.c set_namearray() keeps a blank pattern between slashes.
    assert name_list("/a/ /b/") == ["a", " ", "b"]
    # lib/util/util_net.c set_socket_options() reads SO_RCVBUF=64K with atoi: 64 bytes.
    [finding] = run(
        "socket-options-fixed-buffers", explicit=conf(global_={"socket options": "SO_RCVBUF=64K"})
    )
    assert "With 64 B buffers" in finding.expected_effect


# --- measurements as JSON ----------------------------------------------------------------


def test_measurements_round_trip_through_json() -> None:
    data = {
        "throughput": {
            "smb_read": {"mean_bytes_per_second": 1.1e8, "source": "bench"},
            "network": {"mean_bytes_per_second": 1.17e8},
        },
        "metadata": {"ops_per_second": 2400},
        "dirscale": [
            {
                "share": "data",
                "files": 20000,
                "open_seconds": 0.7,
                "list_seconds": 1.2,
                "case_sensitive": False,
            }
        ],
        "client_window": {"bytes": 65535, "source": "registry"},
        "path": {"bandwidth_bps": 1e9, "rtt_seconds": 0.0005, "path_mtu": 1500},
    }
    parsed = Measurements.from_json(data)
    assert parsed.path is not None and parsed.path.bdp_bytes == 62500
    again = Measurements.from_json(
        {k: v for k, v in parsed.to_json().items() if k != "path"} | {"path": data["path"]}
    )
    assert again == parsed


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"speed": 1},
        {"throughput": {"smb_read": {"mean_bytes_per_second": -1}}},
        {"throughput": {"ftp": {"mean_bytes_per_second": 1}}},
        {"dirscale": [{"share": "data", "files": 0, "open_seconds": 1, "list_seconds": 1}]},
        {"dirscale": [{"files": 10, "open_seconds": 1, "list_seconds": 1}]},
        {"path": {"bandwidth_bps": 1e9}},
        {"client_window": {"bytes": "64k"}},
    ],
)
def test_bad_measurements_are_refused_with_a_clear_message(bad: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        Measurements.from_json(bad)
    assert caught.value.message.startswith("Measurements:")


# --- agreement with the parameter knowledge ----------------------------------------------


@pytest.mark.parametrize(
    ("version", "parameter"),
    [
        (protocols.SMB1_OFF_BY_DEFAULT, "server min protocol"),
        (durability.STRICT_SYNC_BY_DEFAULT, "strict sync"),
        (io.AIO_BY_DEFAULT, "aio read size"),
        (protocol_rules.MULTICHANNEL_ADDED, "server multi channel support"),
        (protocol_rules.MULTICHANNEL_BY_DEFAULT, "server multi channel support"),
    ],
)
def test_version_thresholds_match_the_parameter_history(
    version: tuple[int, int, int], parameter: str
) -> None:
    history = [v for v, _ in load_knowledge().history(parameter)]
    assert version in history, f"{parameter}: {version} is not in its history {history}"


def test_toggle_min_versions_match_the_parameter_history() -> None:
    knowledge = load_knowledge()
    checked = []
    for entry in load_rule_data().toggles.values():
        if entry.min_version is None:
            continue
        for parameter in entry.parameters:
            history = [v for v, _ in knowledge.history(parameter)]
            assert entry.min_version in history, (
                f"{entry.id}: {entry.min_version} is not in the history of {parameter}: {history}"
            )
            checked.append(entry.id)
    assert {"smb2-leases-off", "strict-sync-off"} <= set(checked)


def test_strict_sync_default_and_strict_sync_off_start_in_the_same_release() -> None:
    assert load_rule_data().toggles["strict-sync-off"].min_version == durability.STRICT_SYNC_BY_DEFAULT


def test_removals_come_from_removed_json() -> None:
    knowledge = load_knowledge()
    removal = knowledge.removal("Read  Size")
    assert removal is not None and removal.removed_in == parse_version("3.0.2")
    assert knowledge.removal("oplocks") is None
    assert "read raw" in knowledge.smb1_only_names()


def test_findings_point_at_explained_parameters_and_cite_their_sources() -> None:
    knowledge = load_knowledge()
    for case in CASES:
        if case.severity is None:
            continue
        for item in run(case.rule, **case.kwargs):
            unexplained = [p for p in item.parameters if not knowledge.explained(p)]
            assert unexplained in ([], ["hostname lookups"]), (case.id, unexplained)
            if item.parameters:
                assert item.sources, f"{case.id}: no sources"


# --- our own words -----------------------------------------------------------------------


def rule_texts() -> list[tuple[str, str]]:
    found = []
    for case in CASES:
        if case.severity is None:
            continue
        for item in run(case.rule, **case.kwargs):
            for name in ("title", "expected_effect", "effect_source", "risk", "applies_to_version"):
                found.append((f"{case.id}.{name}", getattr(item, name)))
            if item.change is not None:
                found.append((f"{case.id}.change", item.change.describe()))
    return found


def test_no_rule_text_repeats_a_run_of_words_from_the_man_page_or_the_seeds() -> None:
    texts = rule_texts()
    assert len(texts) > 300
    seed_digests = set(SEED_DIGESTS.read_text().split())
    copied = [(where, run_) for where, text in texts for run_ in shared_digests(text, seed_digests)]
    assert not copied, f"runs of words copied from the seeds: {copied}"
    if MAN_PAGE.exists():
        man_runs = set(runs(words(man_page_text(MAN_PAGE))))
        copied = [(where, run_) for where, text in texts for run_ in shared_runs(text, man_runs)]
        assert not copied, f"runs of words copied from smb.conf(5): {copied}"


# --- the seeds' tuning lists -------------------------------------------------------------

# Every item of the seeds' "things to tweak" lists -> the rules that judge it today.
# (seed file prefix, words that name the item in the seed, rule ids)
SEED_ITEMS = [
    # Using Samba (1999), appendix B.2.2 "Things to Tweak"
    ("000", "B.2.2.1 Log level", ["log-level-high"]),
    (
        "000",
        "B.2.2.2 Socket options",
        ["socket-options-fixed-buffers", "socket-options-without-nodelay", "socket-options-classic-flags"],
    ),
    ("000", "B.2.2.3 read raw and write raw", ["smb1-raw-disabled", "smb1-parameter-without-smb1"]),
    (
        "000",
        "B.2.2.4 Opportunistic locking",
        ["oplocks-off", "fake-oplocks-on", "kernel-oplocks-on", "smb2-leases-off"],
    ),
    ("000", "B.2.2.5 IP packet size (MTU)", ["nic-mtu-mismatch", "path-mtu-mismatch"]),
    (
        "000",
        "B.2.2.6 The TCP receive window",
        ["client-window-below-bdp", "server-buffers-below-bdp", "tcp-window-scaling-off"],
    ),
    ("000", "B.2.2.7 max xmit", ["smb1-max-xmit-small", "smb1-parameter-without-smb1"]),
    ("000", "B.2.2.8 read size", ["removed-parameter"]),
    ("000", "B.2.2.9 read prediction", ["removed-parameter"]),
    # ... and B.2.3 "Other Samba Options" that cost speed when set wrongly
    ("000", "hide files", ["hide-veto-patterns"]),
    ("000", "strict locking", ["strict-locking-on"]),
    ("000", "strict sync", ["strict-sync-off", "sync-always"]),
    ("000", "sync always", ["sync-always", "sync-always-without-strict-sync"]),
    ("000", "wide links", ["wide-links-on"]),
    ("000", "getwd cache", ["getwd-cache-set", "removed-parameter"]),
    # Samba 2.0.7 Speed.txt (Japanese translation)
    ("004", "OPLOCKS", ["oplocks-off"]),
    ("004", "LEVEL2 OPLOCKS", ["level2-oplocks-off"]),
    ("004", "'fake oplocks'", ["fake-oplocks-on"]),
    ("004", "ソケットオプション", ["socket-options-fixed-buffers", "socket-options-without-nodelay"]),
    ("004", "読み取りサイズ (read size)", ["removed-parameter"]),
    ("004", "転送の最大値 (max xmit)", ["smb1-max-xmit-small", "smb1-parameter-without-smb1"]),
    ("004", "ロッキング (locking)", ["strict-locking-on"]),
    ("004", "共有モード (share modes)", ["removed-parameter"]),
    ("004", "ログのレベル (log level)", ["log-level-high"]),
    ("004", "リンクの追跡 (wide links)", ["wide-links-on"]),
    ("004", "raw モードの読み込み (read raw)", ["smb1-raw-disabled", "smb1-parameter-without-smb1"]),
    ("004", "raw モードの書き込み (write raw)", ["smb1-raw-disabled", "smb1-parameter-without-smb1"]),
    ("004", "先読み (read prediction)", ["removed-parameter"]),
    # mmap reads needed a rebuild; sendfile is today's copy-free read path.
    ("004", "メモリマッピング", ["sendfile-worth-trying", "sendfile-no-effect"]),
    # Slow clients: protocol limits, raw reads and small max xmit.
    ("004", "遅いクライアント", ["protocol-max-below-smb3", "smb1-raw-disabled", "smb1-max-xmit-small"]),
    # Slow logins: `password level` is gone; a DNS lookup per connection remains.
    ("004", "ログインが遅い", ["removed-parameter", "hostname-lookups-on"]),
    ("004", "クライアントのチューニング", ["client-window-below-bdp"]),
]


@pytest.mark.parametrize(("seed", "item", "rule_ids"), SEED_ITEMS, ids=[f"{s}:{i}" for s, i, _ in SEED_ITEMS])
def test_every_seed_tuning_item_maps_to_rules_that_exist_and_fire(
    seed: str, item: str, rule_ids: list[str]
) -> None:
    assert rule_ids
    assert set(rule_ids) <= set(RULE_IDS), f"unknown rules: {set(rule_ids) - set(RULE_IDS)}"
    for rule_id in rule_ids:
        assert any(c.rule == rule_id and c.severity for c in CASES), f"{rule_id} never fires"
    directory = seeds_directory()
    if directory is None:
        pytest.skip("the seed documents are not next to this checkout (set SAMBATUNE_SEEDS)")
    texts = {p.name[:3]: p.read_text(encoding="utf-8") for p in Path(directory).glob("0*.txt")}
    assert item in texts[seed], f"{item!r} is not an item of seed {seed}"


def test_sections_and_dialects_are_matched_as_samba_matches_them() -> None:
    """One folding for the advisor and the conf engine: a share by its lower-cased name
    with its blanks (Samba's [ a ] is not [a]); any spelling of global; enum values
    without case or blanks."""
    from sambatune.advisor.config_view import canonical_section
    from sambatune.advisor.protocols import is_smb1_dialect
    from sambatune.conf.syntax import section_key

    assert canonical_section(" Data ") == section_key(" Data ") == " data "
    assert canonical_section("my\tshare") == "my\tshare"
    assert canonical_section("G L O B A L S") == "global"
    assert is_smb1_dialect("NT 1") and is_smb1_dialect("lanman2") and not is_smb1_dialect("SMB2")
