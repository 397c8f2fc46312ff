"""The macOS SMB client's plan: /etc/nsmb.conf's [default] section and Finder's .DS_Store writes.

What is changed: DSDontWriteNetworkStores (one write less per folder Finder opens on a
share), signing_required=yes back to the default only where the server does not
require signing, saying what that gives up, and mc_on=no back on only for a server that
offers multichannel. Never silently weakened: without knowing the
server's 'server signing', the item only reports. The rest is shown with its default and
its trade (nsmb.conf(5)).
"""

from __future__ import annotations

from collections.abc import Callable

from sambatune.client.macos_system import MacSystem, nsmb_path_from_env
from sambatune.client.plan import MeasureLink, PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.settings import ConfKeyRef, DefaultsRef, ValueState

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
    if current.state == ValueState.PRESENT and str(current.value).lower() == "yes":
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

    items += _multichannel(ctx, ref, bulk)

    ds = DefaultsRef("com.apple.desktopservices", "DSDontWriteNetworkStores")
    current = ctx.read(ds)
    if current.state == ValueState.PRESENT and current.value == "true":
        items.append(
            ctx.item(
                "macos-dsdontwritenetworkstores", ds, current, "keep", None, "Already on.", measure=small
            )
        )
    elif current.state == ValueState.UNKNOWN:
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
    return items


def _multichannel(
    ctx: PlanContext, ref: Callable[[str], ConfKeyRef], bulk: MeasureLink
) -> list[PlannedChange]:
    """mc_on and mc_prefer_wired (Apple's article on SMB multichannel, macOS 11.3 and later).

    mc_on=no is turned back on (in place, so the restore puts 'no' back on its line) only
    for a server that offers multichannel; it is never turned off. mc_prefer_wired is a
    choice about this Mac's Wi-Fi that no measurement from here can make: reported."""
    items: list[PlannedChange] = []
    server = ctx.measurements.server_multichannel
    mc_on = ref("mc_on")
    current = ctx.read(mc_on)
    off = current.state == ValueState.PRESENT and str(current.value).strip().lower() in ("no", "false", "0")
    if off and server:
        items.append(
            ctx.item(
                "nsmb-mc-on",
                mc_on,
                current,
                "set",
                "yes",
                "The server offers multichannel ('server multi channel support = yes') and this Mac "
                "has it turned off. 'yes' (the default from macOS 11.3) lets it open a connection "
                "per interface of equal speed, and fail over when one goes down.",
                measure=bulk,
            )
        )
    elif off:
        items.append(
            ctx.item(
                "nsmb-mc-on",
                mc_on,
                current,
                "keep",
                None,
                "Turned off on this Mac. "
                + (
                    "The server does not offer multichannel, so turning it on would change nothing."
                    if server is False
                    else "Whether the server offers multichannel is not known (survey it), so it is left."
                ),
                measure=bulk,
            )
        )
    else:
        items.append(
            ctx.item(
                "nsmb-mc-on",
                mc_on,
                current,
                "keep" if current.known else "none",
                None,
                f"{current.display()}: on by default from macOS 11.3"
                + (
                    "; the server offers it too."
                    if server
                    else "; it matters only where the server offers it."
                ),
                measure=bulk,
            )
        )
    wired = ref("mc_prefer_wired")
    current = ctx.read(wired)
    items.append(
        ctx.item(
            "nsmb-mc-prefer-wired",
            wired,
            current,
            "keep" if current.known else "none",
            None,
            f"{current.display()}. Set it to yes by hand if this Mac has both Wi-Fi and Ethernet to the "
            "server and Wi-Fi reports the faster link: then the cable carries the data and Wi-Fi "
            "stays the fallback. SambaTune cannot see which link is really faster, so it leaves it.",
            measure=bulk,
        )
    )
    return items
