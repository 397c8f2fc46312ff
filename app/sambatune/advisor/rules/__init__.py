"""Every rule the advisor runs, in one list, grouped by topic.

A rule is a small pure function of the inputs (configuration, server facts,
measurements, parameter knowledge) that yields findings with its own id.
"""

from __future__ import annotations

from sambatune.advisor.rule import Rule
from sambatune.advisor.rules import (
    durability,
    filenames,
    io,
    locking,
    logs,
    measure,
    network,
    protocol,
    removed,
    smb1,
    sockets,
)

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
    durability.strict_sync_off,
    # caching and locking
    locking.oplocks_off,
    locking.level2_oplocks_off,
    locking.fake_oplocks_on,
    locking.kernel_oplocks_on,
    locking.smb2_leases_off,
    locking.strict_locking_on,
    # file names and directories
    filenames.wide_links_on,
    filenames.hide_veto_patterns,
    filenames.hide_unreadable_on,
    filenames.large_directories_case,
    filenames.case_sensitive_incomplete,
    filenames.case_sensitive_in_global,
    # disk I/O
    io.aio_size_not_default,
    io.sendfile_no_effect,
    io.sendfile_worth_trying,
    io.strict_allocate_slow_filesystem,
    # protocol
    protocol.smb1_on,
    protocol.protocol_max_below_smb3,
    protocol.multichannel_off,
    protocol.signing_required_cost,
    protocol.encryption_required_cost,
    protocol.hostname_lookups_on,
    # SMB1-only and removed parameters
    smb1.smb1_parameter_without_smb1,
    smb1.smb1_raw_disabled,
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
    measure.measure_network_path,
    measure.measure_client_window,
    measure.measure_directory_scaling,
    measure.measure_throughput,
)

RULE_IDS = tuple(r.id for r in RULES)


def rule_by_id(rule_id: str) -> Rule:
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(rule_id)
