"""Every advisor rule on plain mappings: when it fires, when it stays silent, and what
it proposes, including the cases where the server's Samba version changes the answer."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.findings import PROBLEM, SEVERITIES, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.measurements import (
    ClientWindow,
    DirscalePoint,
    Measurements,
    MetadataRate,
    NetworkPath,
    Throughput,
    ThroughputSummary,
)
from sambatune.advisor.rules import RULE_IDS, rule_by_id
from sambatune.advisor.server_facts import Nic, ServerFacts
from sambatune.conf.catalog import load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.lint import MANY_NAME_PATTERNS, lint
from sambatune.remote.client_audit import AdvertisedInterface, ClientAudit
from sambatune.remote.smb_sessions import SmbSession

V410 = (4, 10, 18)
V412 = (4, 12, 0)
V417 = (4, 17, 12)
ANY = object()


def nic(
    name: str = "eth0", speed: int | None = 1000, mtu: int = 1500, duplex: str = "full", up: bool = True
) -> Nic:
    return Nic(name, up, True, speed, mtu, duplex)


def make_inputs(
    explicit: dict[str, dict[str, str]] | None = None,
    effective: dict[str, dict[str, str]] | None = None,
    *,
    version: tuple[int, int, int] | None = V417,
    os: str | None = "Linux",
    nics: tuple[Nic, ...] = (),
    tcp: dict[str, str] | None = None,
    filesystems: dict[str, str] | None = None,
    measurements: Measurements | None = None,
    clients: ClientAudit | None = None,
    facts: dict[str, Any] | None = None,
) -> AdvisorInput:
    server = ServerFacts(version, os, nics, tcp or {}, filesystems or {}, "test server", clients)
    return AdvisorInput(
        ConfigView(explicit or {}, effective or {}, "/etc/samba/smb.conf"),
        replace(server, **(facts or {})),
        measurements or Measurements(),
    )


def run(rule_id: str, **kwargs: Any) -> list[Finding]:
    return rule_by_id(rule_id)(make_inputs(**kwargs))


@dataclass
class Case:
    rule: str
    name: str
    kwargs: dict[str, Any]
    severity: str | None  # None: the rule must stay silent
    #: (section, parameter, action, value) of the proposed smb.conf change; None for no
    #: change; a string for another kind of change; ANY to leave unchecked.
    change: Any = ANY
    subject: str | None = None
    also: list[tuple[str, str, str, str | None]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.name}"


G = "global"


def conf(**sections: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name.rstrip("_").replace("_", " "): values for name, values in sections.items()}


PATH_1G_2MS = NetworkPath(1e9, 0.002, "iperf", "ping")
PATH_10G_10MS = NetworkPath(1e10, 0.010, "iperf", "ping")


def patterns(count: int) -> str:
    return "/" + "/".join(f"*.t{i}" for i in range(count)) + "/"


def dirscale(*points: tuple[int, float, bool], share: str = "data") -> Measurements:
    return Measurements(dirscale=tuple(DirscalePoint(share, n, t, t * 2, cs) for n, t, cs in points))


def throughput(**kinds: float) -> Measurements:
    return Measurements(
        throughput=ThroughputSummary(**{k: Throughput(v * 1e6, "test") for k, v in kinds.items()})
    )


def session(
    dialect: str = "SMB3_11",
    *,
    user: str = "alice",
    signing: str = "AES-128-GMAC",
    encryption: str = "",
    channels: int | None = 1,
    address: str = "ipv4:10.0.0.9:50986",
) -> SmbSession:
    return SmbSession(
        4242,
        user,
        address.split(":")[1],
        dialect,
        address,
        signing,
        "full" if signing else "none",
        encryption,
        "full" if encryption else "none",
        channels,
    )


def audit(
    *sessions: SmbSession,
    multichannel: bool = True,
    signing: str = "default",
    interfaces: tuple[AdvertisedInterface, ...] = (),
) -> ClientAudit:
    return ClientAudit(list(sessions), "smbstatus --json", multichannel, signing, list(interfaces))


TWO_LINKS = (
    AdvertisedInterface("eth0", ("10.0.0.5/24",), 10000),
    AdvertisedInterface("eth1", ("10.0.1.5/24",), 10000),
)
TWO_LINKS_ONE_SUBNET = (
    AdvertisedInterface("eth0", ("10.0.0.5/24",), 10000),
    AdvertisedInterface("eth1", ("10.0.0.6/24",), 10000),
)

CASES = [
    # who is connected and how
    Case("clients-smb1", "an NT1 session", dict(clients=audit(session("NT1", signing=""))), "warning", None),
    Case("clients-smb1", "SMB3 only", dict(clients=audit(session())), None),
    Case("clients-smb1", "no audit", dict(), None),
    Case(
        "clients-unsigned",
        "signed-in, nothing signed",
        dict(clients=audit(session(signing=""))),
        "suggestion",
        None,
    ),
    Case(
        "clients-unsigned",
        "required yet unsigned",
        dict(clients=audit(session(signing=""), signing="mandatory")),
        "warning",
        None,
    ),
    Case(
        "clients-unsigned",
        "encrypted counts",
        dict(clients=audit(session(signing="", encryption="AES-128-GCM"))),
        None,
    ),
    Case(
        "clients-unsigned", "guest cannot sign", dict(clients=audit(session(user="nobody", signing=""))), None
    ),
    Case("clients-smb2", "SMB2_10", dict(clients=audit(session("SMB2_10"))), "info", None),
    Case("clients-smb2", "SMB3_00", dict(clients=audit(session("SMB3_00"))), None),
    Case(
        "clients-single-channel",
        "two links, one channel",
        dict(clients=audit(session(), interfaces=TWO_LINKS_ONE_SUBNET)),
        "info",
        None,
    ),
    Case(
        "clients-single-channel",
        "two channels",
        dict(clients=audit(session(channels=2), interfaces=TWO_LINKS)),
        None,
    ),
    Case(
        "clients-single-channel", "one link", dict(clients=audit(session(), interfaces=TWO_LINKS[:1])), None
    ),
    Case(
        "clients-single-channel",
        "multichannel off",
        dict(clients=audit(session(), multichannel=False, interfaces=TWO_LINKS)),
        None,
    ),
    Case(
        "clients-single-channel",
        "channels unknown",
        dict(clients=audit(session(channels=None), interfaces=TWO_LINKS)),
        None,
    ),
    # logging
    Case(
        "log-level-high",
        "level 3",
        dict(explicit=conf(global_={"log level": "3"})),
        "warning",
        (G, "log level", "set", "1"),
    ),
    Case(
        "log-level-high",
        "level 10",
        dict(explicit=conf(global_={"log level": "10"})),
        PROBLEM,
        (G, "log level", "set", "1"),
    ),
    Case(
        "log-level-high",
        "keeps quiet classes",
        dict(explicit=conf(global_={"log level": "3 auth:2 vfs:5"})),
        "warning",
        (G, "log level", "set", "1 auth:2"),
    ),
    Case(
        "log-level-high",
        "only a class is loud",
        dict(explicit=conf(global_={"log level": "1 vfs:10"})),
        "suggestion",
        (G, "log level", "set", "1"),
    ),
    Case("log-level-high", "level 1", dict(explicit=conf(global_={"log level": "1"})), None),
    Case("log-level-high", "level 2", dict(explicit=conf(global_={"log level": "2"})), None),
    Case(
        "log-level-high", "testparm's own level only", dict(effective=conf(global_={"log level": "1"})), None
    ),
    # socket options
    Case(
        "socket-options-fixed-buffers",
        "the 1999 line",
        dict(explicit=conf(global_={"socket options": "SO_RCVBUF=8192 SO_SNDBUF=8192"})),
        PROBLEM,
        (G, "socket options", "unset", None),
    ),
    Case(
        "socket-options-fixed-buffers",
        "keeps the other flags",
        dict(explicit=conf(global_={"socket options": "TCP_NODELAY SO_RCVBUF=65536 IPTOS_LOWDELAY"})),
        PROBLEM,
        (G, "socket options", "set", "TCP_NODELAY IPTOS_LOWDELAY"),
    ),
    Case(
        "socket-options-fixed-buffers",
        "not Linux",
        dict(explicit=conf(global_={"socket options": "SO_SNDBUF=16384"}), os="FreeBSD"),
        "warning",
        (G, "socket options", "unset", None),
    ),
    Case(
        "socket-options-fixed-buffers",
        "the default",
        dict(explicit=conf(global_={"socket options": "TCP_NODELAY"})),
        None,
    ),
    Case(
        "socket-options-without-nodelay",
        "lost",
        dict(explicit=conf(global_={"socket options": "IPTOS_LOWDELAY"})),
        "warning",
        (G, "socket options", "set", "TCP_NODELAY IPTOS_LOWDELAY"),
    ),
    Case(
        "socket-options-without-nodelay",
        "kept",
        dict(explicit=conf(global_={"socket options": "IPTOS_LOWDELAY TCP_NODELAY"})),
        None,
    ),
    Case(
        "socket-options-without-nodelay",
        "left to the buffer finding",
        dict(explicit=conf(global_={"socket options": "SO_RCVBUF=8192"})),
        None,
    ),
    Case(
        "socket-options-classic-flags",
        "old flags",
        dict(explicit=conf(global_={"socket options": "TCP_NODELAY IPTOS_LOWDELAY SO_KEEPALIVE"})),
        "info",
        (G, "socket options", "unset", None),
    ),
    Case(
        "socket-options-classic-flags",
        "restates the default",
        dict(explicit=conf(global_={"socket options": "TCP_NODELAY"})),
        "info",
        (G, "socket options", "unset", None),
    ),
    Case(
        "socket-options-classic-flags",
        "keeps keepalive timing",
        dict(explicit=conf(global_={"socket options": "SO_KEEPALIVE TCP_KEEPIDLE=60"})),
        "info",
        (G, "socket options", "set", "TCP_NODELAY TCP_KEEPIDLE=60"),
    ),
    Case(
        "socket-options-classic-flags",
        "useful flags only",
        dict(explicit=conf(global_={"socket options": "TCP_NODELAY TCP_KEEPIDLE=60"})),
        None,
    ),
    # durability
    Case(
        "sync-always",
        "with strict sync",
        dict(explicit=conf(bench={"strict sync": "Yes", "sync always": "Yes"})),
        "warning",
        ("bench", "sync always", "unset", None),
        subject="bench",
    ),
    Case(
        "sync-always",
        "strict sync by default on 4.17",
        dict(explicit=conf(bench={"sync always": "Yes"})),
        "warning",
        ("bench", "sync always", "unset", None),
    ),
    Case(
        "sync-always",
        "4.6: strict sync was off by default",
        dict(explicit=conf(bench={"sync always": "Yes"}), version=(4, 6, 0)),
        None,
    ),
    Case(
        "sync-always",
        "sync always in [global], a share overrides it",
        dict(explicit=conf(global_={"sync always": "yes"}, bench={"sync always": "no"})),
        "warning",
        (G, "sync always", "unset", None),
        subject=G,
    ),
    Case(
        "sync-always-without-strict-sync",
        "strict sync off",
        dict(explicit=conf(bench={"strict sync": "No", "sync always": "Yes"})),
        "info",
        ("bench", "sync always", "unset", None),
    ),
    Case(
        "sync-always-without-strict-sync",
        "4.6 default",
        dict(explicit=conf(bench={"sync always": "Yes"}), version=(4, 6, 0)),
        "info",
        ("bench", "sync always", "unset", None),
    ),
    Case(
        "sync-always-without-strict-sync",
        "both on",
        dict(explicit=conf(bench={"strict sync": "Yes", "sync always": "Yes"})),
        None,
    ),
    Case(
        "strict-sync-off",
        "4.17",
        dict(explicit=conf(bench={"strict sync": "no"})),
        "suggestion",
        ("bench", "strict sync", "unset", None),
    ),
    Case(
        "strict-sync-off",
        "4.6: no was the default",
        dict(explicit=conf(bench={"strict sync": "no"}), version=(4, 6, 0)),
        None,
    ),
    Case(
        "strict-sync-off",
        "waits until sync always is gone",
        dict(explicit=conf(bench={"strict sync": "no", "sync always": "yes"})),
        None,
    ),
    # caching and locking
    Case(
        "oplocks-off",
        "share",
        dict(explicit=conf(db={"oplocks": "No"})),
        "suggestion",
        ("db", "oplocks", "unset", None),
        subject="db",
    ),
    Case(
        "oplocks-off",
        "share under a [global] no",
        dict(explicit=conf(global_={"oplocks": "no"}, db={"oplocks": "no"})),
        "suggestion",
        ANY,
    ),
    Case("oplocks-off", "on", dict(explicit=conf(db={"oplocks": "yes"})), None),
    Case(
        "level2-oplocks-off",
        "off",
        dict(explicit=conf(apps={"level2 oplocks": "no"})),
        "suggestion",
        ("apps", "level2 oplocks", "unset", None),
    ),
    Case("level2-oplocks-off", "on", dict(explicit=conf(apps={"level2 oplocks": "yes"})), None),
    Case(
        "fake-oplocks-on",
        "on",
        dict(explicit=conf(cd={"fake oplocks": "yes"})),
        PROBLEM,
        ("cd", "fake oplocks", "unset", None),
    ),
    Case("fake-oplocks-on", "off", dict(explicit=conf(cd={"fake oplocks": "no"})), None),
    Case(
        "kernel-oplocks-on",
        "on",
        dict(explicit=conf(global_={"kernel oplocks": "Yes"})),
        "warning",
        (G, "kernel oplocks", "unset", None),
    ),
    Case("kernel-oplocks-on", "off", dict(explicit=conf(global_={"kernel oplocks": "No"})), None),
    # Before 4.0 yes was the default: removing the line would change nothing.
    Case(
        "kernel-oplocks-on",
        "3.6 had them on by default",
        dict(explicit=conf(global_={"kernel oplocks": "Yes"}), version=(3, 6, 25)),
        None,
    ),
    Case(
        "smb2-leases-off",
        "4.17",
        dict(explicit=conf(global_={"smb2 leases": "No"})),
        "suggestion",
        (G, "smb2 leases", "unset", None),
    ),
    Case(
        "smb2-leases-off",
        "4.4 had no default leases",
        dict(explicit=conf(global_={"smb2 leases": "No"}), version=(4, 4, 0)),
        None,
    ),
    Case(
        "strict-locking-on",
        "yes",
        dict(explicit=conf(db={"strict locking": "Yes"})),
        "suggestion",
        ("db", "strict locking", "unset", None),
    ),
    Case("strict-locking-on", "auto", dict(explicit=conf(db={"strict locking": "Auto"})), None),
    # directory leases (more in test_advisor_directory_leases.py)
    Case("directory-leases", "4.22 default", dict(version=(4, 22, 0)), "info", None, subject=G),
    Case(
        "directory-leases",
        "forced on a cluster",
        dict(
            explicit=conf(global_={"smb3 directory leases": "yes", "clustering": "yes"}), version=(4, 22, 0)
        ),
        "info",
        (G, "smb3 directory leases", "unset", None),
    ),
    Case("directory-leases", "before 4.22", dict(), None),
    # file names
    Case(
        "wide-links-on",
        "effective",
        dict(explicit=conf(global_={"smb1 unix extensions": "No"}, data={"wide links": "Yes"})),
        "warning",
        ("data", "wide links", "unset", None),
    ),
    Case(
        "wide-links-on",
        "allowed insecurely",
        dict(explicit=conf(global_={"allow insecure wide links": "Yes"}, data={"wide links": "Yes"})),
        "warning",
        ("data", "wide links", "unset", None),
    ),
    Case(
        "wide-links-on",
        "ignored because of unix extensions",
        dict(explicit=conf(data={"wide links": "Yes"})),
        "info",
        ("data", "wide links", "unset", None),
    ),
    Case("wide-links-on", "off", dict(explicit=conf(data={"wide links": "No"})), None),
    Case(
        "hide-veto-patterns",
        "30 hidden",
        dict(explicit=conf(data={"hide files": patterns(30)})),
        "suggestion",
        None,
    ),
    Case(
        "hide-veto-patterns",
        "120 vetoed",
        dict(
            explicit=conf(data={"veto files": patterns(120)}),
            measurements=Measurements(metadata=MetadataRate(2400.0, "bench")),
        ),
        "warning",
        None,
    ),
    Case("hide-veto-patterns", "a handful", dict(explicit=conf(data={"veto files": patterns(6)})), None),
    Case("hide-unreadable-on", "on", dict(explicit=conf(data={"hide unreadable": "Yes"})), "info", None),
    Case("hide-unreadable-on", "off", dict(explicit=conf(data={"hide unreadable": "No"})), None),
    Case(
        "large-directories-case",
        "scans",
        dict(measurements=dirscale((1000, 0.010, False), (20000, 0.190, False), (20000, 0.012, True))),
        "suggestion",
        ("data", "case sensitive", "set", "yes"),
        subject="data",
        also=[("data", "preserve case", "set", "no"), ("data", "short preserve case", "set", "no")],
    ),
    Case(
        "large-directories-case",
        "flat lookups",
        dict(measurements=dirscale((1000, 0.010, False), (20000, 0.012, False))),
        None,
    ),
    Case(
        "large-directories-case",
        "small directories only",
        dict(measurements=dirscale((100, 0.001, False), (5000, 0.05, False))),
        None,
    ),
    Case(
        "large-directories-case",
        "already case sensitive",
        dict(
            explicit=conf(data={"case sensitive": "yes"}),
            measurements=dirscale((1000, 0.010, False), (20000, 0.190, False)),
        ),
        None,
    ),
    Case(
        "case-sensitive-incomplete",
        "half a recipe",
        dict(explicit=conf(data={"case sensitive": "Yes"})),
        "warning",
        ("data", "preserve case", "set", "no"),
        also=[("data", "short preserve case", "set", "no")],
    ),
    Case(
        "case-sensitive-incomplete",
        "the whole recipe",
        dict(
            explicit=conf(
                data={
                    "case sensitive": "Yes",
                    "default case": "lower",
                    "preserve case": "No",
                    "short preserve case": "No",
                }
            )
        ),
        None,
    ),
    Case(
        "case-sensitive-in-global",
        "global",
        dict(explicit=conf(global_={"case sensitive": "yes"})),
        "warning",
        (G, "case sensitive", "unset", None),
    ),
    Case("case-sensitive-in-global", "auto", dict(explicit=conf(global_={"case sensitive": "auto"})), None),
    # disk I/O
    Case(
        "aio-size-not-default",
        "old snippet",
        dict(explicit=conf(data={"aio read size": "16384"})),
        "suggestion",
        ("data", "aio read size", "unset", None),
    ),
    Case(
        "aio-size-not-default",
        "off",
        dict(explicit=conf(data={"aio write size": "0"})),
        "suggestion",
        ("data", "aio write size", "unset", None),
    ),
    Case("aio-size-not-default", "the default", dict(explicit=conf(data={"aio read size": "1"})), None),
    Case(
        "aio-size-not-default",
        "4.7 needed such values",
        dict(explicit=conf(data={"aio read size": "16384"}), version=(4, 7, 0)),
        None,
    ),
    Case(
        "sendfile-no-effect",
        "encrypted share",
        dict(explicit=conf(data={"use sendfile": "yes", "server smb encrypt": "required"})),
        "info",
        ("data", "use sendfile", "unset", None),
    ),
    Case("sendfile-no-effect", "plain share", dict(explicit=conf(data={"use sendfile": "yes"})), None),
    Case(
        "sendfile-worth-trying",
        "room below the network",
        dict(measurements=throughput(smb_read=50, network=117)),
        "suggestion",
        (G, "use sendfile", "set", "yes"),
    ),
    Case(
        "sendfile-worth-trying",
        "signing required",
        dict(
            explicit=conf(global_={"server signing": "mandatory"}),
            measurements=throughput(smb_read=50, network=117),
        ),
        None,
    ),
    Case(
        "sendfile-worth-trying",
        "at the limit",
        dict(measurements=throughput(smb_read=112, network=117)),
        None,
    ),
    Case(
        "strict-allocate-slow-filesystem",
        "zfs",
        dict(explicit=conf(data={"strict allocate": "yes"}), filesystems={"data": "zfs"}),
        "warning",
        ("data", "strict allocate", "unset", None),
    ),
    Case(
        "strict-allocate-slow-filesystem",
        "ext4",
        dict(explicit=conf(data={"strict allocate": "yes"}), filesystems={"data": "ext4"}),
        None,
    ),
    # io_uring (more in test_advisor_io_uring.py)
    Case(
        "io-uring-unusable",
        "before 4.12",
        dict(explicit=conf(data={"vfs objects": "io_uring"}), version=V410),
        "problem",
        ("data", "vfs objects", "unset", None),
    ),
    Case("io-uring-unusable", "facts unknown", dict(explicit=conf(data={"vfs objects": "io_uring"})), None),
    Case(
        "io-uring-not-last",
        "before fruit",
        dict(explicit=conf(data={"vfs objects": "io_uring fruit streams_xattr"})),
        "warning",
        ("data", "vfs objects", "set", "fruit streams_xattr io_uring"),
    ),
    Case("io-uring-not-last", "last", dict(explicit=conf(data={"vfs objects": "fruit io_uring"})), None),
    Case(
        "io-uring-worth-trying",
        "module and kernel",
        dict(
            explicit=conf(data={"path": "/srv"}),
            facts=dict(kernel_release="6.1.0-18-amd64", vfs_modules=("io_uring",)),
        ),
        "suggestion",
        (G, "vfs objects", "set", "io_uring"),
    ),
    Case(
        "io-uring-worth-trying",
        "kernel 5.0",
        dict(
            explicit=conf(data={"path": "/srv"}),
            facts=dict(kernel_release="5.0.21", vfs_modules=("io_uring",)),
        ),
        None,
    ),
    # protocol
    Case(
        "smb1-enabled",
        "lowered on 4.17",
        dict(explicit=conf(global_={"server min protocol": "NT1"})),
        "suggestion",
        (G, "server min protocol", "unset", None),
    ),
    Case(
        "smb1-enabled",
        "4.10 default",
        dict(version=V410),
        "suggestion",
        (G, "server min protocol", "set", "SMB2_02"),
    ),
    Case("smb1-enabled", "4.17 default", dict(), None),
    # Samba matches enum values ignoring case and blanks, so this is NT1 too.
    Case(
        "smb1-enabled",
        "written 'nt 1'",
        dict(explicit=conf(global_={"server min protocol": "nt 1"})),
        "suggestion",
        (G, "server min protocol", "unset", None),
    ),
    Case(
        "protocol-max-below-smb3",
        "SMB2",
        dict(explicit=conf(global_={"server max protocol": "SMB2"})),
        "warning",
        (G, "server max protocol", "unset", None),
    ),
    Case(
        "protocol-max-below-smb3",
        "NT1",
        dict(explicit=conf(global_={"server max protocol": "NT1"})),
        PROBLEM,
        (G, "server max protocol", "unset", None),
    ),
    Case(
        "protocol-max-below-smb3", "SMB3", dict(effective=conf(global_={"server max protocol": "SMB3"})), None
    ),
    Case(
        "protocol-max-below-smb3",
        "written 'smb 3_11'",
        dict(explicit=conf(global_={"server max protocol": "smb 3_11"})),
        None,
    ),
    Case(
        "multichannel-off",
        "two links",
        dict(explicit=conf(global_={"server multi channel support": "No"}), nics=(nic("eth0"), nic("eth1"))),
        "suggestion",
        (G, "server multi channel support", "unset", None),
    ),
    Case(
        "multichannel-off",
        "one plain link",
        dict(explicit=conf(global_={"server multi channel support": "No"}), nics=(nic(),)),
        "info",
        (G, "server multi channel support", "unset", None),
    ),
    Case(
        "multichannel-off",
        "experimental on 4.12",
        dict(explicit=conf(global_={"server multi channel support": "Yes"}), version=V412),
        "warning",
        (G, "server multi channel support", "unset", None),
    ),
    Case(
        "multichannel-off",
        "4.12 with two links: upgrade",
        dict(nics=(nic("eth0"), nic("eth1")), version=V412),
        "info",
        None,
    ),
    Case("multichannel-off", "4.17 default", dict(nics=(nic("eth0"), nic("eth1"))), None),
    Case(
        "signing-required-cost",
        "mandatory",
        dict(effective=conf(global_={"server signing": "mandatory"})),
        "info",
        (G, "server signing", "unset", None),
    ),
    Case(
        "signing-required-cost",
        "domain controller",
        dict(
            effective=conf(
                global_={"server signing": "mandatory", "server role": "active directory domain controller"}
            )
        ),
        None,
    ),
    Case(
        "signing-required-cost", "default", dict(effective=conf(global_={"server signing": "default"})), None
    ),
    Case(
        "encryption-required-cost",
        "one share",
        dict(explicit=conf(secret={"server smb encrypt": "required"})),
        "info",
        ("secret", "server smb encrypt", "unset", None),
    ),
    Case(
        "encryption-required-cost",
        "pre-4.14 name, desired",
        dict(explicit=conf(global_={"smb encrypt": "desired"}), version=(4, 13, 0)),
        "info",
        (G, "smb encrypt", "unset", None),
    ),
    Case(
        "encryption-required-cost",
        "default",
        dict(explicit=conf(global_={"server smb encrypt": "default"})),
        None,
    ),
    Case(
        "hostname-lookups-on",
        "on",
        dict(explicit=conf(global_={"hostname lookups": "Yes"})),
        "suggestion",
        (G, "hostname lookups", "unset", None),
    ),
    Case("hostname-lookups-on", "off", dict(explicit=conf(global_={"hostname lookups": "No"})), None),
    # SMB1-only and removed parameters
    Case(
        "smb1-parameter-without-smb1",
        "read raw on 4.17",
        dict(explicit=conf(global_={"read raw": "No"})),
        "info",
        (G, "read raw", "unset", None),
    ),
    Case(
        "smb1-parameter-without-smb1",
        "max xmit on 4.17",
        dict(explicit=conf(global_={"max xmit": "65535"})),
        "info",
        (G, "max xmit", "unset", None),
    ),
    Case(
        "smb1-parameter-without-smb1",
        "4.10 still speaks SMB1",
        dict(explicit=conf(global_={"read raw": "No"}), version=V410),
        None,
    ),
    Case(
        "smb1-parameter-without-smb1",
        "unix extensions decide wide links",
        dict(explicit=conf(global_={"smb1 unix extensions": "No"})),
        None,
    ),
    # Issue 16: smb_roundup() (source3/smbd/smb2_trans2.c) rounds for SMB2/3 clients too.
    Case(
        "smb1-parameter-without-smb1",
        "allocation roundup size is not SMB1-only",
        dict(explicit=conf(data={"allocation roundup size": "1048576"})),
        None,
    ),
    Case(
        "smb1-raw-disabled",
        "4.10",
        dict(explicit=conf(global_={"write raw": "no"}), version=V410),
        "suggestion",
        (G, "write raw", "unset", None),
    ),
    Case(
        "smb1-raw-disabled",
        "4.17 with SMB1 turned back on",
        dict(explicit=conf(global_={"read raw": "no", "server min protocol": "NT1"})),
        "suggestion",
        (G, "read raw", "unset", None),
    ),
    Case("smb1-raw-disabled", "4.17", dict(explicit=conf(global_={"read raw": "no"})), None),
    Case(
        "smb1-max-xmit-small",
        "2048 on 4.10",
        dict(explicit=conf(global_={"max xmit": "2048"}), version=V410),
        "suggestion",
        (G, "max xmit", "unset", None),
    ),
    Case(
        "smb1-max-xmit-small",
        "1024 on 4.10",
        dict(explicit=conf(global_={"max xmit": "1024"}), version=V410),
        "warning",
        ANY,
    ),
    Case(
        "smb1-max-xmit-small", "65535", dict(explicit=conf(global_={"max xmit": "65535"}), version=V410), None
    ),
    Case(
        "removed-parameter",
        "read size",
        dict(explicit=conf(global_={"read size": "16384"})),
        "info",
        (G, "read size", "unset", None),
    ),
    Case(
        "removed-parameter",
        "share modes, spelled oddly",
        dict(explicit=conf(data={"Share Modes": "no"})),
        "info",
        ("data", "share modes", "unset", None),
    ),
    Case(
        "removed-parameter",
        "getwd cache on 4.25",
        dict(explicit=conf(global_={"getwd cache": "yes"}), version=(4, 25, 0)),
        "info",
        (G, "getwd cache", "unset", None),
    ),
    Case(
        "removed-parameter",
        "directory name cache size still on 4.17",
        dict(explicit=conf(global_={"directory name cache size": "100"})),
        None,
    ),
    Case("removed-parameter", "a current parameter", dict(explicit=conf(global_={"oplocks": "yes"})), None),
    Case(
        "getwd-cache-set",
        "restates the default",
        dict(explicit=conf(global_={"getwd cache": "yes"})),
        "info",
        (G, "getwd cache", "unset", None),
    ),
    Case(
        "getwd-cache-set",
        "turned off",
        dict(explicit=conf(global_={"getwd cache": "no"})),
        "suggestion",
        (G, "getwd cache", "unset", None),
    ),
    Case(
        "getwd-cache-set",
        "4.25 leaves it to removed-parameter",
        dict(explicit=conf(global_={"getwd cache": "yes"}), version=(4, 25, 0)),
        None,
    ),
    # network
    Case("nic-slow-link", "100 Mbit/s", dict(nics=(nic(speed=100),)), PROBLEM, "server-host", subject="eth0"),
    Case("nic-slow-link", "1 Gbit/s", dict(nics=(nic(speed=1000),)), None),
    Case("nic-slow-link", "down", dict(nics=(nic(speed=100, up=False),)), None),
    Case("nic-half-duplex", "half", dict(nics=(nic(duplex="half"),)), PROBLEM, "server-host"),
    Case("nic-half-duplex", "full", dict(nics=(nic(),)), None),
    Case(
        "nic-mtu-mismatch",
        "1500 and 9000",
        dict(nics=(nic("eth0"), nic("eth1", mtu=9000))),
        "info",
        "server-host",
    ),
    Case("nic-mtu-mismatch", "alike", dict(nics=(nic("eth0"), nic("eth1"))), None),
    Case(
        "path-mtu-mismatch",
        "jumbo both ends, not on the way",
        dict(
            nics=(nic(mtu=9000),),
            measurements=Measurements(path=NetworkPath(1e9, 0.001, path_mtu=1500, client_mtu=9000)),
        ),
        "warning",
        "server-host",
    ),
    Case(
        "path-mtu-mismatch",
        "client at 1500: MSS protects",
        dict(
            nics=(nic(mtu=9000),),
            measurements=Measurements(path=NetworkPath(1e9, 0.001, path_mtu=1500, client_mtu=1500)),
        ),
        None,
    ),
    Case(
        "tcp-window-scaling-off",
        "off",
        dict(tcp={"net.ipv4.tcp_window_scaling": "0"}),
        PROBLEM,
        "server-host",
    ),
    Case("tcp-window-scaling-off", "on", dict(tcp={"net.ipv4.tcp_window_scaling": "1"}), None),
    Case(
        "client-window-below-bdp",
        "64 KiB at 1 Gbit/s x 2 ms",
        dict(measurements=Measurements(path=PATH_1G_2MS, client_window=ClientWindow(65536, "test"))),
        "warning",
        "client",
    ),
    Case(
        "client-window-below-bdp",
        "big enough",
        dict(measurements=Measurements(path=PATH_1G_2MS, client_window=ClientWindow(4 << 20, "test"))),
        None,
    ),
    Case(
        "client-window-below-bdp",
        "no path",
        dict(measurements=Measurements(client_window=ClientWindow(65536))),
        None,
    ),
    Case(
        "server-buffers-below-bdp",
        "10 Gbit/s x 10 ms",
        dict(
            tcp={"net.ipv4.tcp_rmem": "4096 131072 33554432", "net.ipv4.tcp_wmem": "4096 16384 4194304"},
            measurements=Measurements(path=PATH_10G_10MS),
        ),
        "warning",
        "server-host",
    ),
    Case(
        "server-buffers-below-bdp",
        "LAN",
        dict(tcp={"net.ipv4.tcp_wmem": "4096 16384 4194304"}, measurements=Measurements(path=PATH_1G_2MS)),
        None,
    ),
    Case(
        "smb-throughput-vs-ceiling",
        "far below the network",
        dict(measurements=throughput(smb_read=30, network=117)),
        "warning",
        None,
    ),
    Case(
        "smb-throughput-vs-ceiling",
        "at the disk's limit",
        dict(measurements=throughput(smb_write=95, disk_write=100, network=117)),
        "info",
        None,
    ),
    Case(
        "smb-throughput-vs-ceiling",
        "between low and the limit",
        dict(measurements=throughput(smb_read=90, network=117)),
        None,
    ),
    Case(
        "smb-throughput-vs-ceiling",
        "link speed as the ceiling",
        dict(nics=(nic(speed=1000),), measurements=throughput(smb_read=20)),
        "warning",
        None,
    ),
    # Mac clients (vfs_fruit) and cheap signing/encryption (tests/test_advisor_macos.py,
    # tests/test_advisor_signing.py go further)
    Case(
        "macos-fruit-not-on-every-share",
        "one share without fruit",
        dict(
            explicit=conf(
                mac={"path": "/srv/mac", "vfs objects": "catia fruit streams_xattr"},
                plain={"path": "/srv/plain", "vfs objects": "acl_xattr"},
            )
        ),
        "warning",
        ("plain", "vfs objects", "set", "acl_xattr catia fruit streams_xattr"),
        subject="plain",
    ),
    Case(
        "macos-fruit-not-on-every-share",
        "fruit in global",
        dict(explicit=conf(global_={"vfs objects": "catia fruit streams_xattr"}, data={"path": "/srv"})),
        None,
    ),
    Case(
        "macos-listing-max-access",
        "fruit share",
        dict(explicit=conf(mac={"path": "/srv/mac", "vfs objects": "catia fruit streams_xattr"})),
        "suggestion",
        (G, "readdir_attr:aapl_max_access", "set", "no"),
    ),
    Case(
        "macos-listing-max-access",
        "already off",
        dict(
            explicit=conf(
                global_={"readdir_attr:aapl_max_access": "no"},
                mac={"path": "/srv/mac", "vfs objects": "catia fruit streams_xattr"},
            )
        ),
        None,
    ),
    Case(
        "macos-ds-store",
        "fruit share",
        dict(explicit=conf(mac={"path": "/srv/mac", "vfs objects": "catia fruit streams_xattr"})),
        "info",
        ("mac", "veto files", "set", "/.DS_Store/"),
        also=[("mac", "delete veto files", "set", "yes")],
    ),
    Case("macos-ds-store", "no fruit", dict(explicit=conf(data={"path": "/srv"})), None),
    Case(
        "signing-gmac-not-first",
        "CMAC first, signing required",
        dict(
            explicit=conf(
                global_={
                    "server signing": "mandatory",
                    "server smb3 signing algorithms": "AES-128-CMAC, AES-128-GMAC, HMAC-SHA256",
                }
            )
        ),
        "suggestion",
        (G, "server smb3 signing algorithms", "unset", None),
    ),
    Case(
        "signing-gmac-not-first",
        "default list",
        dict(explicit=conf(global_={"server signing": "mandatory"})),
        None,
    ),
    Case(
        "encryption-gcm-not-first",
        "CCM first, a share encrypts",
        dict(
            explicit=conf(
                global_={"server smb3 encryption algorithms": "AES-256-CCM AES-128-GCM"},
                secret={"server smb encrypt": "required"},
            )
        ),
        "suggestion",
        (G, "server smb3 encryption algorithms", "set", "AES-256-GCM, AES-256-CCM, AES-128-GCM"),
    ),
    Case(
        "encryption-gcm-not-first",
        "nothing encrypts",
        dict(explicit=conf(global_={"server smb3 encryption algorithms": "AES-128-CCM AES-128-GCM"})),
        None,
    ),
    Case(
        "encryption-required-global",
        "required everywhere",
        dict(explicit=conf(global_={"server smb encrypt": "required"}, data={"path": "/srv"})),
        "suggestion",
        (G, "server smb encrypt", "unset", None),
    ),
    Case(
        "encryption-required-global",
        "only a share",
        dict(explicit=conf(secret={"server smb encrypt": "required"})),
        None,
    ),
    Case(
        "clients-costly-signing",
        "an SMB 3.0.2 client",
        dict(clients=audit(session("SMB3_02", signing="AES-128-CMAC"))),
        "info",
        None,
    ),
    Case("clients-costly-signing", "GMAC", dict(clients=audit(session())), None),
    # what to measure next
    Case("measure-network-path", "missing", dict(), "info", None),
    Case("measure-network-path", "given", dict(measurements=Measurements(path=PATH_1G_2MS)), None),
    Case("measure-client-window", "missing", dict(), "info", None),
    Case(
        "measure-client-window",
        "given",
        dict(measurements=Measurements(client_window=ClientWindow(65536))),
        None,
    ),
    Case("measure-directory-scaling", "missing", dict(), "info", None),
    Case("measure-directory-scaling", "given", dict(measurements=dirscale((1000, 0.01, False))), None),
    Case("measure-throughput", "missing", dict(), "info", None),
    Case("measure-throughput", "given", dict(measurements=throughput(smb_write=90)), None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    findings = run(case.rule, **case.kwargs)
    if case.severity is None:
        assert findings == [], [f.title for f in findings]
        return
    assert len(findings) >= 1
    finding = findings[0]
    assert finding.id == case.rule
    assert finding.severity == case.severity
    if case.subject is not None:
        assert finding.subject == case.subject
    if case.change is None:
        assert finding.change is None
    elif isinstance(case.change, str):
        assert finding.change is not None and finding.change.kind == case.change
    elif case.change is not ANY:
        data = finding.change.to_json() if finding.change else None
        assert data is not None, "expected a change"
        assert (data["section"], data["parameter"], data["action"], data["value"]) == case.change
        also = [(a["section"], a["parameter"], a["action"], a["value"]) for a in data.get("also", [])]
        assert also == case.also
    for text in (finding.title, finding.expected_effect, finding.effect_source, finding.risk):
        assert text.strip() and text == text.strip()
    json = finding.to_json()
    assert json["id"] == case.rule and json["evidence"]


def test_every_rule_has_a_case_that_fires_and_one_that_does_not() -> None:
    fires = {c.rule for c in CASES if c.severity is not None}
    silent = {c.rule for c in CASES if c.severity is None}
    assert set(RULE_IDS) == fires, f"no firing case for {sorted(set(RULE_IDS) - fires)}"
    assert set(RULE_IDS) == silent, f"no silent case for {sorted(set(RULE_IDS) - silent)}"
    assert len(set(RULE_IDS)) == len(RULE_IDS), "rule ids must be unique"


def test_single_channel_says_when_the_client_reaches_only_one_interface() -> None:
    """10.0.0.9 shares a subnet with eth0 only: the other link is not directly reachable."""
    apart = run("clients-single-channel", clients=audit(session(), interfaces=TWO_LINKS))
    together = run("clients-single-channel", clients=audit(session(), interfaces=TWO_LINKS_ONE_SUBNET))
    assert "subnet with only one of the advertised interfaces" in apart[0].expected_effect
    assert "subnet" not in together[0].expected_effect
    assert "eth0 (10000 Mbit/s)" in together[0].evidence[-1].text
    assert any("Microsoft" in s for s in together[0].sources)


def test_severities_are_the_four_known_ones() -> None:
    assert SEVERITIES == ("problem", "warning", "suggestion", "info")


# --- details the table cannot show --------------------------------------------------------


def test_a_share_under_a_global_no_sets_the_default_explicitly() -> None:
    findings = run("oplocks-off", explicit=conf(global_={"oplocks": "no"}, db={"oplocks": "no"}))
    changes = {f.subject: f.change.to_json() for f in findings if f.change}
    assert changes["global"]["action"] == "unset"
    # Removing the share's line would inherit [global]'s "no": set the default instead.
    assert (changes["db"]["action"], changes["db"]["value"]) == ("set", "yes")


def test_fixed_buffers_show_what_they_allow_at_the_measured_rtt() -> None:
    [finding] = run(
        "socket-options-fixed-buffers",
        explicit=conf(global_={"socket options": "SO_RCVBUF=8192 SO_SNDBUF=8192"}),
        measurements=Measurements(path=PATH_1G_2MS),
    )
    assert "32.8 Mbit/s at the measured round trip of 2 ms" in finding.expected_effect
    [example] = run(
        "socket-options-fixed-buffers", explicit=conf(global_={"socket options": "SO_RCVBUF=8192"})
    )
    assert "1 ms LAN round trip" in example.expected_effect


def test_large_directories_quote_the_users_own_measurement_when_there_is_one() -> None:
    [measured] = run(
        "large-directories-case",
        measurements=dirscale((1000, 0.010, False), (20000, 0.190, False), (20000, 0.012, True)),
    )
    assert measured.effect_source.startswith("Your measurement at 20,000 files")
    [ours] = run("large-directories-case", measurements=dirscale((1000, 0.010, False), (20000, 0.190, False)))
    assert "SambaTune measurement" in ours.effect_source
    assert "rename" in ours.risk.lower()


def test_client_window_finding_plans_the_client_change() -> None:
    [finding] = run(
        "client-window-below-bdp",
        measurements=Measurements(path=PATH_1G_2MS, client_window=ClientWindow(65536, "test")),
    )
    assert finding.change is not None
    data = finding.change.to_json()
    assert data["command"] == "sambatune client plan --bandwidth 1000mbit --rtt 2ms"
    assert "250,000 bytes" in data["description"]
    assert "262 Mbit/s" in finding.expected_effect


def test_server_buffer_finding_names_only_the_short_direction() -> None:
    findings = run(
        "server-buffers-below-bdp",
        tcp={"net.ipv4.tcp_rmem": "4096 131072 33554432", "net.ipv4.tcp_wmem": "4096 16384 4194304"},
        measurements=Measurements(path=PATH_10G_10MS),
    )
    assert [f.change.to_json()["target"] for f in findings if f.change] == ["net.ipv4.tcp_wmem"]
    assert findings[0].change is not None
    assert findings[0].change.to_json()["command"] == "sysctl -w net.ipv4.tcp_wmem='4096 16384 25000000'"


def test_an_unknown_version_is_judged_as_the_reference_and_says_so() -> None:
    [finding] = run("smb1-parameter-without-smb1", explicit=conf(global_={"read raw": "no"}), version=None)
    assert "unknown Samba version (judged as 4.17.12" in finding.applies_to_version


def test_removed_parameter_uses_the_removal_record() -> None:
    [finding] = run("removed-parameter", explicit=conf(global_={"read prediction": "yes"}))
    assert "removed in Samba 2.2.0" in finding.title
    assert "Samba git commit b9fedcb2de5" in " ".join(finding.sources)


@pytest.mark.parametrize("name", ["hide files", "veto files"])
@pytest.mark.parametrize("count", [MANY_NAME_PATTERNS - 1, MANY_NAME_PATTERNS])
def test_lint_and_the_advisor_speak_about_long_pattern_lists_at_the_same_count(name: str, count: int) -> None:
    """One threshold for both: the editor's lint and the advisor never disagree on it."""
    advised = run("hide-veto-patterns", explicit=conf(data={name: patterns(count)}))
    text = f"[data]\n  path = /srv/data\n  {name} = {patterns(count)}\n"
    linted = [
        f
        for f in lint(SmbConfDocument(text, "smb.conf"), load_bundled("4.17"))
        if f.code == "many-hide-veto-patterns"
    ]
    assert bool(advised) == bool(linted) == (count >= MANY_NAME_PATTERNS)
