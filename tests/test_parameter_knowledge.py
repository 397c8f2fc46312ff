"""The parameter knowledge under resources/parameters/ is complete, true for the installed
Samba, and written in our own words.

Checked against the real `testparm` of this machine: every explained name must be a
parameter it knows (or be recorded as removed), and removed names must really be gone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from parameter_text_overlap import (
    RUN_WORDS,
    digests_of,
    man_page_text,
    run_digest,
    runs,
    seed_texts,
    shared_digests,
    shared_runs,
    words,
)
from sambatune.conf.catalog import bundled_versions, load_bundled
from sambatune.packaged import resource

TESTS_DIR = Path(__file__).parent
SEED_DIGESTS = TESTS_DIR / "data" / "seed_shingles.txt"
MAN_PAGE = Path("/usr/share/man/man5/smb.conf.5.gz")

ENTRY_FIELDS = {
    "summary",
    "performance",
    "when_to_change",
    "history",
    "classic_advice",
    "applies_to",
    "sources",
}
ADVICE_FIELDS = {"claim", "source", "verdict", "today"}
VERDICTS = {"obsolete", "holds", "partly", "depends"}
APPLIES_TO = {"all", "smb1"}
REMOVED_FIELDS = {"removed_in", "note", "replacement", "source"}
VERSION = re.compile(r"^\d+\.\d+\.\d+$")

# Issue 3, deliverable 4: every parameter it names, under the name testparm prints.
REQUIRED = [
    "log level",
    "socket options",
    "read raw",
    "write raw",
    "oplocks",
    "level2 oplocks",
    "fake oplocks",
    "kernel oplocks",
    "veto oplock files",
    "max xmit",
    "read size",
    "read prediction",
    "getwd cache",
    "wide links",
    "follow symlinks",
    "hide files",
    "lpq cache time",
    "strict locking",
    "strict sync",
    "sync always",
    "deadtime",
    "share modes",
    "password level",
    "aio read size",
    "aio write size",
    "use sendfile",
    "min receivefile size",
    "server multi channel support",
    "smb2 max read",
    "smb2 max write",
    "smb2 max trans",
    "server min protocol",
    "server max protocol",
    "strict allocate",
    "case sensitive",
    "default case",
    "preserve case",
    "short preserve case",
    "directory name cache size",
    "store dos attributes",
    "ea support",
    "server signing",
    "server smb encrypt",
    "vfs objects",
    "kernel share modes",
    "posix locking",
    "max connections",
    "keepalive",
]
# The seeds' tuning lists: each of these must say what became of the old advice.
CLASSIC = [
    "log level",
    "socket options",
    "read raw",
    "write raw",
    "oplocks",
    "level2 oplocks",
    "fake oplocks",
    "veto oplock files",
    "max xmit",
    "read size",
    "read prediction",
    "getwd cache",
    "wide links",
    "follow symlinks",
    "hide files",
    "lpq cache time",
    "strict locking",
    "strict sync",
    "sync always",
    "deadtime",
    "share modes",
    "password level",
]
# Removed parameters that old tuning material recommends: these are explained in full.
TUNING_REMOVED = {
    "read prediction",
    "read size",
    "share modes",
    "password level",
    "directory name cache size",
    "write cache size",
    "oplock contention limit",
    "getwd cache",
}
# Every parameter Samba 3.6.0 or a later 4.x release had and 4.17 lacks (issue 16): the
# parm_table of source3/param/loadparm.c at samba-3.6.0 and lib/param/param_table.c (from
# 4.4 on generated from docs-xml/smbdotconf) at each samba-4.x.0 tag, checked against the
# "smb.conf changes" tables of the WHATSNEW.txt of each release. `idmap alloc backend` and
# `update encrypted` went in 3.6.0 itself.
REMOVED_SINCE_3_6 = {
    "acl compatibility": "4.0.0",
    "announce as": "4.0.0",
    "announce version": "4.0.0",
    "directory security mask": "4.0.0",
    "display charset": "4.0.0",
    "force directory security mode": "4.0.0",
    "force security mode": "4.0.0",
    "paranoid server security": "4.0.0",
    "printer admin": "4.0.0",
    "security mask": "4.0.0",
    "send spnego principal": "4.0.0",
    "share modes": "4.0.0",
    "time offset": "4.0.0",
    "password level": "4.1.0",
    "set directory": "4.1.0",
    "use ntdb": "4.3.0",
    "only user": "4.5.0",
    "username": "4.5.0",
    "user": "4.5.0",
    "users": "4.5.0",
    "winbindd privileged socket directory": "4.7.0",
    "auth methods": "4.8.0",
    "map untrusted to domain": "4.8.0",
    "oplock contention limit": "4.8.0",
    "profile acls": "4.8.0",
    "use spnego": "4.8.0",
    "winbind trusted domains only": "4.8.0",
    "web port": "4.11.0",
    "rndc command": "4.12.0",
    "write cache size": "4.12.0",
    "ldap ssl ads": "4.13.0",
    "homedir map": "4.15.0",
    "nis homedir": "4.15.0",
    "share backend": "4.15.0",
    "idmap alloc backend": "3.6.0",
    "update encrypted": "3.6.0",
}
# Older ones still found in configurations, with the release that first lacked them.
OLDER_REMOVED = {
    # Present at cvs2svn tag release-2-0-10 (813c618d71f), absent at release-2-2-0
    # (95e5bc384f0): source/param/loadparm.c parm_table.
    "read prediction": "2.2.0",
    "shared mem size": "2.2.0",
    "ole locking compatibility": "2.2.0",
    # WHATSNEW.txt of samba-3.0.2: "read size  removed (unused)".
    "read size": "3.0.2",
    # WHATSNEW.txt of samba-3.0.25 ("lock spin count  Removed", "change notify timeout
    # Removed") and samba-3.2.0 ("mangled map  Removed", "read bmpx  Removed").
    "lock spin count": "3.0.25",
    "change notify timeout": "3.0.25",
    "mangled map": "3.2.0",
    "read bmpx": "3.2.0",
    # WHATSNEW.txt of samba-3.0.0, "Removed Parameters".
    "client code page": "3.0.0",
    "character set": "3.0.0",
    "nt smb support": "3.0.0",
}


def version_tuple(text: str) -> tuple[int, int, int]:
    major, minor, patch = text.split(".")
    return int(major), int(minor), int(patch)


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(resource("parameters", name).read_text("utf-8"))
    return document


@pytest.fixture(scope="module")
def explanations() -> dict[str, Any]:
    return load("explanations.json")


@pytest.fixture(scope="module")
def removed() -> dict[str, Any]:
    return load("removed.json")


@cache
def samba_testparm() -> str:
    path = shutil.which("testparm") or "/usr/bin/testparm"
    if not Path(path).exists():
        pytest.fail("testparm is not installed (Debian: apt-get install samba)")
    return path


@cache
def installed_version() -> tuple[int, int, int]:
    result = subprocess.run([samba_testparm(), "-V"], capture_output=True, text=True, check=True)
    out = result.stdout
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    assert found, f"cannot read a version from {out!r}"
    return int(found[1]), int(found[2]), int(found[3])


@cache
def installed_parameters() -> dict[str, bool]:
    """Every name `testparm --show-all-parameters` knows -> True when it is a synonym."""
    out = subprocess.run(
        [samba_testparm(), "--show-all-parameters"], capture_output=True, text=True, check=True
    ).stdout
    names: dict[str, bool] = {}
    for line in out.splitlines():
        if "=" not in line or line.startswith("["):
            continue
        name, _, rest = line.partition("=")
        names[name.lower()] = "FLAG_SYNONYM" in rest
    assert len(names) > 400, "testparm listed suspiciously few parameters"
    return names


def run_testparm(config: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "smb.conf"
    path.write_text(config)
    return subprocess.run(
        [samba_testparm(), "-s", *extra, str(path)], capture_output=True, text=True, timeout=60
    )


def texts(explanations: dict[str, Any], removed: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) for every sentence we wrote ourselves."""
    found: list[tuple[str, str]] = []
    for name, entry in explanations["parameters"].items():
        for field in ("summary", "performance", "when_to_change"):
            found.append((f"{name}.{field}", entry[field]))
        for item in entry["history"]:
            found.append((f"{name}.history[{item['version']}]", item["change"]))
        for index, item in enumerate(entry["classic_advice"]):
            found.append((f"{name}.classic_advice[{index}].claim", item["claim"]))
            found.append((f"{name}.classic_advice[{index}].today", item["today"]))
    for name, entry in removed["parameters"].items():
        found.append((f"removed:{name}.note", entry["note"]))
    return found


