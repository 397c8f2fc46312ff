"""Caching and locking: oplocks, leases, kernel oplocks, fake oplocks, strict locking."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool
from sambatune.advisor.findings import (
    PROBLEM,
    SUGGESTION,
    WARNING,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.advisor.rule import back_to_default, rule

#: SMB2 leases are offered by default from 4.5 on (and ride on `oplocks`).
LEASES_BY_DEFAULT: Version = (4, 5, 0)
#: `kernel oplocks` has defaulted to no since 4.0.
KERNEL_OPLOCKS_OFF_BY_DEFAULT: Version = (4, 0, 0)

_NO_LATENCY = ("Not re-measured: loopback has no network latency, which is where caching pays; "
               "measure from a real client before and after.")


def _where(section: str) -> str:
    return "every share that does not set it itself" if section == GLOBAL else f"[{section}]"


def _turned_off(inputs: AdvisorInput, name: str) -> list[tuple[str, str]]:
    return [(s, v) for s, v in inputs.config.set_in(name) if as_bool(v) is False]


def _turned_on(inputs: AdvisorInput, name: str) -> list[tuple[str, str]]:
    return [(s, v) for s, v in inputs.config.set_in(name) if as_bool(v) is True]


@rule("oplocks-off", "locking")
def oplocks_off(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in _turned_off(inputs, "oplocks"):
        evidence = [Evidence.setting(section, "oplocks", value)]
        vetoed = inputs.config.value(section, "veto oplock files")
        if vetoed:
            evidence.append(Evidence.setting(section, "veto oplock files", vetoed,
                                             note="already excludes these files"))
        yield Finding(
            id="oplocks-off",
            severity=SUGGESTION,
            title=f"Clients may not cache files on {_where(section)} (oplocks = no)",
            subject=section,
            evidence=tuple(evidence),
            change=back_to_default(inputs, section, "oplocks", "yes"),
            expected_effect=(
                "Clients keep reads, writes and repeated opens of files nobody else is using in "
                "their own cache, which saves round trips; SMB2/3 clients get leases back too, "
                "since leases need this switch. The gain grows with network latency."
            ),
            effect_source=(
                "Using Samba (1999) and Speed.txt (2000) reported about 30% from NetBench runs; "
                "that still holds in direction. " + _NO_LATENCY
            ),
            risk=(
                "Oplocks off for database files trades speed for safety: where several clients "
                "write the same file at once (a shared Access or dBase file), a cached copy can "
                "be stale until the server breaks it. If that is why they are off, turn them "
                "back on for the share and exclude only those files with `veto oplock files` "
                "(for example /*.mdb/)."
            ),
            applies_to_version="On by default in every version since 1.9.18; since 4.5 SMB2 "
                               "leases depend on it as well.",
            parameters=("oplocks", "veto oplock files"),
            sources=inputs.sources("oplocks", "veto oplock files"),
        )


@rule("level2-oplocks-off", "locking")
def level2_oplocks_off(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in _turned_off(inputs, "level2 oplocks"):
        yield Finding(
            id="level2-oplocks-off",
            severity=SUGGESTION,
            title=f"Shared read caching is off on {_where(section)} (level2 oplocks = no)",
            subject=section,
            evidence=(Evidence.setting(section, "level2 oplocks", value),),
            change=back_to_default(inputs, section, "level2 oplocks", "yes"),
            expected_effect=(
                "Several clients reading the same file (program files, templates) can each "
                "cache it at once instead of going back to the server for every read."
            ),
            effect_source="Speed.txt (2000) recommended them for application shares; still "
                          "holds. " + _NO_LATENCY,
            risk="None beyond that of oplocks themselves: the first write breaks every reader's "
                 "cache.",
            parameters=("level2 oplocks",),
            sources=inputs.sources("level2 oplocks"),
        )


@rule("fake-oplocks-on", "locking")
def fake_oplocks_on(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in _turned_on(inputs, "fake oplocks"):
        yield Finding(
            id="fake-oplocks-on",
            severity=PROBLEM,
            title=f"fake oplocks on {_where(section)}: clients cache without any protection",
            subject=section,
            evidence=(Evidence.setting(section, "fake oplocks", value),),
            change=back_to_default(inputs, section, "fake oplocks", "no"),
            expected_effect=(
                "Caching is granted by real oplocks and leases again, which are withdrawn when a "
                "second client needs the file. A single user may notice no difference; files "
                "written by two clients stop being at risk."
            ),
            effect_source="Speed.txt (2000) already warned that it corrupts shared files; that "
                          "still holds.",
            risk="None for data. The apparent speed was borrowed against correctness.",
            parameters=("fake oplocks", "oplocks"),
            sources=inputs.sources("fake oplocks"),
        )


@rule("kernel-oplocks-on", "locking")
def kernel_oplocks_on(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in _turned_on(inputs, "kernel oplocks"):
        yield Finding(
            id="kernel-oplocks-on",
            severity=WARNING,
            title=f"kernel oplocks on {_where(section)} withhold most client caching",
            subject=section,
            evidence=(Evidence.setting(section, "kernel oplocks", value),),
            change=back_to_default(inputs, section, "kernel oplocks", "no"),
            expected_effect=(
                "Clients get Level II oplocks, SMB2 leases and durable handles again, which "
                "Samba refuses while kernel oplocks are on; fewer round trips for repeated "
                "opens and reads."
            ),
            effect_source=_NO_LATENCY,
            risk=(
                "If local programs or NFS clients change the same files while SMB clients have "
                "them open, kernel oplocks are how Samba hears about it; without them a client "
                "can work from a stale cache. Keep them only for such mixed access."
            ),
            applies_to_version="Off by default since 4.0.",
            parameters=("kernel oplocks", "smb2 leases"),
            sources=inputs.sources("kernel oplocks"),
        )


@rule("smb2-leases-off", "locking")
def smb2_leases_off(inputs: AdvisorInput) -> Iterator[Finding]:
    if not inputs.at_least(LEASES_BY_DEFAULT):
        return
    for section, value in _turned_off(inputs, "smb2 leases"):
        yield Finding(
            id="smb2-leases-off",
            severity=SUGGESTION,
            title="SMB2 leases are off",
            subject=section,
            evidence=(Evidence.setting(section, "smb2 leases", value),),
            change=back_to_default(inputs, section, "smb2 leases", "yes"),
            expected_effect=(
                "SMB2/3 clients can keep one cache for a file they open several times, instead "
                "of the weaker per-handle oplocks."
            ),
            effect_source=_NO_LATENCY,
            risk="Only useful off while chasing a caching bug.",
            applies_to_version=f"On by default since 4.5; {inputs.version_label()}.",
            parameters=("smb2 leases",),
            sources=inputs.sources("smb2 leases"),
        )


@rule("strict-locking-on", "locking")
def strict_locking_on(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in _turned_on(inputs, "strict locking"):
        yield Finding(
            id="strict-locking-on",
            severity=SUGGESTION,
            title=f"strict locking = yes on {_where(section)} checks locks on every read and write",
            subject=section,
            evidence=(Evidence.setting(section, "strict locking", value),),
            change=back_to_default(inputs, section, "strict locking", "Auto"),
            expected_effect=(
                "Back at Auto, smbd skips the lock-database lookup for files a client holds "
                "cached (that client enforces its own locks), so ordinary I/O does less work."
            ),
            effect_source=(
                "Using Samba (1999) and Speed.txt (2000) called it slow; the cost is one "
                "lookup per request. Not measured here: measure before and after."
            ),
            risk=("An application that counts on the server to refuse reads and writes over "
                  "locked ranges, without asking, could misbehave; keep yes only for such a "
                  "program."),
            parameters=("strict locking",),
            sources=inputs.sources("strict locking"),
        )
