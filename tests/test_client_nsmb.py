"""macOS SMB client plans: /etc/nsmb.conf edited line by line in a real file (a temporary
directory stands in for /etc), exact restore including "the file did not exist", and
DSDontWriteNetworkStores through a fake of the ``defaults`` command (the only part that
needs macOS)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.macos_system import MacSystem
from sambatune.client.nsmb_conf import read_key, set_key
from sambatune.client.osinfo import OsInfo
from sambatune.client.plan import ClientPlan
from sambatune.client.planner import Measurements, build_plan
from sambatune.remote.transport import CommandResult

MAC = OsInfo("macos", "macos", "macOS 15.4", "15.4", "macos")

# Shaped like the examples people publish for Macs on Samba servers: comments, a
# [default] section, a per-server section, CRLF-free, no newline at the very end.
NSMB = b"""# /etc/nsmb.conf - SMB client settings for this Mac
# see man nsmb.conf
[default]
signing_required=yes
# keep SMB1 off
protocol_vers_map=6
streams=yes

[nas.example]
port445=no_netbios"""


@dataclass
class FakeDefaults:
    """``defaults read/write/delete`` as on a Mac; anything else fails like a missing tool."""

    values: dict[tuple[str, str], str] = field(default_factory=dict)
    log: list[list[str]] = field(default_factory=list)

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult:
        args = list(argv)
        self.log.append(args)
        if args[:1] == ["defaults"]:
            verb, domain, key = args[1], args[2], args[3]
            if verb == "read":
                if (domain, key) not in self.values:
                    message = f"The domain/default pair of ({domain}, {key}) does not exist\n"
                    return CommandResult(tuple(args), 1, b"", message.encode())
                return CommandResult(tuple(args), 0, (self.values[(domain, key)] + "\n").encode(), b"")
            if verb == "write":
                self.values[(domain, key)] = "1" if args[5] == "true" else "0"
                return CommandResult(tuple(args), 0, b"", b"")
            if verb == "delete":
                self.values.pop((domain, key), None)
                return CommandResult(tuple(args), 0, b"", b"")
        return CommandResult(tuple(args), 1, b"", b"not on this Mac\n")


def plan_for(system: MacSystem, signing: str | None) -> ClientPlan:
    plan = build_plan(system, Measurements(1e9, "entered", 0.001, "entered", server_signing=signing))
    plan.changes = [c for c in plan.changes if c.catalog_id.startswith(("nsmb-", "macos-dsdont"))]
    return plan


def test_lossless_key_edits() -> None:
    text = NSMB.decode()
    assert read_key(text, "default", "protocol_vers_map").value == "6"
    assert read_key(text, "nas.example", "port445").value == "no_netbios"
    assert read_key(None, "default", "streams").state == "absent"
    changed = set_key(text, "default", "protocol_vers_map", "4")
    assert changed == text.replace("protocol_vers_map=6", "protocol_vers_map=4")
    added = set_key(text, "nas.example", "signing_required", "no")
    assert added is not None and added.endswith("port445=no_netbios\nsigning_required=no\n")
    assert set_key(added, "nas.example", "signing_required", None) == text + "\n"
    created = set_key(None, "default", "streams", "yes")
    assert created is not None and set_key(created, "default", "streams", None) is None


def test_signing_is_only_relaxed_where_the_server_does_not_require_it(tmp_path: Path) -> None:
    (tmp_path / "nsmb.conf").write_bytes(NSMB)
    system = MacSystem(MAC, runner=FakeDefaults(), nsmb_path=tmp_path / "nsmb.conf")
    unknown = next(c for c in plan_for(system, None).changes if c.catalog_id == "nsmb-signing-required")
    assert unknown.action == "none" and "not known" in unknown.reason
    required = next(
        c for c in plan_for(system, "mandatory").changes if c.catalog_id == "nsmb-signing-required"
    )
    assert required.action == "keep"
    relaxed = next(c for c in plan_for(system, "auto").changes if c.catalog_id == "nsmb-signing-required")
    assert relaxed.action == "set" and relaxed.recommended == "no" and "gives up" in relaxed.reason


def test_apply_and_restore_nsmb_and_finder_default_exactly(tmp_path: Path) -> None:
    conf = tmp_path / "nsmb.conf"
    conf.write_bytes(NSMB)
    fake = FakeDefaults()
    system = MacSystem(MAC, runner=fake, nsmb_path=conf)
    store = BackupStore(tmp_path / "backups")
    plan = plan_for(system, "auto")
    for change in plan.changes:
        assert change.sources and change.measure is not None and change.honoured_note
    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    assert conf.read_bytes() == NSMB.replace(b"signing_required=yes\n", b"signing_required=no\n")
    assert fake.values[("com.apple.desktopservices", "DSDontWriteNetworkStores")] == "1"
    script = (Path(result.backup_folder or "") / "restore.sh").read_text()
    assert "defaults delete com.apple.desktopservices DSDontWriteNetworkStores" in script

    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert conf.read_bytes() == NSMB
    assert ("com.apple.desktopservices", "DSDontWriteNetworkStores") not in fake.values


def test_a_file_that_did_not_exist_is_gone_again_after_the_restore(tmp_path: Path) -> None:
    conf = tmp_path / "nsmb.conf"
    system = MacSystem(MAC, runner=FakeDefaults(), nsmb_path=conf)
    plan = plan_for(system, None)
    data = plan.to_json()
    # A plan that writes a key into the missing file (e.g. one made by hand or for a server
    # that needs it): the same engine creates the file, and its restore deletes it.
    item = next(c for c in data["changes"] if c["catalog_id"] == "nsmb-protocol-vers-map")
    item.update(action="set", recommended="6")
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, ClientPlan.from_json(data), store=store)
    assert result.ok, result.message
    assert read_key(conf.read_text(), "default", "protocol_vers_map").value == "6"
    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert not conf.exists()


def test_multichannel_is_turned_back_on_only_for_a_server_that_offers_it(tmp_path: Path) -> None:
    """mc_on=no goes back to yes (on its own line, restored byte for byte) only where the
    server offers multichannel; it is never turned off, and mc_prefer_wired is only
    reported (Apple Support HT212277: on by default from macOS 11.3)."""
    conf = tmp_path / "nsmb.conf"
    written = NSMB.replace(b"streams=yes\n", b"streams=yes\nmc_on=no\nmc_prefer_wired=yes\n")
    conf.write_bytes(written)
    system = MacSystem(MAC, runner=FakeDefaults(), nsmb_path=conf)

    def mc_items(offers: bool | None) -> dict[str, object]:
        measured = Measurements(
            1e9, "entered", 0.001, "entered", server_signing="auto", server_multichannel=offers
        )
        plan = build_plan(system, measured)
        plan.changes = [c for c in plan.changes if c.catalog_id.startswith("nsmb-mc-")]
        return {"plan": plan, **{c.catalog_id: c for c in plan.changes}}

    for offers in (False, None):
        items = mc_items(offers)
        assert items["nsmb-mc-on"].action == "keep"  # type: ignore[attr-defined]
        assert items["nsmb-mc-prefer-wired"].action == "keep"  # type: ignore[attr-defined]
    items = mc_items(True)
    mc_on = items["nsmb-mc-on"]
    assert mc_on.action == "set" and mc_on.recommended == "yes"  # type: ignore[attr-defined]
    assert items["nsmb-mc-prefer-wired"].action == "keep"  # type: ignore[attr-defined]
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, items["plan"], store=store)  # type: ignore[arg-type]
    assert result.ok, result.message
    assert conf.read_bytes() == written.replace(b"mc_on=no\n", b"mc_on=yes\n")
    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert conf.read_bytes() == written

    # Already on (absent = the default): nothing to do, with or without the server.
    conf.write_bytes(NSMB)
    assert mc_items(True)["nsmb-mc-on"].action == "keep"  # type: ignore[attr-defined]
