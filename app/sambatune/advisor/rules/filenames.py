"""File names and directories: wide links, hide/veto patterns, huge directories and case."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import (
    GLOBAL,
    as_bool,
    canonical_section,
    name_list,
    same_value,
)
from sambatune.advisor.findings import (
    INFO,
    SUGGESTION,
    WARNING,
    ConfigChange,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.measurements import DirscalePoint
from sambatune.advisor.rule import back_to_default, rule
from sambatune.conf.lint import MANY_NAME_PATTERNS
from sambatune.units import format_seconds

#: Past this many patterns a hide/veto list is a warning, not a suggestion (listing took
#: 1.7-2x as long); lint's MANY_NAME_PATTERNS is where both start to speak.
TOO_MANY_PATTERNS = 100
#: A directory this big is where case-insensitive lookups start to hurt.
LARGE_DIRECTORY = 10_000
#: Lookup time growing at least half as fast as the file count means smbd scans.
SCAN_GROWTH = 0.5

RECIPE = (
    ("case sensitive", "yes"),
    ("default case", "lower"),
    ("preserve case", "no"),
    ("short preserve case", "no"),
)
RECIPE_DEFAULTS = {
    "case sensitive": "auto",
    "default case": "lower",
    "preserve case": "yes",
    "short preserve case": "yes",
}
_RENAME_FIRST = (
    "Files whose names contain capitals become invisible to clients on that share: rename "
    "every file and directory there to lower case first, and point only programs that can "
    "live with lower-case names at it. Use a dedicated share, never [global]."
)


@rule("wide-links-on", "filenames")
def wide_links_on(inputs: AdvisorInput) -> Iterator[Finding]:
    unix = inputs.config.first_value(GLOBAL, "smb1 unix extensions", "unix extensions")
    insecure = inputs.config.global_value("allow insecure wide links")
    ignored = (unix is None or as_bool(unix[1]) is not False) and as_bool(insecure) is not True
    for section, value in inputs.config.set_in("wide links"):
        if as_bool(value) is not True:
            continue
        evidence = [Evidence.setting(section, "wide links", value)]
        if unix is not None:
            evidence.append(Evidence.setting(GLOBAL, unix[0], unix[1]))
        if insecure is not None:
            evidence.append(Evidence.setting(GLOBAL, "allow insecure wide links", insecure))
        if ignored:
            severity, title = INFO, "wide links = yes is silently ignored here"
            effect = (
                "No change: with SMB1 unix extensions on and insecure wide links not "
                "allowed, smbd already keeps links inside the share."
            )
            effect_source = "How smbd combines the three parameters."
            risk = "None."
        else:
            severity = WARNING
            title = "Clients can follow symbolic links out of the share (wide links = yes)"
            effect = (
                "No measurable speed change, and any user who can create a symlink can no "
                "longer reach files outside the share through it."
            )
            effect_source = (
                "SambaTune measurement on Samba 4.17.12, loopback: 200 lookups took the same "
                "time with wide links on or off. The old claims that turning them off slows "
                "every open (the 1999 book, later notes on 4.7) did not reproduce."
            )
            risk = (
                "Links that point outside the share stop working for clients; expose those "
                "trees with a bind mount inside the share instead."
            )
        yield Finding(
            id="wide-links-on",
            severity=severity,
            title=title,
            subject=section,
            evidence=tuple(evidence),
            change=back_to_default(inputs, section, "wide links", "no"),
            expected_effect=effect,
            effect_source=effect_source,
            risk=risk,
            applies_to_version=(
                "Off by default since the 2010 fix for CVE-2010-0926, and ignored while unix "
                "extensions are on unless allow insecure wide links = yes (4.17 calls the "
                "former smb1 unix extensions)."
            ),
            parameters=("wide links", "allow insecure wide links", "smb1 unix extensions"),
            sources=inputs.sources("wide links"),
        )


@rule("hide-veto-patterns", "filenames")
def hide_veto_patterns(inputs: AdvisorInput) -> Iterator[Finding]:
    metadata = inputs.measurements.metadata
    for name, verb in (("hide files", "hides"), ("veto files", "vetoes")):
        for section, value in inputs.config.set_in(name):
            count = len(name_list(value))
            if count < MANY_NAME_PATTERNS:
                continue
            evidence = [
                Evidence("config", f"{name} in [{section}] lists {count} patterns", section, name, value)
            ]
            if metadata is not None:
                evidence.append(
                    Evidence(
                        "measurement",
                        f"metadata benchmark: {metadata.ops_per_second:,.0f} "
                        f"operations/s{' (' + metadata.source + ')' if metadata.source else ''}",
                    )
                )
            yield Finding(
                id="hide-veto-patterns",
                severity=WARNING if count >= TOO_MANY_PATTERNS else SUGGESTION,
                title=f"[{section}] {verb} {count} name patterns: every listing checks each one",
                subject=section,
                evidence=tuple(evidence),
                change=None,
                expected_effect=(
                    "Every directory entry is compared with every pattern while listing, so "
                    "listing time grows with the length of the list. Folding the list into a "
                    "few wildcards, or dropping patterns that match nothing, gives that time "
                    "back; measure a listing (or the metadata benchmark) before and after."
                ),
                effect_source=(
                    "SambaTune measurement on Samba 4.17.12, loopback, 20,000-file directory: "
                    "6 patterns were within noise, 100 patterns made listing 1.7x (hide files) "
                    "to 2x (veto files) slower, 500 about 5x. The 1999 book's warning holds, "
                    "scaled by the number of patterns."
                ),
                risk=(
                    "Shortening the list changes what clients see (hide files) or may open "
                    "(veto files): merge patterns rather than drop ones that still matter."
                ),
                parameters=(name,),
                sources=inputs.sources(name),
            )


def _recipe_change(share: str, inputs: AdvisorInput) -> ConfigChange | None:
    """The recipe's settings this share still lacks, as one change (None: all in place)."""
    edits = [
        ConfigChange(share, name, "set", wanted)
        for name, wanted in RECIPE
        if not same_value(inputs.config.value(share, name) or RECIPE_DEFAULTS[name], wanted)
    ]
    if not edits:
        return None
    first, rest = edits[0], tuple(edits[1:])
    return ConfigChange(first.section, first.parameter, "set", first.value, also=rest)


