"""Which operating system and version this computer runs, or a profile forced for planning.

Windows generations matter more than marketing names: the TCP stack was rewritten for
Vista, and 2000, XP and 2003 share one set of registry values while 95, 98 and ME
share another. So every ``OsInfo`` carries a ``generation``:

- ``win9x``: Windows 95, 98, ME (VxD\\MSTCP string values)
- ``nt5``: Windows 2000, XP, Server 2003 (Tcpip\\Parameters DWORDs, TcpWindowSize honoured)
- ``vista7``: Vista, 7, Server 2008 / 2008 R2 (receive-window auto-tuning, netsh)
- ``win8plus``: 8, 8.1, 10, 11, Server 2012 and later (adds the PowerShell cmdlets)
- ``linux`` and ``macos``
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field

from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields

WINDOWS_GENERATIONS = ("win9x", "nt5", "vista7", "win8plus")
GENERATIONS = (*WINDOWS_GENERATIONS, "linux", "macos")

# Product types from OSVERSIONINFOEX: 1 is a workstation, 2 a domain controller, 3 a server.
VER_NT_WORKSTATION = 1
VER_PLATFORM_WIN32_WINDOWS = 1
VER_PLATFORM_WIN32_NT = 2

_SERVER_BUILDS = {14393: "2016", 17763: "2019", 20348: "2022", 26100: "2025"}


#: What decides the TCP window on each generation, in one sentence for people.
GENERATION_SUMMARY = {
    "win9x": "Windows 95/98/ME: the TCP settings are text values under VxD\\MSTCP, read when "
    "the stack loads (a reboot).",
    "nt5": "Windows 2000/XP/2003: TcpWindowSize, GlobalMaxTcpWindowSize and Tcp1323Opts in "
    "the registry size the window; changes need a reboot.",
    "vista7": "Vista, 7 and Server 2008: receive-window auto-tuning sizes the window and "
    "TcpWindowSize is ignored; netsh sets the auto-tuning level and the MTU.",
    "win8plus": "Windows 8 and later (10, 11, Server 2012+): auto-tuning sizes the window and "
    "TcpWindowSize is ignored; netsh or PowerShell set the level and the MTU, and "
    "the SMB client has its own settings under LanmanWorkstation.",
    "linux": "Linux: the kernel auto-tunes each connection's buffers up to the tcp_rmem / "
    "tcp_wmem ceilings; sysctl sets them, /etc/sysctl.d keeps them, ip link sets "
    "the MTU.",
    "macos": "macOS: sysctl sets the auto-tuning ceilings, from which the kernel also picks "
    "each connection's window scale (until the next restart); networksetup sets the "
    "MTU.",
}


@dataclass(frozen=True)
class OsInfo(StoredFields):
    family: str  # "windows", "linux", "macos"
    generation: str  # one of GENERATIONS
    name: str  # "Windows 10", "Windows XP", "Debian GNU/Linux 12 (bookworm)", "macOS 14.5"
    version: str  # "10.0.19045", "5.1.2600", kernel release on Linux
    profile: str  # "windows-10", "windows-xp", "linux", ...
    build: int | None = None
    server: bool = False
    #: False when the profile was forced (planning for another machine).
    detected: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)

    JSON_NAME = "an OS description"

    @property
    def is_windows(self) -> bool:
        return self.family == "windows"

    @property
    def summary(self) -> str:
        """What decides the TCP window here (see :data:`GENERATION_SUMMARY`)."""
        return GENERATION_SUMMARY[self.generation]


def classify_windows(
    major: int,
    minor: int,
    build: int,
    product_type: int = VER_NT_WORKSTATION,
    platform_id: int = VER_PLATFORM_WIN32_NT,
) -> OsInfo:
    """Name and generation of a Windows version, from the numbers GetVersionEx reports."""
    server = product_type != VER_NT_WORKSTATION
    version = f"{major}.{minor}.{build}"
    notes: tuple[str, ...] = ()
    if platform_id == VER_PLATFORM_WIN32_WINDOWS:
        name = {(4, 0): "95", (4, 10): "98", (4, 90): "ME"}.get((major, minor), f"9x {version}")
        return OsInfo("windows", "win9x", f"Windows {name}", version, f"windows-{name.lower()}", build, False)
    if major < 5:
        name, profile = f"Windows NT {major}.{minor}", "windows-nt4"
        generation = "nt5"
        notes = ("Windows NT 4 is treated like Windows 2000; its values were not checked.",)
    elif major == 5:
        generation = "nt5"
        if minor == 0:
            name, profile = ("Windows 2000 Server" if server else "Windows 2000"), "windows-2000"
        elif minor == 1:
            name, profile = "Windows XP", "windows-xp"
        elif server:
            name, profile = "Windows Server 2003", "windows-2003"
        else:
            name, profile = "Windows XP Professional x64", "windows-xp"
    elif major == 6 and minor <= 1:
        generation = "vista7"
        if server:
            name = "Windows Server 2008" if minor == 0 else "Windows Server 2008 R2"
            profile = "windows-server-2008" if minor == 0 else "windows-server-2008r2"
        else:
            name = "Windows Vista" if minor == 0 else "Windows 7"
            profile = "windows-vista" if minor == 0 else "windows-7"
    else:
        generation = "win8plus"
        if major == 6:
            if server:
                name = "Windows Server 2012" if minor == 2 else "Windows Server 2012 R2"
                profile = "windows-server-2012" if minor == 2 else "windows-server-2012r2"
            else:
                name = "Windows 8" if minor == 2 else "Windows 8.1"
                profile = "windows-8" if minor == 2 else "windows-8.1"
        elif server:
            year = _SERVER_BUILDS.get(build)
            if year is None:
                # Builds between releases are Insider or semi-annual channel servers.
                year = max((y for b, y in _SERVER_BUILDS.items() if b <= build), default="")
            name = f"Windows Server {year}".strip() if year else f"Windows Server (build {build})"
            profile = f"windows-server-{year}" if year else "windows-server"
        elif build >= 22000:
            name, profile = "Windows 11", "windows-11"
        else:
            name, profile = "Windows 10", "windows-10"
    return OsInfo("windows", generation, name, version, profile, build, server, notes=notes)


# Typical version numbers for each forced profile (planning for a machine that is not this one).
_WINDOWS_PROFILES: dict[str, tuple[int, int, int, int, int]] = {
    "windows-95": (4, 0, 950, 1, VER_PLATFORM_WIN32_WINDOWS),
    "windows-98": (4, 10, 2222, 1, VER_PLATFORM_WIN32_WINDOWS),
    "windows-me": (4, 90, 3000, 1, VER_PLATFORM_WIN32_WINDOWS),
    "windows-2000": (5, 0, 2195, 1, VER_PLATFORM_WIN32_NT),
    "windows-xp": (5, 1, 2600, 1, VER_PLATFORM_WIN32_NT),
    "windows-2003": (5, 2, 3790, 3, VER_PLATFORM_WIN32_NT),
    "windows-vista": (6, 0, 6002, 1, VER_PLATFORM_WIN32_NT),
    "windows-7": (6, 1, 7601, 1, VER_PLATFORM_WIN32_NT),
    "windows-server-2008": (6, 0, 6003, 3, VER_PLATFORM_WIN32_NT),
    "windows-server-2008r2": (6, 1, 7601, 3, VER_PLATFORM_WIN32_NT),
    "windows-8": (6, 2, 9200, 1, VER_PLATFORM_WIN32_NT),
    "windows-8.1": (6, 3, 9600, 1, VER_PLATFORM_WIN32_NT),
    "windows-server-2012": (6, 2, 9200, 3, VER_PLATFORM_WIN32_NT),
    "windows-server-2012r2": (6, 3, 9600, 3, VER_PLATFORM_WIN32_NT),
    "windows-10": (10, 0, 19045, 1, VER_PLATFORM_WIN32_NT),
    "windows-11": (10, 0, 22631, 1, VER_PLATFORM_WIN32_NT),
    "windows-server-2016": (10, 0, 14393, 3, VER_PLATFORM_WIN32_NT),
    "windows-server-2019": (10, 0, 17763, 3, VER_PLATFORM_WIN32_NT),
    "windows-server-2022": (10, 0, 20348, 3, VER_PLATFORM_WIN32_NT),
    "windows-server-2025": (10, 0, 26100, 3, VER_PLATFORM_WIN32_NT),
}

PROFILE_NAMES: tuple[str, ...] = (*_WINDOWS_PROFILES, "linux", "macos")


def forced_profile(name: str) -> OsInfo:
    """The ``OsInfo`` of a profile named on the command line (``--os windows-xp``)."""
    key = name.strip().lower()
    if key in _WINDOWS_PROFILES:
        major, minor, build, product, platform_id = _WINDOWS_PROFILES[key]
        info = classify_windows(major, minor, build, product, platform_id)
        return OsInfo(
            info.family,
            info.generation,
            info.name,
            info.version,
            key,
            info.build,
            info.server,
            detected=False,
            notes=info.notes,
        )
    if key == "linux":
        return OsInfo("linux", "linux", "Linux", "", "linux", detected=False)
    if key in ("macos", "mac", "osx"):
        return OsInfo("macos", "macos", "macOS", "", "macos", detected=False)
    raise InvalidInput(
        f"Unknown OS profile {name!r}.",
        details="Known profiles: " + ", ".join(PROFILE_NAMES),
    )


def detect_local_os() -> OsInfo:
    """The OS this process runs on."""
    if sys.platform == "win32":
        version = sys.getwindowsversion()  # type: ignore[attr-defined]
        return classify_windows(
            version.major,
            version.minor,
            version.build,
            getattr(version, "product_type", VER_NT_WORKSTATION),
            getattr(version, "platform", VER_PLATFORM_WIN32_NT),
        )
    if sys.platform == "darwin":
        release = platform.mac_ver()[0] or platform.release()
        return OsInfo("macos", "macos", f"macOS {release}", release, "macos")
    if sys.platform.startswith("linux"):
        return OsInfo("linux", "linux", _linux_pretty_name(), platform.release(), "linux")
    raise InvalidInput(
        f"SambaTune tunes Windows, Linux and macOS clients; this is {sys.platform}.",
    )


def _linux_pretty_name() -> str:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("PRETTY_NAME="):
                        return line.split("=", 1)[1].strip().strip('"') or "Linux"
        except OSError:
            continue
    return "Linux"