def sentence_count(text: str) -> int:
    plain = re.sub(r"\b(e\.g|i\.e|etc)\.", "", text)
    return len(re.findall(r"[.!?](?=\s|$)", plain))


def assert_text(where: str, value: Any) -> None:
    assert isinstance(value, str), f"{where}: not a string"
    assert value.strip(), f"{where}: empty"
    assert value == value.strip(), f"{where}: leading or trailing blanks"


# --- schema ------------------------------------------------------------------------------


def test_explanations_follow_the_schema(explanations: dict[str, Any]) -> None:
    assert set(explanations) == {"schema", "parameters"}
    assert explanations["schema"] == 1
    assert len(explanations["parameters"]) >= len(REQUIRED)
    for name, entry in explanations["parameters"].items():
        assert name == " ".join(name.split()).lower(), f"{name!r} is not in canonical form"
        assert set(entry) == ENTRY_FIELDS, f"{name}: fields {sorted(entry)}"
        for field in ("summary", "performance", "when_to_change"):
            assert_text(f"{name}.{field}", entry[field])
        assert sentence_count(entry["summary"]) <= 2, f"{name}: summary over two sentences"
        assert entry["applies_to"] in APPLIES_TO, f"{name}: applies_to {entry['applies_to']!r}"
        assert isinstance(entry["history"], list)
        for item in entry["history"]:
            assert set(item) == {"version", "change"}, f"{name}: history item {item}"
            assert VERSION.match(item["version"]), f"{name}: version {item['version']!r}"
            assert_text(f"{name}.history.change", item["change"])
        versions = [version_tuple(item["version"]) for item in entry["history"]]
        assert versions == sorted(versions), f"{name}: history is not in version order"
        assert isinstance(entry["classic_advice"], list)
        for item in entry["classic_advice"]:
            assert set(item) == ADVICE_FIELDS, f"{name}: advice fields {sorted(item)}"
            assert item["verdict"] in VERDICTS, f"{name}: verdict {item['verdict']!r}"
            for field in ("claim", "source", "today"):
                assert_text(f"{name}.classic_advice.{field}", item[field])
        assert isinstance(entry["sources"], list) and entry["sources"], f"{name}: no sources"
        for source in entry["sources"]:
            assert_text(f"{name}.sources", source)