def _by_share(points: tuple[DirscalePoint, ...]) -> dict[str, list[DirscalePoint]]:
    shares: dict[str, list[DirscalePoint]] = {}
    for point in points:
        shares.setdefault(canonical_section(point.share), []).append(point)
    return shares


def _point_text(point: DirscalePoint) -> str:
    mode = "case sensitive" if point.case_sensitive else "case-insensitive"
    return (
        f"{point.files:,} files on [{point.share}] ({mode}): opening took "
        f"{format_seconds(point.open_seconds)}, listing {format_seconds(point.list_seconds)}"
    )


@rule("large-directories-case", "filenames")
def large_directories_case(inputs: AdvisorInput) -> Iterator[Finding]:
    for share, points in _by_share(inputs.measurements.dirscale).items():
        if as_bool(inputs.config.value(share, "case sensitive")) is True:
            continue
        insensitive = sorted((p for p in points if not p.case_sensitive), key=lambda p: p.files)
        if len(insensitive) < 2:
            continue
        small, big = insensitive[0], insensitive[-1]
        if big.files < LARGE_DIRECTORY or big.files <= small.files:
            continue
        growth = (big.open_seconds / small.open_seconds) / (big.files / small.files)
        if growth < SCAN_GROWTH:
            continue
        change = _recipe_change(share, inputs)
        if change is None:
            continue
        compared = [p for p in points if p.case_sensitive and p.files == big.files]
        if compared:
            effect_source = (
                f"Your measurement at {big.files:,} files: opening took "
                f"{format_seconds(big.open_seconds)} case-insensitive and "
                f"{format_seconds(compared[0].open_seconds)} with case sensitive = yes."
            )
        else:
            effect_source = (
                "SambaTune measurement on Samba 4.17.12, loopback: 50 lookups of missing names "
                "in a 20,000-file directory took about 700 ms case-insensitive and about 60 ms "
                "with case sensitive = yes. The 2005 report of slowdowns past about 20,000 "
                "files still holds for case-insensitive misses; Samba's wiki gives this recipe. "
                "Measure the share with the recipe before keeping it."
            )
        yield Finding(
            id="large-directories-case",
            severity=SUGGESTION,
            title=f"Lookups on [{share}] slow down as directories grow: use the large-directory recipe",
            subject=share,
            evidence=(
                Evidence("measurement", _point_text(small)),
                Evidence("measurement", _point_text(big)),
                Evidence(
                    "measurement",
                    f"opening time grew {growth:.0%} as fast as the "
                    "file count: smbd scans the directory for names it cannot find "
                    "by their exact spelling",
                ),
            ),
            change=change,
            expected_effect=(
                "With case-sensitive names forced to lower case, smbd answers every lookup "
                "with a single stat() instead of scanning the directory, so opening files and "
                "asking for missing ones stops depending on how many files the directory holds."
            ),
            effect_source=effect_source,
            risk=_RENAME_FIRST,
            parameters=tuple(name for name, _ in RECIPE),
            sources=inputs.sources("case sensitive", "default case", "preserve case"),
        )


@rule("case-sensitive-incomplete", "filenames")
def case_sensitive_incomplete(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in inputs.config.set_in("case sensitive"):
        if section == GLOBAL or as_bool(value) is not True:
            continue
        change = _recipe_change(section, inputs)
        if change is None:
            continue
        missing = [change, *change.also]
        yield Finding(
            id="case-sensitive-incomplete",
            severity=WARNING,
            title=f"[{section}] is case sensitive but keeps the case clients send",
            subject=section,
            evidence=(
                Evidence.setting(section, "case sensitive", value),
                *(
                    Evidence.setting(
                        section,
                        e.parameter,
                        inputs.config.value(section, e.parameter) or RECIPE_DEFAULTS[e.parameter],
                        note="in effect",
                    )
                    for e in missing
                ),
            ),
            change=change,
            expected_effect=(
                "Names are stored in lower case whatever the client sends, so a client asking "
                "for FOO.TXT finds foo.txt, and no two files can differ only in case. The fast "
                "lookups of a case-sensitive share stay."
            ),
            effect_source="The large-directory recipe (Samba wiki); lookups are as fast with "
            "or without these three lines.",
            risk=_RENAME_FIRST,
            parameters=tuple(name for name, _ in RECIPE),
            sources=inputs.sources("case sensitive", "default case", "preserve case"),
        )
