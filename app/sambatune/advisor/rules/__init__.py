"""Every rule the advisor runs, in one list, grouped by topic.

A rule is a small pure function of the inputs (configuration, server facts,
measurements, parameter knowledge) that yields findings with its own id. Rules that
compute are code in these modules; toggles and missing measurements are entries of
resources/advisor/rules.json, placed here by id because the order of this list is the
order of equally severe findings.
"""

from __future__ import annotations

from sambatune.advisor.rule import Rule
from sambatune.advisor.rules import (
    clients,
    durability,
    filenames,
    io,
    leases,
    logs,
    macos,
    network,
    protocol,
    removed,
    signing,
    smb1,
    sockets,
)
from sambatune.advisor.rules.measure import missing_measurement
from sambatune.advisor.rules.toggles import toggle

RULES: tuple[Rule, ...] = (
    # logging
    logs.log_level_high,
    # socket options
    sockets.fixed_buffers,
    sockets.without_nodelay,
    sockets.classic_flags,
    # durability
    durability.sync_always,
    durability.sync_always_without_strict_sync,
    toggle("strict-sync-off"),
    # caching and locking
    toggle("oplocks-off"),
    toggle("level2-oplocks-off"),
    toggle("fake-oplocks-on"),
    toggle("kernel-oplocks-on"),
    toggle("smb2-leases-off"),
    toggle("strict-locking-on"),
    leases.directory_leases,
    # file names and directories
    filenames.wide_links_on,
    filenames.hide_veto_patterns,
    toggle("hide-unreadable-on"),
    filenames.large_directories_case,
    filenames.case_sensitive_incomplete,
    toggle("case-sensitive-in-global"),
    # Mac clients (vfs_fruit)
    macos.fruit_not_on_every_share,
    macos.listing_max_access,
    macos.ds_store,
    # disk I/O
    io.aio_size_not_default,
    io.sendfile_no_effect,
    io.sendfile_worth_trying,
    io.strict_allocate_slow_filesystem,
    io.io_uring_unusable,
    io.io_uring_not_last,
    io.io_uring_worth_trying,
    # protocol
    protocol.smb1_on,
    protocol.protocol_max_below_smb3,
    protocol.multichannel_off,
    protocol.signing_required_cost,
    protocol.encryption_required_cost,
    signing.signing_gmac_not_first,
    signing.encryption_gcm_not_first,
    signing.encryption_required_global,
    toggle("hostname-lookups-on"),
    # who is connected and how (the survey's client audit)
    clients.smb1_clients,
    clients.unsigned_clients,
    clients.smb2_clients,
    clients.single_channel,
    signing.clients_costly_signing,
    # SMB1-only and removed parameters
    smb1.smb1_parameter_without_smb1,
    toggle("smb1-raw-disabled"),
    smb1.smb1_max_xmit_small,
    removed.removed_parameter,
    removed.getwd_cache_set,
    # network
    network.nic_slow_link,
    network.nic_half_duplex,
    network.nic_mtu_mismatch,
    network.path_mtu_mismatch,
    network.tcp_window_scaling_off,
    network.client_window_below_bdp,
    network.server_buffers_below_bdp,
    network.smb_throughput_vs_ceiling,
    # what to measure next
    missing_measurement("measure-network-path"),
    missing_measurement("measure-client-window"),
    missing_measurement("measure-directory-scaling"),
    missing_measurement("measure-throughput"),
)

RULE_IDS = tuple(r.id for r in RULES)


def rule_by_id(rule_id: str) -> Rule:
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(rule_id)