def test_removed_follows_the_schema(removed: dict[str, Any]) -> None:
    assert set(removed) == {"schema", "parameters"}
    assert removed["schema"] == 1
    for name, entry in removed["parameters"].items():
        assert name == " ".join(name.split()).lower(), f"{name!r} is not in canonical form"
        assert set(entry) == REMOVED_FIELDS, f"{name}: fields {sorted(entry)}"
        assert VERSION.match(entry["removed_in"]), f"{name}: removed_in {entry['removed_in']!r}"
        assert_text(f"{name}.note", entry["note"])
        assert_text(f"{name}.source", entry["source"])
        replacement = entry["replacement"]
        assert replacement is None or (isinstance(replacement, str) and replacement.strip())


def test_the_issue_parameters_are_all_explained(explanations: dict[str, Any]) -> None:
    missing = [name for name in REQUIRED if name not in explanations["parameters"]]
    assert not missing, f"not explained: {missing}"


def test_every_classic_parameter_says_what_became_of_the_old_advice(
    explanations: dict[str, Any],
) -> None:
    silent = [name for name in CLASSIC if not explanations["parameters"][name]["classic_advice"]]
    assert not silent, f"no classic advice judged for: {silent}"


def test_removed_tuning_parameters_are_explained(
    explanations: dict[str, Any], removed: dict[str, Any]
) -> None:
    assert set(removed["parameters"]) >= TUNING_REMOVED
    # Old tuning guides still recommend these: each gets a full explanation, not just a note.
    unexplained = TUNING_REMOVED - set(explanations["parameters"])
    assert not unexplained, f"removed but not explained: {sorted(unexplained)}"


