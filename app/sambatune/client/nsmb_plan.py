"""The macOS SMB client's plan: /etc/nsmb.conf's [default] section and Finder's .DS_Store writes.

What is changed: DSDontWriteNetworkStores (one write less per folder Finder opens on a
share), and signing_required=yes back to the default only where the server does not
require signing, saying what that gives up. Never silently weakened: without knowing the
server's 'server signing', the item only reports. The rest is shown with its default and
its trade (nsmb.conf(5)).
"""

from __future__ import annotations

from sambatune.client.macos_system import MacSystem, nsmb_path_from_env
from sambatune.client.plan import MeasureLink, PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.settings import ConfKeyRef, DefaultsRef

SECTION = "default"
#: Samba's values of 'server signing' that make every session signed.
SERVER_REQUIRES = ("mandatory", "required", "yes", "on", "true")


def plan_nsmb(ctx: PlanContext) -> list[PlannedChange]:
    system = ctx.system
    path = str(system.nsmb_path if isinstance(system, MacSystem) else nsmb_path_from_env())
    share = "/Volumes/SHARE"  # where Finder mounts it; the measurement names the real one
    bulk = MeasureLink("smb-client", share, "large-file write and read through the mounted share")
    small = MeasureLink("files", share, "many small files and listings through the mounted share")
    items: list[PlannedChange] = []

    def ref(key: str) -> ConfKeyRef:
        return ConfKeyRef(path, SECTION, key)

    signing = ref("signing_required")
    current = ctx.read(signing)
    server = (ctx.measurements.server_signing or "").strip().lower()
    if current.state == "present" and str(current.value).lower() == "yes":
        if not server:
            items.append(
                ctx.item(
                    "nsmb-signing-required",
                    signing,
                    current,
                    "none",
                    None,
                    "This Mac requires signing. Whether the server requires it too is not known "
                    "(plan with --server-signing, or survey the server), so nothing is changed.",
                    measure=bulk,
                )
            )
        elif server in SERVER_REQUIRES:
            items.append(
                ctx.item(
                    "nsmb-signing-required",
                    signing,
                    current,
                    "keep",
                    None,
                    f"The server requires signing ('server signing = {server}'): sessions are signed "
                    "either way, so this line costs nothing extra. Kept.",
                    measure=bulk,
                )
            )
        else:
            items.append(
                ctx.item(
                    "nsmb-signing-required",
                    signing,
                    current,
                    "set",
                    "no",
                    f"The server does not require signing ('server signing = {server}'), so this Mac "
                    "alone makes every session signed. 'no' (macOS's default; set in place so the "
                    "restore puts 'yes' back on the same line) saves the "
                    "signing work on both ends. What it gives up: protection of each message "
                    "against tampering on the network, unless the server asks for it. Apply it "
                    "only on a network you trust; the measurement shows what it buys.",
                    measure=bulk,
                )
            )
    else:
        items.append(
            ctx.item(
                "nsmb-signing-required",
                signing,
                current,
                "keep" if current.known else "none",
                None,
                f"{current.display()}: this Mac signs when the server asks (the default). Never "
                "changed to weaken anything.",
                measure=bulk,
            )
        )

    for catalog_id, key, text, link in (
        ("nsmb-protocol-vers-map", "protocol_vers_map", "7 (SMB1, 2 and 3 offered) when not set.", bulk),
        (
            "nsmb-dir-cache-max",
            "dir_cache_max",
            "60 s when not set; longer means fewer listings, staler.",
            small,
        ),
        ("nsmb-dir-cache-min", "dir_cache_min", "30 s when not set.", small),
        ("nsmb-streams", "streams", "yes when not set: streams are used if the server offers them.", small),
    ):
        key_ref = ref(key)
        observed = ctx.read(key_ref)
        items.append(
            ctx.item(
                catalog_id,
                key_ref,
                observed,
                "keep" if observed.known else "none",
                None,
                f"{observed.display()}. {text} Left as it is.",
                measure=link,
            )
        )

    ds = DefaultsRef("com.apple.desktopservices", "DSDontWriteNetworkStores")
    current = ctx.read(ds)
    if current.state == "present" and current.value == "true":
        items.append(
            ctx.item(
                "macos-dsdontwritenetworkstores", ds, current, "keep", None, "Already on.", measure=small
            )
        )
    elif current.state == "unknown":
        # A user default belongs to the user at that Mac: a profile cannot read or back it up.
        items.append(
            ctx.item(
                "macos-dsdontwritenetworkstores",
                ds,
                current,
                "none",
                None,
                f"Could not be read ({current.display()}), so it could not be put back: not planned."
                if ctx.os.detected
                else "Worth turning on for shares (fewer writes per folder Finder opens); it is a "
                "per-user default, so plan it on that Mac.",
                measure=small,
            )
        )
    else:
        items.append(
            ctx.item(
                "macos-dsdontwritenetworkstores",
                ds,
                current,
                "set",
                "true",
                "Finder writes a .DS_Store file into each folder it shows; on a share that is one "
                "more create and write per folder, which the small-file test shows. Turned off for "
                "network shares only; icon positions and view options of shared folders are then "
                "not remembered.",
                measure=small,
            )
        )
    ctx.notes.append(
        "mc_on, mc_prefer_wired and dir_cache_max_cnt (nsmb.conf multichannel and cache size) are "
        "not planned: their rows of nsmb.conf(5) could not be read for SambaTune, and nothing "
        "unsourced is set."
    )
    return items
