"""The fleet the Fleet window works on: its hosts, where they came from, how to reach them.

Every tab asks this one object, so a survey, a drift, a rollout and an export all reach
the same hosts with the same host-key rules: SambaTune's known_hosts and
~/.ssh/known_hosts, an unknown key refused (nobody can compare twenty fingerprints at
once; a host is opened as a single server to accept its key there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.fleet.ansible_inventory import VaultPasswords, load_inventory
from sambatune.fleet.inventory import Fleet, FleetHost, fleet_by_hand, fleet_from_ssh_config
from sambatune.remote.transport import Transport

INVENTORY = "inventory"
SSH_CONFIG = "ssh_config"
BY_HAND = "hosts"


@dataclass(frozen=True)
class FleetSource:
    """Where the hosts come from, in the words of ``sambatune fleet --inventory/--ssh-config
    /--hosts --limit``: a rollout records it so either the app or the CLI can resume it."""

    kind: str  # INVENTORY, SSH_CONFIG or BY_HAND
    value: str  # the inventory's path, the ssh config's path ("" for ~/.ssh/config), or the list
    limit: str = ""
    known_hosts: str | None = None  # tests and special setups; None: the usual files
    # The inventory's vault secrets, typed in this window: memory only, never recorded.
    vault: VaultPasswords | None = field(default=None, compare=False, repr=False)

    def load(self) -> Fleet:
        """Read the hosts (disk only: run it off the GUI thread)."""
        if self.kind == INVENTORY:
            fleet = load_inventory(Path(self.value).expanduser(), self.vault)
        elif self.kind == SSH_CONFIG:
            fleet = fleet_from_ssh_config(Path(self.value).expanduser() if self.value else None)
        else:
            fleet = fleet_by_hand(self.typed_hosts())
        return fleet.select(self.limit or None)

    def typed_hosts(self) -> list[str]:
        """The hosts typed by hand: the window's field takes commas or blanks between them."""
        return self.value.replace(",", " ").split()

    def to_record(self) -> dict[str, Any]:
        """The ``source`` of a rollout record, as ``fleet apply`` writes it."""
        return {
            "inventory": str(Path(self.value).expanduser().resolve()) if self.kind == INVENTORY else None,
            "ssh_config": str(Path(self.value).expanduser().resolve())
            if self.kind == SSH_CONFIG and self.value
            else None,
            # As --hosts takes them (commas only), so `fleet apply --resume` reads the same hosts.
            "hosts": ",".join(self.typed_hosts()) if self.kind == BY_HAND else None,
            "limit": self.limit or None,
            "known_hosts": self.known_hosts,
        }

    @classmethod
    def from_record(cls, source: dict[str, Any]) -> FleetSource:
        limit = str(source.get("limit") or "")
        known = source.get("known_hosts")
        if source.get("inventory"):
            return cls(INVENTORY, str(source["inventory"]), limit, known)
        if source.get("hosts"):
            return cls(BY_HAND, str(source["hosts"]), limit, known)
        return cls(SSH_CONFIG, str(source.get("ssh_config") or ""), limit, known)

    @property
    def base_dir(self) -> Path | None:
        """The inventory's folder: relative ``samba_overlay`` files are read from there."""
        return Path(self.value).expanduser().resolve().parent if self.kind == INVENTORY else None

    def describe(self) -> str:
        where = {
            INVENTORY: f"the inventory {self.value}",
            SSH_CONFIG: f"the ssh config {self.value or '~/.ssh/config'}",
            BY_HAND: "hosts typed by hand",
        }[self.kind]
        return f"{where}, limited to {self.limit}" if self.limit else where


@dataclass(frozen=True)
class LoadedFleet:
    """A fleet read from its source."""

    source: FleetSource
    fleet: Fleet

    @property
    def hosts(self) -> tuple[FleetHost, ...]:
        return self.fleet.hosts

    @property
    def known_hosts(self) -> Path | None:
        return Path(self.source.known_hosts) if self.source.known_hosts else None

    def connect(self, host: FleetHost) -> Transport:
        """One host over SSH with the fleet's host-key rules (an unknown key is refused)."""
        from sambatune.fleet.live import connect

        return connect(host, known_hosts=self.known_hosts, ssh_config=self.fleet.ssh_config)
