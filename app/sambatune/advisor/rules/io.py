"""How smbd moves data to and from the disk: async I/O, sendfile, allocation."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool, as_bytes
from sambatune.advisor.findings import (
    INFO,
    SUGGESTION,
    WARNING,
    ConfigChange,
    Evidence,
    Finding,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import Version
from sambatune.advisor.protocols import encryption, is_domain_controller, signing
from sambatune.advisor.rule import back_to_default, rule
from sambatune.bench.bottleneck import SMB_HEALTHY_SHARE
from sambatune.units import format_rate

#: From 4.8 on the default 1 sends every read and write through smbd's thread pool.
AIO_BY_DEFAULT: Version = (4, 8, 0)
#: File systems that allocate by writing zeros (no unwritten extents).
SLOW_ALLOCATION = {"ext2", "ext3", "zfs", "hfs", "hfsplus"}


@rule("aio-size-not-default", "io")
def aio_size_not_default(inputs: AdvisorInput) -> Iterator[Finding]:
    if not inputs.at_least(AIO_BY_DEFAULT):
        return  # before 4.8 async I/O needed a module and other values were normal
    for name, what in (("aio read size", "reads"), ("aio write size", "writes")):
        for section, value in inputs.config.set_in(name):
            size = as_bytes(value)
            if size is None or size == 1:
                continue
            title = (
                f"Asynchronous {what} are off on [{section}] ({name} = 0)"
                if size == 0
                else f"{name} = {value} keeps {what} below {value} bytes synchronous"
            )
            yield Finding(
                id="aio-size-not-default",
                severity=SUGGESTION,
                title=title,
                subject=section,
                evidence=(Evidence.setting(section, name, value),),
                change=back_to_default(inputs, section, name, "1"),
                expected_effect=(
                    f"Every {what[:-1]} goes through smbd's thread pool again, so one slow disk "
                    "request no longer holds up the others on the same connection. Storage with "
                    "real latency (arrays, network storage) and many requests in flight gain "
                    "the most."
                ),
                effect_source=(
                    "SambaTune measurement on Samba 4.17.12, loopback: one sequential stream was "
                    "within noise at 0 and 1; the gain needs many outstanding requests, which "
                    "that test lacked. Measure a parallel workload before and after."
                ),
                risk="None known; 0 exists as a switch for ruling out async I/O when debugging.",
                applies_to_version=(
                    f"{inputs.version_label()}: since 4.8 the default of 1 makes every request "
                    "asynchronous without any VFS module; the 16384-style values in old "
                    "snippets come from before."
                ),
                parameters=(name,),
                sources=inputs.sources(name),
            )


def _crypto_reason(inputs: AdvisorInput, section: str) -> Evidence | None:
    encrypted = encryption(inputs, section)
    if encrypted and encrypted[0] == "required":
        return Evidence.setting(section, encrypted[1], encrypted[2])
    signed = signing(inputs)
    if signed and signed[0] == "required":
        return Evidence.setting(GLOBAL, "server signing", signed[1])
    if is_domain_controller(inputs):
        return Evidence("config", "this server is an AD domain controller, which requires signing")
    return None


@rule("sendfile-no-effect", "io")
def sendfile_no_effect(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in inputs.config.set_in("use sendfile"):
        if as_bool(value) is not True:
            continue
        reason = _crypto_reason(inputs, section)
        if reason is None:
            continue
        yield Finding(
            id="sendfile-no-effect",
            severity=INFO,
            title=f"use sendfile does nothing on [{section}]: its reads are signed or encrypted",
            subject=section,
            evidence=(Evidence.setting(section, "use sendfile", value), reason),
            change=back_to_default(inputs, section, "use sendfile", "no"),
            expected_effect="No speed change: smbd must sign or encrypt the data itself, so it "
            "cannot hand the file straight to the socket.",
            effect_source="How smbd serves SMB2 reads: sendfile is skipped for signed, "
            "encrypted and compound requests.",
            risk="None.",
            parameters=("use sendfile", "server signing", "server smb encrypt"),
            sources=inputs.sources("use sendfile"),
        )


@rule("sendfile-worth-trying", "io")
def sendfile_worth_trying(inputs: AdvisorInput) -> Iterator[Finding]:
    smb = inputs.measurements.throughput.smb_read
    limit = inputs.slowest_layer("read")
    if smb is None or limit is None or not inputs.server.is_linux:
        return
    share = smb.mean_bytes_per_second / limit.ceiling_bytes_per_s
    if share >= SMB_HEALTHY_SHARE:
        return
    if any(as_bool(v) is True for _, v in inputs.config.set_in("use sendfile")):
        return
    if any(_crypto_reason(inputs, s) for s in inputs.config.sections()):
        return
    yield Finding(
        id="sendfile-worth-trying",
        severity=SUGGESTION,
        title="Reads leave room below the hardware's limit: try sendfile",
        subject=GLOBAL,
        evidence=(
            Evidence(
                "measurement",
                f"SMB reads: {format_rate(smb.mean_bytes_per_second)}, "
                f"{share:.0%} of the {limit.kind} limit" + (f" ({smb.source})" if smb.source else ""),
            ),
            Evidence("measurement", inputs.layer_evidence(limit)),
            Evidence.setting(
                GLOBAL, "use sendfile", inputs.config.global_value("use sendfile") or "no", note="in effect"
            ),
        ),
        change=ConfigChange(GLOBAL, "use sendfile", "set", "yes"),
        expected_effect=(
            "Unsigned, unencrypted reads go from the page cache to the socket without a copy "
            "through smbd, which saves CPU per byte; that helps only where the CPU limits "
            "reads. Clients that sign (current Windows does by default) do not use it."
        ),
        effect_source=(
            "Not measured on this server: measure reads before and after and keep it only if "
            "they improve. On Samba 4.17.12 loopback a 256 MiB read was within noise."
        ),
        risk="Rarely a file system or network driver handles sendfile badly; if copies fail or "
        "look wrong afterwards, remove it again.",
        parameters=("use sendfile",),
        sources=inputs.sources("use sendfile"),
    )


@rule("strict-allocate-slow-filesystem", "io")
def strict_allocate_slow_filesystem(inputs: AdvisorInput) -> Iterator[Finding]:
    affected: dict[str, list[tuple[str, str]]] = {}
    for share in inputs.config.shares():
        fstype = inputs.server.share_filesystems.get(share)
        if fstype not in SLOW_ALLOCATION:
            continue
        if as_bool(inputs.config.value(share, "strict allocate")) is not True:
            continue
        origin = inputs.config.where_set(share, "strict allocate") or share
        affected.setdefault(origin, []).append((share, fstype or "?"))
    for origin, shares in affected.items():
        value = inputs.config.explicit_value(origin, "strict allocate") or "yes"
        yield Finding(
            id="strict-allocate-slow-filesystem",
            severity=WARNING,
            title="strict allocate on a file system that allocates by writing zeros",
            subject=origin,
            evidence=(
                Evidence.setting(origin, "strict allocate", value),
                *(Evidence("survey", f"[{share}] lives on {fstype}") for share, fstype in shares),
            ),
            change=back_to_default(inputs, origin, "strict allocate", "no"),
            expected_effect=(
                "Large writes stop waiting while the file system fills the new space with "
                "zeros up front, so big copies start at once and clients stop timing out."
            ),
            effect_source="File system behaviour (no unwritten extents on these); not measured "
            "here, where the shares are on ext4: measure a large copy before and "
            "after.",
            risk="A copy that does not fit now fails partway through instead of at the start.",
            parameters=("strict allocate",),
            sources=inputs.sources("strict allocate"),
        )