@pytest.mark.parametrize(("name", "release"), [*REMOVED_SINCE_3_6.items(), *OLDER_REMOVED.items()])
def test_every_removal_is_known_with_its_release(name: str, release: str, removed: dict[str, Any]) -> None:
    """Issue 16: these showed as plain "unknown" (or with a wrong release) before."""
    entry = removed["parameters"].get(name)
    assert entry is not None, f"{name!r} is missing from removed.json"
    assert entry["removed_in"] == release
    assert name not in installed_parameters()


# --- agreement with the installed Samba ---------------------------------------------------


def test_explained_names_are_canonical_parameters_of_the_installed_samba(
    explanations: dict[str, Any], removed: dict[str, Any]
) -> None:
    known = installed_parameters()
    gone = {
        name
        for name, entry in removed["parameters"].items()
        if version_tuple(entry["removed_in"]) <= installed_version()
    }
    newer = newer_release_parameters()
    for name, entry in explanations["parameters"].items():
        if name in gone:
            continue
        if name not in known and name in newer:
            # A parameter a later release added: canonical there, and the entry says when.
            release, canonical = newer[name]
            assert canonical, f"{name!r} is a synonym in Samba {release}; key it by the canonical name"
            added = version_tuple(entry["history"][0]["version"])
            assert installed_version() < added <= version_tuple(f"{release}.0"), (name, release)
            continue
        assert name in known, (
            f"{name!r} is unknown to testparm {installed_version()}, to every newer bundled "
            "catalog, and not recorded as removed"
        )
        assert not known[name], f"{name!r} is a synonym; key the entry by its canonical name"


def newer_release_parameters() -> dict[str, tuple[str, bool]]:
    """name -> (the oldest bundled release newer than the installed one that has it,
    whether it is canonical there)."""
    found: dict[str, tuple[str, bool]] = {}
    for series in sorted(bundled_versions()):
        if series <= installed_version()[:2]:
            continue
        release = f"{series[0]}.{series[1]}"
        for parameter in load_bundled(f"{release}.0"):
            found.setdefault(parameter.name, (release, True))
            for synonym in parameter.synonyms:
                found.setdefault(synonym.name, (release, False))
    return found


def test_removed_names_are_really_gone_from_the_installed_samba(removed: dict[str, Any]) -> None:
    known = installed_parameters()
    for name, entry in removed["parameters"].items():
        removed_in = version_tuple(entry["removed_in"])
        if removed_in <= installed_version():
            assert name not in known, (
                f"{name!r} is said to be removed in {entry['removed_in']} "
                f"but testparm {installed_version()} still knows it"
            )
        else:
            # Removed only in a later release: this Samba must still have it.
            assert name in known, (
                f"{name!r} is said to exist until {entry['removed_in']} "
                f"but testparm {installed_version()} does not know it"
            )
        if entry["replacement"] is not None:
            assert entry["replacement"].lower() in known, f"{name}: unknown replacement"


