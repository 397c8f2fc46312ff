"""Directory leases (Samba 4.22 and newer): faster repeated listings, later news of changes.

smbd works out whether it offers them from four global settings (source3/param/loadparm.c,
lp_smb3_directory_leases): ``smb3 directory leases`` itself (yes, no, or auto = "unless
clustering"), and ``smb2 leases``, ``oplocks`` and ``kernel oplocks`` as [global] has them.
The advisor says which way it came out and what that trades; it proposes a change only
where a line works against the rest of the configuration.
"""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool
from sambatune.advisor.findings import INFO, VERSION, ConfigChange, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.advisor.rule import rule
from sambatune.conf.syntax import name_key

#: The release that brought directory leases and their switch (WHATSNEW 4.22.0).
DIRECTORY_LEASES_ADDED: Version = (4, 22, 0)
PARAMETER = "smb3 directory leases"
SOURCES = (
    "smb.conf(5) of Samba 4.22: smb3 directory leases "
    "(Samba source, docs-xml/smbdotconf/locking/smb3directoryleases.xml)",
    "Samba 4.22 release notes (WHATSNEW)",
    "Samba source, source3/param/loadparm.c (lp_smb3_directory_leases, lp_strict_rename)",
    "Samba source, commit ae3e9dde4c5 (why auto turns them off on a cluster)",
    "Samba source, source3/smbd/notify.c and source3/smbd/smb2_oplock.c (which changes break a lease)",
)
#: NAS systems that ship with them switched off, as their own publications say.
VENDOR_SOURCES = (
    "TrueNAS middleware pull requests 17337/17339 (NAS-137437, TrueNAS 25.10.0): turned off "
    "after a performance regression in the vendor's benchmarks",
    "Unraid OS 7.2.0 release announcement (29 October 2025): its SMB configuration sets them to no",
)

MEASUREMENT_PLAN = (
    "What it saves depends on how often the same folders are listed. The small-file "
    "benchmark lists one directory ten times in its list step, and SambaTune's own SMB "
    "client takes a directory lease where the server offers one, as current Windows does: "
    "run `sambatune bench files --server H --share S --count 2000 --runs 5` once as it is "
    "and once with the setting switched, and compare the list rates (the result says "
    "how many listings the server answered). Measured on Samba 4.25.1 on loopback "
    "(bench/directory_leases.py, 2,000 files, median of 3): 175 listings/s with the "
    "lease, 16.0/s without. Only a measurement of the user's own workload, through their "
    "own clients (`--path MOUNTED_SHARE`), settles whether that matters to them."
)
STALENESS = (
    "smbd breaks a directory lease only when the change goes through smbd. A file created, "
    "deleted or changed on the server by anything else (a local program, an NFS export of the "
    "same path, a sync tool) does not reach the clients that cached the listing, which may show "
    "the old contents until the lease ends for another reason. Where the same data is changed "
    "outside Samba, switching them off (`smb3 directory leases = no`) keeps listings current."
)
#: What the vendors we can cite did, and the one reason one of them gave.
VENDORS = (
    "Some NAS systems ship them off: TrueNAS 25.10 (after a performance regression in the "
    "vendor's own benchmarks) and Unraid 7.2."
)
TRADE = (
    "With a directory lease a client may keep a directory's listing and the metadata of its "
    "entries in its own cache and answer repeated listings without asking the server, until "
    "smbd tells it the directory changed. Programs that list the same folders again and again "
    "(file managers, build tools, scans) save round trips. The price on the server: smbd tracks "
    "the leases, sends a break on each change, and turns on strict rename for every share, "
    "which makes renaming a directory check for open files below it."
)


def _mode(value: str) -> str | None:
    """``yes``, ``no`` or ``auto`` as Samba reads the enum; None for a value it refuses."""
    if name_key(value) == "auto":
        return "auto"
    meaning = as_bool(value)
    return None if meaning is None else ("yes" if meaning else "no")


def _global_setting(inputs: AdvisorInput, name: str, default: str) -> tuple[str, bool]:
    """(value in effect, whether the file sets it) for a global parameter."""
    written = inputs.config.explicit_value(GLOBAL, name)
    if written is not None:
        return written, True
    return inputs.config.global_value(name) or default, False


@rule("directory-leases", "locking")
def directory_leases(inputs: AdvisorInput) -> Iterator[Finding]:
    if not inputs.at_least(DIRECTORY_LEASES_ADDED):
        return
    value, written = _global_setting(inputs, PARAMETER, "auto")
    mode = _mode(value)
    if mode is None:
        return  # testparm refuses the value; lint reports it
    clustering = as_bool(inputs.config.global_value("clustering")) is True
    blockers = [
        Evidence.setting(GLOBAL, name, shown)
        for name, shown, blocking in (
            ("smb2 leases", inputs.config.global_value("smb2 leases") or "yes", False),
            ("oplocks", inputs.config.global_value("oplocks") or "yes", False),
            ("kernel oplocks", inputs.config.global_value("kernel oplocks") or "no", True),
        )
        if as_bool(shown) is blocking
    ]
    setting = Evidence.setting(GLOBAL, PARAMETER, value, note="set in the file" if written else "the default")
    evidence = [setting, Evidence(VERSION, f"{inputs.version_label()}: directory leases exist since 4.22")]
    change: ConfigChange | None = None
    offered = False
    if mode == "no":
        title = f"Directory leases are off (smb3 directory leases = {value})"
        effect = f"{TRADE} Here clients get none of this: every listing asks the server. {VENDORS}"
    elif mode == "auto" and clustering:
        title = "Directory leases are off: this is a cluster and the setting is auto"
        evidence.append(Evidence.setting(GLOBAL, "clustering", "yes"))
        effect = (
            f"{TRADE} On a cluster Samba leaves them off by default: the strict rename they "
            "force would add load on every node."
        )
    elif blockers:
        names = " and ".join(e.text for e in blockers)
        title = (
            f"smb3 directory leases = {value} has no effect: {names}"
            if mode == "yes"
            else f"Directory leases are off because {names}"
        )
        evidence += blockers
        effect = (
            f"{TRADE} smbd offers them only with smb2 leases and oplocks on and kernel oplocks "
            "off in [global], so clients get none of this here."
        )
    else:
        offered = True
        title = "Directory leases are on: clients may cache directory listings"
        effect = TRADE
        if mode == "yes" and clustering:
            title = "Directory leases are forced on in a cluster"
            evidence.append(Evidence.setting(GLOBAL, "clustering", "yes"))
            effect = (
                f"{TRADE} Samba's own default (auto) leaves them off on a cluster because the "
                "strict rename they force adds load on every node; this line overrides that. "
                "Going back to auto switches them off, unless a measurement on this cluster "
                "showed they pay."
            )
            change = ConfigChange(GLOBAL, PARAMETER, "unset")
    yield Finding(
        id="directory-leases",
        severity=INFO,
        title=title,
        subject=GLOBAL,
        evidence=tuple(evidence),
        change=change,
        expected_effect=effect,
        effect_source=MEASUREMENT_PLAN,
        risk=f"{STALENESS} {VENDORS}" if offered else f"None while they stay off. Switched on: {STALENESS}",
        applies_to_version=(
            f"{inputs.version_label()}: 4.22 added directory leases, on by default unless clustering = yes."
        ),
        parameters=("smb2 leases", "oplocks", "kernel oplocks"),
        sources=tuple(dict.fromkeys((*SOURCES, *inputs.sources("smb2 leases"), *VENDOR_SOURCES))),
    )
