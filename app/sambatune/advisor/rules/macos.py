"""Mac clients: Apple's SMB extensions (AAPL) through vfs_fruit, and what listings cost.

A share is taken to serve Macs when `fruit` is in its effective `vfs objects`. The
client audit cannot tell a Mac from another client (smbstatus prints no client OS), so
these rules go by the configuration alone.

What the Samba 4.17.12 source shows, and the rules build on:
- A Mac asks for AAPL in a create context; smbd answers only through a share that runs
  fruit (vfs_fruit.c check_aapl, called from fruit_create_file), and the answer is kept
  for the whole connection (``global_fruit_config.nego_aapl``, one smbd per connection).
  vfs_fruit(8) warns that a first tree connect to a share without fruit leaves the Mac
  without AAPL everywhere.
- With AAPL, every listed entry gets Mac metadata (fruit_freaddir_attr); by default that
  includes the user's maximum access, computed from the entry's ACL
  (smbd_calculate_access_mask_fsp), which `readdir_attr:aapl_max_access = no` skips.
- `fruit:metadata = stream` is no listing speed-up: it reads FinderInfo by opening the
  stream, where the default netatalk reads one extended attribute
  (readdir_attr_meta_finderi_stream / _netatalk). No rule proposes it for speed.
- With the default `fruit:resource = file`, fruit adds `/._*/` to the share's veto files
  itself (fruit_connect, fruit:veto_appledouble), so only `.DS_Store` is left to veto.
"""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool, canonical_section, name_list
from sambatune.advisor.findings import (
    INFO,
    MEASUREMENT,
    SUGGESTION,
    WARNING,
    ConfigChange,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import rule
from sambatune.advisor.rules.io import vfs_stack
from sambatune.conf.lint import MANY_NAME_PATTERNS
from sambatune.units import format_seconds

#: The stack vfs_fruit(8) asks for, in its order: catia maps the characters Macs
#: substitute, fruit sits above streams_xattr, which stores the streams.
MAC_MODULES = ("catia", "fruit", "streams_xattr")
#: Modules that do the I/O at the bottom of a stack: fruit's trio goes above them.
BOTTOM_MODULES = {"io_uring", "glusterfs", "ceph", "ceph_new"}
MAX_ACCESS = "readdir_attr:aapl_max_access"
DS_STORE = ".DS_Store"

FRUIT_MAN_PAGE = "vfs_fruit(8) of Samba 4.17.12"
FRUIT_SOURCE = "Samba source, source3/modules/vfs_fruit.c (Samba 4.17.12)"
APPLE_DS_STORE = (
    "Apple Support: Adjust SMB browsing behavior in macOS (DSDontWriteNetworkStores stops "
    ".DS_Store files on network shares)"
)
MEASURE_FROM_A_MAC = (
    "SambaTune's own SMB client does not ask for AAPL, so only a Mac shows the difference: "
    "on a Mac with the share mounted, put 10,000 files in a test directory and time their "
    "listing with `sambatune bench files --path /Volumes/SHARE --count 10000` (the list step "
    "lists the whole directory 10 times) before and after; `sambatune bench files --server "
    "H --share S --count 10000` from any computer measures the same listing without AAPL."
)


def _printable(inputs: AdvisorInput, share: str) -> bool:
    value = inputs.config.value(share, "printable") or inputs.config.value(share, "print ok")
    return share == "printers" or as_bool(value) is True


def _shares(inputs: AdvisorInput) -> list[str]:
    """The file shares (print shares never hold a Mac's files)."""
    return [s for s in inputs.config.shares() if not _printable(inputs, s)]


def uses_fruit(inputs: AdvisorInput, section: str) -> bool:
    return "fruit" in vfs_stack(inputs.config.value(section, "vfs objects"))


def fruit_shares(inputs: AdvisorInput) -> list[str]:
    return [s for s in _shares(inputs) if uses_fruit(inputs, s)]


def with_mac_modules(modules: list[str]) -> list[str]:
    """``modules`` with catia, fruit and streams_xattr in vfs_fruit(8)'s order, placed
    above any module that does the I/O itself; the other modules keep their order."""
    rest = [m for m in modules if m not in MAC_MODULES]
    at = next((i for i, m in enumerate(rest) if m in BOTTOM_MODULES), len(rest))
    return rest[:at] + list(MAC_MODULES) + rest[at:]


def _vfs_change(inputs: AdvisorInput, section: str) -> ConfigChange:
    current = vfs_stack(inputs.config.value(section, "vfs objects"))
    return ConfigChange(section, "vfs objects", "set", " ".join(with_mac_modules(current)))


def _bundle(edits: list[ConfigChange]) -> ConfigChange:
    first, rest = edits[0], tuple(edits[1:])
    return ConfigChange(first.section, first.parameter, first.action, first.value, also=rest)


def _listing_evidence(inputs: AdvisorInput, shares: list[str]) -> list[Evidence]:
    """The user's own listing figures of these shares: directory-scaling runs, and the
    small-file test's listings (SambaTune's client asks for no AAPL, so that is the
    listing without Apple's extensions, the figure a Mac's own run is set against)."""
    wanted = {canonical_section(s) for s in shares}
    evidence = [
        Evidence(
            MEASUREMENT,
            f"directory-scaling run on [{p.share}]: listing {p.files:,} files took "
            f"{format_seconds(p.list_seconds)}",
        )
        for p in inputs.measurements.dirscale
        if canonical_section(p.share) in wanted
    ][:3]
    listing = inputs.measurements.listing
    if listing is not None and canonical_section(listing.share) in wanted:
        evidence.append(Evidence(MEASUREMENT, listing.sentence()))
    return evidence


@rule("macos-fruit-not-on-every-share", "macos")
def fruit_not_on_every_share(inputs: AdvisorInput) -> Iterator[Finding]:
    with_fruit = fruit_shares(inputs)
    if not with_fruit:
        return
    lacking = [s for s in _shares(inputs) if not uses_fruit(inputs, s)]
    if not lacking:
        return
    # A share with no vfs objects of its own takes [global]'s: one [global] edit covers
    # all of those. A share with its own line needs its own edit, and so does one defined
    # above a late [global]: it kept the default of its time (testparm shows it empty).
    inheriting = [s for s in lacking if inputs.config.own_value(s, "vfs objects") is None]
    edits = [_vfs_change(inputs, GLOBAL)] if inheriting else []
    edits += [_vfs_change(inputs, s) for s in lacking if s not in inheriting]
    evidence = [
        Evidence.setting(s, "vfs objects", inputs.config.value(s, "vfs objects") or "", note="in effect")
        for s in with_fruit[:3]
    ]
    evidence += [
        Evidence(
            "config",
            f"[{s}] runs without fruit (vfs objects = {inputs.config.value(s, 'vfs objects') or 'none'})",
            s,
            "vfs objects",
            inputs.config.value(s, "vfs objects") or "",
        )
        for s in lacking
    ]
    yield Finding(
        id="macos-fruit-not-on-every-share",
        severity=WARNING,
        title=f"{len(lacking)} share(s) lack vfs_fruit while {len(with_fruit)} have it: a Mac may lose "
        "Apple's extensions on all of them",
        subject=GLOBAL if inheriting else lacking[0],
        evidence=tuple(evidence),
        change=_bundle(edits),
        expected_effect=(
            "Whichever share a Mac opens first, it gets Apple's SMB extensions for the whole "
            "connection: listings that carry each entry's Mac metadata (no extra request per "
            "file in the Finder) and UNIX modes. Today a Mac whose first "
            "share is one of those without fruit works without them on every share until it "
            "reconnects, which makes browsing large folders much slower."
        ),
        effect_source=(
            "How smbd negotiates AAPL (vfs_fruit(8) and vfs_fruit.c: the answer comes only from "
            "a share running fruit and then holds for the connection); not measured here. "
            + MEASURE_FROM_A_MAC
        ),
        risk=(
            "Nothing is given up in security. On the shares that gain fruit, Macs store their "
            "metadata and resource forks as streams in extended attributes (streams_xattr): the "
            "filesystem under those shares must support user extended attributes. Try the "
            "change on one share first if other programs read the files directly."
        ),
        applies_to_version="vfs_fruit, with AAPL, arrived in Samba 4.2 (WHATSNEW 4.2.0).",
        parameters=("vfs objects",),
        sources=(*inputs.sources("vfs objects"), FRUIT_MAN_PAGE, FRUIT_SOURCE),
    )


@rule("macos-listing-max-access", "macos")
def listing_max_access(inputs: AdvisorInput) -> Iterator[Finding]:
    shares = [s for s in fruit_shares(inputs) if as_bool(inputs.config.value(s, MAX_ACCESS)) is not False]
    if not shares:
        return
    evidence = [
        Evidence(
            "config",
            f"[{s}] runs fruit with {MAX_ACCESS} = "
            f"{inputs.config.value(s, MAX_ACCESS) or 'yes (the default)'}",
            s,
            MAX_ACCESS,
            inputs.config.value(s, MAX_ACCESS) or "yes",
        )
        for s in shares
    ]
    evidence += _listing_evidence(inputs, shares)
    # Where no share sets the option itself, one [global] line covers every share.
    own = [s for s in shares if inputs.config.explicit_value(s, MAX_ACCESS) is not None]
    edits = [ConfigChange(GLOBAL, MAX_ACCESS, "set", "no")] if len(own) < len(shares) else []
    edits += [ConfigChange(s, MAX_ACCESS, "set", "no") for s in own]
    yield Finding(
        id="macos-listing-max-access",
        severity=SUGGESTION,
        title="Mac listings compute each entry's access rights (readdir_attr:aapl_max_access)",
        subject=GLOBAL if len(own) < len(shares) else shares[0],
        evidence=tuple(evidence),
        change=_bundle(edits),
        expected_effect=(
            "When a Mac lists a folder, smbd stops working out the user's effective rights on "
            "every entry (reading its ACL, or mapping its mode, and checking it) and reports "
            "full rights instead: a 10,000-file folder saves 10,000 of those per listing."
        ),
        effect_source=(
            "vfs_fruit.c (fruit_freaddir_attr calls smbd_calculate_access_mask_fsp per entry "
            "unless the option is off) and vfs_fruit(8), which calls the computation "
            "expensive; not measured here. " + MEASURE_FROM_A_MAC
        ),
        risk=(
            "No security is given up: smbd still checks access on every open, so a user can "
            "do nothing more than before. What changes is the Finder's picture: it shows "
            "read-only files and folders as writable, so the refusal comes when the user "
            "tries to save, not as a lock badge beforehand."
        ),
        applies_to_version="The readdir_attr options are read per share by vfs_fruit (on by "
        "default); they matter only for clients that negotiated AAPL.",
        parameters=("vfs objects",),
        sources=(FRUIT_MAN_PAGE, FRUIT_SOURCE),
    )


def _has_ds_store(value: str | None) -> bool:
    return any(p.lower() == DS_STORE.lower() for p in name_list(value))


@rule("macos-ds-store", "macos")
def ds_store(inputs: AdvisorInput) -> Iterator[Finding]:
    """Finder writes a .DS_Store into every folder it shows; vetoing it is a trade-off."""
    shares = []
    for share in fruit_shares(inputs):
        current = inputs.config.value(share, "veto files")
        # One pattern more must not push the list to where the hide-veto-patterns rule
        # warns about its cost.
        if _has_ds_store(current) or len(name_list(current)) + 1 >= MANY_NAME_PATTERNS:
            continue
        shares.append(share)
    if not shares:
        return
    edits: list[ConfigChange] = []
    for share in shares:
        current = inputs.config.value(share, "veto files") or ""
        patterns = [*name_list(current), DS_STORE]
        edits.append(ConfigChange(share, "veto files", "set", "/" + "/".join(patterns) + "/"))
        if as_bool(inputs.config.value(share, "delete veto files")) is not True:
            edits.append(ConfigChange(share, "delete veto files", "set", "yes"))
    yield Finding(
        id="macos-ds-store",
        severity=INFO,
        title="Macs write a .DS_Store file into every folder they open on "
        + ", ".join(f"[{s}]" for s in shares),
        subject=shares[0],
        evidence=tuple(
            Evidence(
                "config",
                f"[{s}] runs fruit; veto files = {inputs.config.value(s, 'veto files') or 'nothing'}",
                s,
                "veto files",
                inputs.config.value(s, "veto files") or "",
            )
            for s in shares
        ),
        change=_bundle(edits),
        expected_effect=(
            "The Finder can no longer create .DS_Store files there: browsing stops writing a "
            "small file into each folder, and listings on every client stop showing them. "
            "`delete veto files = yes` lets a folder that still holds an old .DS_Store be "
            "deleted (otherwise smbd reports it as not empty). The `._*` AppleDouble files "
            "need no line: with the default fruit:resource = file, fruit vetoes them itself, "
            "and vetoing them by hand breaks unpacking Mac archives and rsync."
        ),
        effect_source=(
            "Not measured. One veto pattern is checked against every name looked up or "
            "listed; SambaTune's measurement on Samba 4.17.12 found 6 patterns within noise "
            "when listing 20,000 files, so one more costs next to nothing. " + MEASURE_FROM_A_MAC
        ),
        risk=(
            "No security is given up. Macs lose the Finder view settings of these folders "
            "(icon positions, view style, sort order) and start from the defaults each time. "
            "Setting DSDontWriteNetworkStores on the Macs stops the files without any server "
            "change; that is the alternative when the view settings matter."
        ),
        parameters=("veto files",),
        sources=(*inputs.sources("veto files"), FRUIT_MAN_PAGE, FRUIT_SOURCE, APPLE_DS_STORE),
    )