# The 4.17 defaults our text quotes: (parameter, `testparm -sv` value, words in our entry).
QUOTED_DEFAULTS = [
    ("deadtime", "10080", "10080"),
    ("max xmit", "16644", "16644"),
    ("lpq cache time", "30", "default is now 30 seconds"),
    ("socket options", "TCP_NODELAY", "default (`TCP_NODELAY`)"),
    ("server min protocol", "SMB2_02", "default SMB2_02"),
    ("smb2 max read", "8388608", "Default 8 MiB"),
    ("smb2 max write", "8388608", "Default 8 MiB"),
    ("smb2 max trans", "8388608", "Default and maximum 8 MiB"),
    ("smb2 max credits", "8192", "Default 8192"),
    ("aio max threads", "100", "Default 100"),
    ("aio read size", "1", "the default 1"),
    ("aio write size", "1", "the default 1"),
    ("strict sync", "Yes", "Keep yes (the default"),
    ("wide links", "No", "default has been no"),
    ("smb1 unix extensions", "Yes", "defaults to yes"),
    ("kernel share modes", "No", "Keep no (the default"),
    ("strict locking", "Auto", "Auto, the default"),
    ("max stat cache size", "512", "Default 512"),
    ("directory name cache size", "100", "default 100"),
    ("max log size", "5000", "The default 5000"),
    ("dns proxy", "Yes", "the default yes"),
    ("block size", "1024", "the default is 1024 bytes"),
    (
        "server smb3 encryption algorithms",
        "AES-128-GCM, AES-128-CCM, AES-256-GCM, AES-256-CCM",
        "By default AES-128-GCM comes first",
    ),
]


@cache
def installed_defaults() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "smb.conf"
        empty.write_text("")
        out = subprocess.run(
            [samba_testparm(), "-s", "-v", str(empty)], capture_output=True, text=True, check=True
        ).stdout
    settings = {}
    for line in out.splitlines():
        name, equals, value = line.partition("=")
        if equals:
            settings[name.strip()] = value.strip()
    return settings


@pytest.mark.parametrize(("parameter", "value", "phrase"), QUOTED_DEFAULTS)
def test_defaults_we_quote_are_the_installed_defaults(
    parameter: str, value: str, phrase: str, explanations: dict[str, Any]
) -> None:
    entry = explanations["parameters"][parameter]
    text = " ".join(
        [entry["summary"], entry["performance"], entry["when_to_change"]]
        + [item["today"] for item in entry["classic_advice"]]
    )
    assert phrase in text, f"{parameter}: the entry does not state its default ({phrase!r})"
    if installed_version()[:2] != (4, 17):
        pytest.skip("the explanations quote Samba 4.17 defaults")
    assert installed_defaults()[parameter] == value


def test_claims_about_old_spellings_hold_on_the_installed_samba(tmp_path: Path) -> None:
    """The entries tell admins what testparm does with lines from old guides."""
    result = run_testparm("[global]\nlpq cache = 30\nread size = 16384\n", tmp_path)
    assert 'Unknown parameter encountered: "lpq cache"' in result.stderr
    assert 'Unknown parameter encountered: "read size"' in result.stderr

    result = run_testparm("[global]\nsocket options = TCP_NODELAY SO_RCVBUF=65536\n", tmp_path)
    assert "SO_RCVBUF" in result.stdout + result.stderr
    assert "auto-tuning" in result.stdout + result.stderr

    if installed_version() >= (4, 15, 0):
        result = run_testparm("[global]\nserver max protocol = SMB2_24\n", tmp_path)
        assert "Error loading services" in result.stdout + result.stderr


# --- our own words -----------------------------------------------------------------------


def test_no_explanation_repeats_a_run_of_words_from_the_man_page(
    explanations: dict[str, Any], removed: dict[str, Any]
) -> None:
    if not MAN_PAGE.exists():
        pytest.skip(f"{MAN_PAGE} is not installed")
    man_words = words(man_page_text(MAN_PAGE))
    assert len(man_words) > 50_000, "the man page was not read properly"
    man_runs = set(runs(man_words))
    # The detector itself must work: a run taken from the man page is found.
    probe = " ".join(man_words[20_000 : 20_000 + RUN_WORDS])
    assert shared_runs(f"Intro. {probe.upper()}, end.", man_runs) == [probe]
    copied = [
        (where, run) for where, text in texts(explanations, removed) for run in shared_runs(text, man_runs)
    ]
    assert not copied, f"{RUN_WORDS}-word runs copied from smb.conf(5): {copied}"


def test_no_explanation_repeats_a_run_of_words_from_the_seeds(
    explanations: dict[str, Any], removed: dict[str, Any]
) -> None:
    seed_digests = set(SEED_DIGESTS.read_text().split())
    assert len(seed_digests) > 5_000, "the seed fingerprints look truncated"
    copied = [
        (where, run)
        for where, text in texts(explanations, removed)
        for run in shared_digests(text, seed_digests)
    ]
    assert not copied, f"{RUN_WORDS}-word runs copied from the seeds: {copied}"


