"""How smbd moves data to and from the disk: async I/O, io_uring, sendfile, allocation."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL, as_bool, as_bytes
from sambatune.advisor.findings import (
    CONFIG,
    INFO,
    PROBLEM,
    SUGGESTION,
    SURVEY,
    VERSION,
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
from sambatune.conf.values import split_list
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


# --- io_uring --------------------------------------------------------------------------

#: vfs_io_uring first shipped in Samba 4.12.0 (its WHATSNEW).
IO_URING_ADDED: Version = (4, 12, 0)
#: 4.12.0 to 4.12.2 did not retry short reads and could hand clients wrong data
#: (bug 14361, fixed in 4.12.3).
IO_URING_FIXED: Version = (4, 12, 3)
#: The kernel that brought io_uring (vfs_io_uring(8), WHATSNEW 4.12.0).
IO_URING_KERNEL: Version = (5, 1, 0)
#: Kernels whose regression breaks the module (WHATSNEW 4.12.0; fixed again in 5.4.16).
IO_URING_BAD_KERNELS: frozenset[Version] = frozenset({(5, 4, 14), (5, 4, 15)})
#: kernel.io_uring_disabled = 2: the kernel refuses io_uring to every process.
IO_URING_REFUSED = 2
#: Modules that reach their files through their own client instead of the local kernel;
#: they must be last themselves, so io_uring cannot go below them.
OWN_IO_BACKENDS = frozenset({"ceph", "ceph_new", "glusterfs"})
IO_URING = "io_uring"
IO_URING_SOURCES = (
    "vfs_io_uring(8) (Samba source, docs-xml/manpages/vfs_io_uring.8.xml)",
    "Samba 4.12 release notes (WHATSNEW)",
    "Samba 4.12.3 release notes (WHATSNEW): bug 14361",
    "Samba source, source3/modules/vfs_io_uring.c",
    "Samba source, source3/smbd/vfs.c and source3/smbd/smb2_service.c (a module that fails)",
)
#: Why io_uring must come last, in one place for the three rules.
LAST_BECAUSE = (
    "io_uring has to be the last module in the list: it does the reads, writes and flushes "
    "itself, straight to the kernel, so a module listed after it would never see them."
)


def _io_uring_sources(inputs: AdvisorInput) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*inputs.sources("vfs objects"), *IO_URING_SOURCES)))


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def vfs_module_name(item: str) -> str:
    """The module a ``vfs objects`` item loads, as smbd derives it (vfs_init_custom):
    ``io_uring``, ``io_uring:option`` and ``/usr/lib/samba/vfs/io_uring.so`` all load io_uring."""
    name = item.split(":", 1)[0].strip()
    if name.startswith("/"):
        name = name.rsplit("/", 1)[-1].split(".", 1)[0]
    return name


def vfs_stack(value: str | None) -> list[str]:
    """The items of a ``vfs objects`` value in order (first = top of the stack)."""
    return split_list(value or "")


def _stack_text(items: list[str]) -> str:
    return " ".join(items)


def _without_io_uring(inputs: AdvisorInput, section: str, items: list[str]) -> ConfigChange:
    rest = [item for item in items if vfs_module_name(item) != IO_URING]
    if rest:
        return ConfigChange(section, "vfs objects", "set", _stack_text(rest))
    if section != GLOBAL and vfs_stack(inputs.config.explicit_value(GLOBAL, "vfs objects")):
        # Removing the line would inherit [global]'s modules: keep the share's empty list.
        return ConfigChange(section, "vfs objects", "set", "")
    return ConfigChange(section, "vfs objects", "unset")


def _kernel_label(inputs: AdvisorInput) -> str:
    return f"Linux {inputs.server.kernel_release}" if inputs.server.kernel_release else "Linux"


def _io_uring_blockers(inputs: AdvisorInput) -> list[tuple[Evidence, str]]:
    """What keeps io_uring from working on this server: (evidence, what follows from it)."""
    server = inputs.server
    refused = (
        "smbd cannot load a module the share names, so it refuses every connection to the "
        "share and clients are told it does not exist (NT_STATUS_BAD_NETWORK_NAME)."
    )
    no_ring = (
        "The kernel refuses to set up io_uring when a client connects; smbd then fails the "
        "connection to the share (NT_STATUS_UNSUCCESSFUL) instead of falling back to its "
        "thread pool."
    )
    found: list[tuple[Evidence, str]] = []
    if inputs.version_known and not inputs.at_least(IO_URING_ADDED):
        found.append(
            (Evidence(VERSION, f"{inputs.version_label()} has no io_uring module (4.12 added it)"), refused)
        )
    elif server.os_system and not server.is_linux:
        found.append(
            (Evidence(SURVEY, f"the server runs {server.os_system}: io_uring exists only on Linux"), refused)
        )
    elif server.has_vfs_module(IO_URING) is False:
        where = server.vfs_modules_dir or "smbd's modules directory"
        found.append((Evidence(SURVEY, f"no io_uring.so in {where}, and smbd has none built in"), refused))
    elif inputs.version_known and not inputs.at_least(IO_URING_FIXED):
        found.append(
            (
                Evidence(
                    VERSION, f"{inputs.version_label()}: io_uring before 4.12.3 did not retry short reads"
                ),
                "Reads through io_uring could hand Windows clients wrong data (Samba bug 14361, "
                "fixed in 4.12.3).",
            )
        )
    if not server.is_linux:
        return found
    kernel = server.kernel_version
    if kernel is not None and kernel < IO_URING_KERNEL:
        found.append(
            (Evidence(SURVEY, f"{_kernel_label(inputs)} is older than 5.1, which brought io_uring"), no_ring)
        )
    elif kernel in IO_URING_BAD_KERNELS:
        found.append(
            (
                Evidence(
                    SURVEY,
                    f"{_kernel_label(inputs)} is one of the two kernels (5.4.14, 5.4.15) "
                    "known to break io_uring",
                ),
                "Samba's 4.12 release notes warn that a regression in these two kernels breaks "
                "the module; 5.4.16 fixed it.",
            )
        )
    if server.io_uring_disabled == IO_URING_REFUSED:
        found.append(
            (
                Evidence(
                    SURVEY, "kernel.io_uring_disabled = 2: the kernel refuses io_uring to every process"
                ),
                no_ring,
            )
        )
    return found


def _usable_kernel(inputs: AdvisorInput) -> Evidence | None:
    """The survey fact that io_uring will work here, or None when it may not."""
    server = inputs.server
    kernel = server.kernel_version
    if not server.is_linux or kernel is None or kernel < IO_URING_KERNEL or kernel in IO_URING_BAD_KERNELS:
        return None
    if server.io_uring_disabled not in (None, 0):
        return None  # 1 allows only privileged processes: not worth a suggestion
    return Evidence(SURVEY, f"{_kernel_label(inputs)}: io_uring is there (5.1 or newer, not 5.4.14/5.4.15)")


@rule("io-uring-unusable", "io")
def io_uring_unusable(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in inputs.config.set_in("vfs objects"):
        items = vfs_stack(value)
        if IO_URING not in (vfs_module_name(i) for i in items):
            continue
        blockers = _io_uring_blockers(inputs)
        if not blockers:
            continue
        where = "every share that uses [global]'s list" if section == GLOBAL else f"[{section}]"
        yield Finding(
            id="io-uring-unusable",
            severity=PROBLEM,
            title=f"io_uring cannot work on this server, yet {where} names it",
            subject=section,
            evidence=(Evidence.setting(section, "vfs objects", value), *(e for e, _ in blockers)),
            change=_without_io_uring(inputs, section, items),
            expected_effect=" ".join(dict.fromkeys(consequence for _, consequence in blockers))
            + " Without io_uring smbd does its asynchronous I/O with its own thread pool again, "
            "as on every share that does not name it.",
            effect_source="Samba's source: a module that cannot be loaded or set up fails the tree "
            "connect (source3/smbd/vfs.c, source3/smbd/smb2_service.c); the kernel limits come "
            "from vfs_io_uring(8) and the 4.12 release notes.",
            risk="None: removing io_uring only gives up a speed-up this server cannot have.",
            applies_to_version=(
                f"{inputs.version_label()}: vfs_io_uring exists since 4.12.0, 4.12.3 fixed its "
                "data-corruption bug, and it needs Linux 5.1 or newer."
            ),
            parameters=("vfs objects",),
            sources=_io_uring_sources(inputs),
        )


@rule("io-uring-not-last", "io")
def io_uring_not_last(inputs: AdvisorInput) -> Iterator[Finding]:
    for section, value in inputs.config.set_in("vfs objects"):
        items = vfs_stack(value)
        names = [vfs_module_name(i) for i in items]
        if IO_URING not in names or names[-1] == IO_URING:
            continue
        if _io_uring_blockers(inputs):
            continue  # io-uring-unusable proposes removing it; reordering would not help
        position = names.index(IO_URING)
        after = [i for i in items[position + 1 :] if vfs_module_name(i) != IO_URING]
        reordered = [i for i in items if vfs_module_name(i) != IO_URING] + [items[position]]
        yield Finding(
            id="io-uring-not-last",
            severity=WARNING,
            title=f"io_uring is not the last VFS module on [{section}]",
            subject=section,
            evidence=(
                Evidence.setting(section, "vfs objects", value),
                Evidence(CONFIG, f"listed after io_uring: {', '.join(after)}", section, "vfs objects", value),
            ),
            change=ConfigChange(section, "vfs objects", "set", _stack_text(reordered)),
            expected_effect=(
                f"{LAST_BECAUSE} Today {_and(after)} miss every read, write and flush of the "
                "share; a module that keeps data somewhere else than the plain file (streams in "
                "extended attributes, for instance) can then fail or act on the wrong bytes. "
                "Moved to the end, io_uring only replaces smbd's own thread pool."
            ),
            effect_source=(
                "Samba's source: vfs_io_uring passes the file's kernel descriptor to io_uring for "
                "pread, pwrite and fsync and does not call the next module; its manual page asks "
                "for it to be last. Not measured here."
            ),
            risk="None known: the order changes which module does the I/O, not what is stored.",
            parameters=("vfs objects",),
            sources=(
                *_io_uring_sources(inputs),
                "Samba source, source3/modules/vfs_streams_xattr.c (streams_xattr_pread_send: "
                "a module with its own reads and writes)",
            ),
        )


@rule("io-uring-worth-trying", "io")
def io_uring_worth_trying(inputs: AdvisorInput) -> Iterator[Finding]:
    server = inputs.server
    kernel = _usable_kernel(inputs)
    if kernel is None or server.has_vfs_module(IO_URING) is not True or not inputs.at_least(IO_URING_FIXED):
        return
    groups: dict[str, list[str]] = {}
    for share in inputs.config.shares():
        if as_bool(inputs.config.value(share, "printable")) is True:
            continue
        names = [vfs_module_name(i) for i in vfs_stack(inputs.config.value(share, "vfs objects"))]
        if IO_URING in names or OWN_IO_BACKENDS.intersection(names):
            continue
        groups.setdefault(inputs.config.where_set(share, "vfs objects") or GLOBAL, []).append(share)
    module_path = f"{server.vfs_modules_dir}/io_uring.so" if server.vfs_modules_dir else "io_uring"
    for origin, shares in groups.items():
        current = inputs.config.value(origin, "vfs objects") or ""
        items = vfs_stack(current)
        listed = ", ".join(f"[{s}]" for s in shares)
        setting = (
            Evidence.setting(origin, "vfs objects", current, note=f"in effect for {listed}")
            if items
            else Evidence(
                CONFIG,
                f"no vfs objects for {listed}: smbd's thread pool does their I/O",
                origin,
                "vfs objects",
                "",
            )
        )
        where = f"[{origin}]" if origin != GLOBAL else f"{listed} ([global]'s module list)"
        yield Finding(
            id="io-uring-worth-trying",
            severity=SUGGESTION,
            title=f"Try io_uring for {where}: this smbd has the module and the kernel supports it",
            subject=origin,
            evidence=(
                setting,
                Evidence(SURVEY, f"smbd can load {module_path}"),
                kernel,
            ),
            change=ConfigChange(origin, "vfs objects", "set", _stack_text([*items, IO_URING])),
            expected_effect=(
                "Reads, writes and flushes go to the kernel through a shared queue instead of "
                "being handed to smbd's helper threads, which saves a thread switch and some "
                "system calls per request. A gain, if any, shows with fast storage and many "
                "requests in flight; one stream limited by the disk or the network will not "
                f"change. {LAST_BECAUSE}"
            ),
            effect_source=(
                "Not measured here unless a measurement says so: on Samba 4.17.12 over loopback "
                "SambaTune saw it load and work, with no gain for one stream. Measure this share "
                "with and without it in the tuning wizard's one-change loop (`sambatune wizard "
                "start --share SHARE`, then `sambatune wizard next` through apply, measure and "
                "verdict): the before and after runs and their significance test decide whether "
                "it stays."
            ),
            risk=(
                "If the kernel later refuses io_uring (an older kernel booted, or "
                "kernel.io_uring_disabled set to 2), connections to these shares fail until "
                "io_uring is taken out again."
            ),
            applies_to_version=(
                f"{inputs.version_label()}: vfs_io_uring exists since 4.12.0 and 4.12.3 fixed its "
                "data-corruption bug; it needs Linux 5.1 or newer, and 5.4.14 and 5.4.15 break it."
            ),
            parameters=("vfs objects",),
            sources=_io_uring_sources(inputs),
        )
