"""When data must reach the disk: strict sync and sync always."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import as_bool
from sambatune.advisor.findings import INFO, WARNING, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.advisor.rule import back_to_default, rule

#: `strict sync` defaults to yes from 4.7 on (no before); strict-sync-off in
#: resources/advisor/rules.json starts there too (a test holds them together).
STRICT_SYNC_BY_DEFAULT: Version = (4, 7, 0)


def _strict_sync(inputs: AdvisorInput, section: str) -> tuple[bool, Evidence]:
    value = inputs.config.value(section, "strict sync")
    if as_bool(value) is None:
        on = inputs.at_least(STRICT_SYNC_BY_DEFAULT)
        return on, Evidence(
            "version",
            f"strict sync is {'yes' if on else 'no'} by default on {inputs.version_label()} (yes since 4.7)",
        )
    origin = inputs.config.where_set(section, "strict sync")
    note = "" if origin in (None, section) else f"from [{origin}]"
    if origin is None:
        note = "in effect; the default value"
    assert value is not None
    return bool(as_bool(value)), Evidence.setting(section, "strict sync", value, note=note)


def _sync_always_sections(inputs: AdvisorInput) -> dict[str, tuple[str, list[str], list[str]]]:
    """For each section whose line turns sync always on: (its value, sections where it
    takes effect, sections where strict sync = no makes it do nothing)."""
    found: dict[str, tuple[str, list[str], list[str]]] = {}
    for section in inputs.config.sections():
        if as_bool(inputs.config.value(section, "sync always")) is not True:
            continue
        origin = inputs.config.where_set(section, "sync always") or section
        value = inputs.config.explicit_value(origin, "sync always") or "yes"
        _, effective, inert = found.setdefault(origin, (value, [], []))
        (effective if _strict_sync(inputs, section)[0] else inert).append(section)
    return found


@rule("sync-always", "durability")
def sync_always(inputs: AdvisorInput) -> Iterator[Finding]:
    for origin, (value, effective, _inert) in _sync_always_sections(inputs).items():
        if not effective:
            continue
        _, strict = _strict_sync(inputs, effective[0])
        yield Finding(
            id="sync-always",
            severity=WARNING,
            title="Every write waits for the disk (sync always with strict sync)",
            subject=origin,
            evidence=(Evidence.setting(origin, "sync always", value), strict),
            change=back_to_default(inputs, origin, "sync always", "no"),
            expected_effect=(
                "Writes are acknowledged once they are in the server's page cache instead of "
                "after a flush to stable storage each time; write throughput rises, most on "
                "disks without a battery- or flash-backed write cache."
            ),
            effect_source=(
                "SambaTune measurement on Samba 4.17.12, loopback, SSD-backed disk: writing a "
                "256 MiB file went from about 310 MiB/s with sync always to 460-570 MiB/s "
                "without. The 1999 book called the cost immense, which still holds for "
                "spinning disks. Measure your own disk before and after."
            ),
            risk=(
                "A write acknowledged moments before a power cut can be lost, unless the "
                "application asked for write-through or a flush: strict sync stays on and "
                "still honours those requests. Keep sync always only where every acknowledged "
                "write must survive a crash and the application cannot ask for it."
            ),
            applies_to_version="sync always only acts while strict sync is on; strict sync "
            "has defaulted to yes since 4.7.",
            parameters=("sync always", "strict sync"),
            sources=inputs.sources("sync always", "strict sync"),
        )


@rule("sync-always-without-strict-sync", "durability")
def sync_always_without_strict_sync(inputs: AdvisorInput) -> Iterator[Finding]:
    for origin, (value, effective, inert) in _sync_always_sections(inputs).items():
        if effective or not inert:
            continue
        _, strict = _strict_sync(inputs, inert[0])
        yield Finding(
            id="sync-always-without-strict-sync",
            severity=INFO,
            title="sync always does nothing while strict sync is off",
            subject=origin,
            evidence=(Evidence.setting(origin, "sync always", value), strict),
            change=back_to_default(inputs, origin, "sync always", "no"),
            expected_effect=(
                "No speed change today. Removing the line avoids a surprise: whoever later "
                "turns strict sync back on would also get a flush after every write."
            ),
            effect_source="How smbd decides to flush: only with strict sync on.",
            risk="None.",
            parameters=("sync always", "strict sync"),
            sources=inputs.sources("sync always", "strict sync"),
        )