def seeds_directory() -> Path | None:
    configured = os.environ.get("SAMBATUNE_SEEDS")
    if configured:
        return Path(configured)
    for parent in TESTS_DIR.resolve().parents:
        candidate = parent / "shared" / "seeds"
        if candidate.is_dir():
            return candidate
    return None


def test_seed_fingerprints_match_the_seeds_when_they_are_at_hand() -> None:
    seed_dir = seeds_directory()
    if seed_dir is None:
        pytest.skip("the seed documents are not next to this checkout (set SAMBATUNE_SEEDS)")
    live = digests_of(seed_texts(seed_dir))
    assert live, f"no seed files in {seed_dir}"
    assert live == set(SEED_DIGESTS.read_text().split()), (
        "tests/data/seed_shingles.txt is stale: rebuild it with "
        "`python tests/parameter_text_overlap.py SEED_DIR > tests/data/seed_shingles.txt`"
    )
    probe = words(seed_texts(seed_dir)[0])[100 : 100 + RUN_WORDS]
    assert run_digest(tuple(probe)) in live


# --- issue 16: knowledge corrections, each test names the source it checks against ------------

ISSUE_16_EXPLAINED = ["max log size", "dns proxy", "block size"]


def entry_text(entry: dict[str, Any]) -> str:
    return " ".join(
        [entry["summary"], entry["performance"], entry["when_to_change"]]
        + [item["change"] for item in entry["history"]]
        + [item["today"] for item in entry["classic_advice"]]
    )


@pytest.mark.parametrize("name", ISSUE_16_EXPLAINED)
def test_parameters_missing_until_issue_16_are_explained(name: str, explanations: dict[str, Any]) -> None:
    assert name in explanations["parameters"], f"{name} has no explanation"
    assert name in installed_parameters()


def test_allocation_roundup_size_applies_to_smb2_and_smb3(explanations: dict[str, Any]) -> None:
    """Samba source: source3/smbd/smb2_trans2.c smb_roundup() rounds for every client except
    those recognised as Samba or CIFS during an SMB1 negotiate (smb1_negprot.c is the only
    caller of set_remote_arch), and source3/modules/vfs_default.c vfswrap_get_alloc_size()
    applies it to every allocation size smbd reports. tests/test_parameter_facts_smbd.py sees
    it over SMB 3.1.1."""
    entry = explanations["parameters"]["allocation roundup size"]
    assert entry["applies_to"] == "all"
    assert "every SMB2/3 client" in entry["performance"]
    assert "Only ever helped old SMB1 clients" not in entry["performance"]


def test_smb1_unix_extensions_is_not_smb1_only(explanations: dict[str, Any]) -> None:
    """Samba source: source3/param/loadparm.c lp_widelinks() returns false while
    lp_smb1_unix_extensions() is on and allow insecure wide links is off, for every share
    and protocol; smb1 unix extensions defaults to yes (testparm -sv, 4.17.12)."""
    entry = explanations["parameters"]["smb1 unix extensions"]
    assert entry["applies_to"] == "all"
    assert "ignores `wide links = yes` on every share" in entry["summary"]
    assert installed_defaults()["smb1 unix extensions"] == "Yes"


def test_deadtime_zero_meant_one_week_before_4_11(explanations: dict[str, Any]) -> None:
    """Samba source: source3/smbd/conn_idle.c conn_idle_all() up to 4.10 replaced a deadtime
    of 0 by DEFAULT_SMBD_TIMEOUT (60*60*24*7 seconds, source3/include/local.h; the same in
    2.0.7's process.c); commit 5ac626e7b05 (4.11) made 10080 the default and 0 'never'."""
    entry = explanations["parameters"]["deadtime"]
    text = entry_text(entry)
    assert "from 0 (never)" not in text
    assert "smbd treated 0 as one week" in text
    [change] = entry["history"]
    assert change["version"] == "4.11.0" and "0 now really means never" in change["change"]


def test_max_open_files_keeps_a_value_that_is_set(explanations: dict[str, Any], tmp_path: Path) -> None:
    """Samba source: source3/param/loadparm.c max_open_files() lifts only the computed
    default to MIN_OPEN_FILES_WINDOWS (16384); a set value reaches lp_max_open_files() and
    source3/smbd/files.c file_init_global() unchanged. testparm shows it."""
    result = run_testparm("[global]\nmax open files = 1000\n", tmp_path, "--parameter-name", "max open files")
    assert result.stdout.strip() == "1000"
    entry = explanations["parameters"]["max open files"]
    assert "refuses values below" not in entry_text(entry)
    assert "used as written, even a low one" in entry["summary"]
    assert "at 100 or less smbd panics at start" in entry["summary"]  # test_apply_effect.py


def test_max_log_size_counts_kibibytes(explanations: dict[str, Any]) -> None:
    """Samba source: lib/util/debug.c compares the log's size with max_log_size * 1024, while
    testparm --show-all-parameters types the parameter P_BYTES (so a suffix multiplies KiB);
    smb.conf(5) of 4.17.12 calls it an integer in kilobytes."""
    assert (
        "max log size=P_BYTES"
        in subprocess.run([samba_testparm(), "--show-all-parameters"], capture_output=True, text=True).stdout
    )
    entry = explanations["parameters"]["max log size"]
    assert "in KiB" in entry["summary"] and "`max log size = 1M` means 1 GiB" in entry["summary"]


def test_smb2_max_read_and_write_are_not_capped_at_8_mib(explanations: dict[str, Any]) -> None:
    """Samba source: source3/smbd/smb2_negprot.c caps them at max_limit = 0xFFFF00 for SMB 2.1
    and later over port 445 (64 KiB otherwise); smb.conf(5)'s 'maximum 8 MiB' is out of date.
    tests/test_parameter_facts_smbd.py sees 16,776,960 bytes offered for 16M."""
    for name in ("smb2 max read", "smb2 max write"):
        entry = explanations["parameters"][name]
        assert "maximum 8 MiB" not in entry_text(entry)
        assert "up to 16 MiB minus 256 bytes" in entry["performance"]


def protocol_values() -> list[str]:
    out = subprocess.run(
        [samba_testparm(), "--show-all-parameters"], capture_output=True, text=True, check=True
    ).stdout
    [line] = [line for line in out.splitlines() if line.startswith("server max protocol=")]
    return line.split(",")[1].split("|")


@pytest.mark.parametrize("name", ["server min protocol", "server max protocol"])
def test_protocol_explanations_name_every_value_testparm_accepts(
    name: str, explanations: dict[str, Any]
) -> None:
    """testparm --show-all-parameters lists every spelling; lib/param/param_table.c
    enum_protocol maps SMB2 to PROTOCOL_SMB2_10 and SMB3 to PROTOCOL_SMB3_11."""
    values = protocol_values()
    assert {"SMB3_11", "SMB2_10", "SMB2", "SMB3", "CORE+"} <= set(values)
    entry = explanations["parameters"][name]
    text = entry["summary"] + " " + entry["when_to_change"]
    missing = [value for value in values if not re.search(rf"(?<![\w+]){re.escape(value)}(?![\w+])", text)]
    assert not missing, f"{name} does not mention {missing}"
    assert "SMB2_10 (or SMB2)" in text and "SMB3_11 (or SMB3)" in text


def test_min_receivefile_size_is_no_longer_capped_at_128_kib(explanations: dict[str, Any]) -> None:
    """Samba source: commit 74f8c3568a5 (2014, first in 4.2.0) removed MIN(..., BUFFER_SIZE)
    from source3/param/loadparm.c lp_min_receive_file_size(); smb.conf(5)'s 128k limit is
    out of date. Signed writes never qualify (smb2_server.c is_smb2_recvfile_write())."""
    entry = explanations["parameters"]["min receivefile size"]
    assert "cut to 128 KiB" not in entry["summary"]
    assert [item["version"] for item in entry["history"]] == ["4.2.0"]
    assert "`server signing = mandatory`" in entry["performance"]
