"""Stand-ins for what only Windows has: netsh and PowerShell answering like they do.

``FakeWindowsNet`` keeps the state netsh, the NetAdapter cmdlets and Get/Set-SmbClientConfiguration
would change and prints their documented output formats (the JSON shapes ConvertTo-Json
writes), so the Windows backend's argument lists and parsers run for real on Linux. It
records every command it was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sambatune.client.osinfo import OsInfo, classify_windows
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.windows_system import WindowsNetCommands, WindowsSystem
from sambatune.remote.transport import CommandResult

SHOW_GLOBAL_TEMPLATE = """\
Querying active state...

TCP Global Parameters
----------------------------------------------
Receive-Side Scaling State          : enabled
Receive Window Auto-Tuning Level    : {level}
Add-On Congestion Control Provider  : default
ECN Capability                      : disabled
RFC 1323 Timestamps                 : disabled
Initial RTO                         : 1000
Receive Segment Coalescing State    : enabled
Non Sack Rtt Resiliency             : disabled
Max SYN Retransmissions             : 4
Fast Open                           : enabled
Fast Open Fallback                  : enabled
HyStart                             : enabled
Proportional Rate Reduction         : enabled
Pacing Profile                      : off

"""

SUBINTERFACES_HEADER = """\

   MTU  MediaSenseState   Bytes In  Bytes Out  Interface
------  ---------------  ---------  ---------  -------------
4294967295                1          0      21766  Loopback Pseudo-Interface 1
"""


@dataclass
class FakeWindowsNet:
    autotuning: str = "normal"
    mtus: dict[str, int] = field(default_factory=lambda: {"Ethernet": 1500})
    properties: dict[tuple[str, str], str] = field(
        default_factory=lambda: {("Ethernet", "*JumboPacket"): "1514"}
    )
    guids: dict[str, str] = field(
        default_factory=lambda: {"Ethernet": "{2F4C1A0E-5B1D-4C3A-9D2E-1234567890AB}"}
    )
    addresses: dict[str, str] = field(default_factory=lambda: {"Ethernet": "192.168.1.20"})
    #: ValidRegistryValues of an adapter property (absent: the driver lists none).
    valid_values: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: Get-SmbClientConfiguration's properties (a few of the real ones, defaults of Windows 10).
    smb_client: dict[str, bool | int] = field(
        default_factory=lambda: {
            "ConnectionCountPerRssNetworkInterface": 4,
            "DirectoryCacheLifetime": 10,
            "EnableBandwidthThrottling": True,
            "EnableInsecureGuestLogons": False,
            "EnableLargeMtu": True,
            "EnableMultiChannel": True,
            "RequireSecuritySignature": False,
        }
    )
    #: Make a command fail: returns True for the argv that should fail.
    fail_when: Callable[[Sequence[str]], bool] | None = None
    log: list[list[str]] = field(default_factory=list)

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult:
        args = list(argv)
        self.log.append(args)
        if self.fail_when is not None and self.fail_when(args):
            return self._result(args, 1, "", "The requested operation requires elevation.\n")
        if args[:5] == ["netsh", "interface", "tcp", "show", "global"]:
            return self._result(args, 0, SHOW_GLOBAL_TEMPLATE.format(level=self.autotuning))
        if args[:5] == ["netsh", "interface", "tcp", "set", "global"]:
            key, _, value = args[5].partition("=")
            assert key == "autotuninglevel", args
            self.autotuning = value
            return self._result(args, 0, "Ok.\n\n")
        if args[:5] == ["netsh", "interface", "ipv4", "show", "subinterfaces"]:
            rows = "".join(
                f"{mtu:>6}                1  3172512318  216870322  {name}\n"
                for name, mtu in self.mtus.items()
            )
            return self._result(args, 0, SUBINTERFACES_HEADER + rows + "\n")
        if args[:5] == ["netsh", "interface", "ipv4", "set", "subinterface"]:
            name = args[5]
            assert args[7] == "store=persistent", args
            if name not in self.mtus:
                return self._result(args, 1, "Element not found.\n\n")
            self.mtus[name] = int(args[6].split("=", 1)[1])
            return self._result(args, 0, "Ok.\n\n")
        if args and args[0] == "powershell.exe":
            return self._powershell(args, args[-1])
        return self._result(args, 1, "", f"'{args[0]}' is not recognized\n")

    def _powershell(self, args: list[str], script: str) -> CommandResult:
        quoted = re.findall(r"'((?:[^']|'')*)'", script)
        names = [q.replace("''", "'") for q in quoted]
        if "Get-NetAdapterAdvancedProperty" in script and "-AllProperties" in script:
            rows = [
                {
                    "RegistryKeyword": keyword,
                    "RegistryValue": [value],
                    "ValidRegistryValues": self.valid_values.get((interface, keyword)),
                    "DisplayName": keyword.lstrip("*"),
                    "DisplayValue": value,
                }
                for (interface, keyword), value in self.properties.items()
                if interface == names[0]
            ]
            if not rows and names[0] not in self.mtus:
                return self._result(
                    args,
                    1,
                    "",
                    "Get-NetAdapterAdvancedProperty : No MSFT_NetAdapter objects found with "
                    f"property 'Name' equal to '{names[0]}'.\n",
                )
            # ConvertTo-Json writes a lone object, not a one-element list.
            return self._result(args, 0, json.dumps(rows[0] if len(rows) == 1 else rows) + "\n")
        if script.startswith("Set-NetAdapterAdvancedProperty"):
            self.properties[(names[0], names[1])] = names[2]
            return self._result(args, 0, "")
        if "Get-SmbClientConfiguration" in script:
            return self._result(args, 0, json.dumps(self.smb_client) + "\n")
        if script.startswith("Set-SmbClientConfiguration"):
            assert "-Force" in script, script
            for name, value in re.findall(r"-(\w+) (\$true|\$false|\d+)", script):
                self.smb_client[name] = value == "$true" if value.startswith("$") else int(value)
            return self._result(args, 0, "")
        if "Get-NetIPInterface" in script:
            data = {
                "interfaces": [
                    {"InterfaceAlias": n, "InterfaceIndex": i + 10, "NlMtu": m, "ConnectionState": 1}
                    for i, (n, m) in enumerate(self.mtus.items())
                ],
                "adapters": [
                    {
                        "Name": n,
                        "InterfaceIndex": i + 10,
                        "InterfaceGuid": self.guids[n],
                        "InterfaceDescription": "Intel(R) Ethernet Connection",
                        "Speed": 1000000000,
                        "Status": "Up",
                    }
                    for i, n in enumerate(self.mtus)
                    if n in self.guids
                ],
                "addresses": {"InterfaceIndex": 10, "IPAddress": self.addresses["Ethernet"]},
            }
            return self._result(args, 0, json.dumps(data))
        return self._result(args, 1, "", "unknown script\n")

    @staticmethod
    def _result(args: list[str], code: int, out: str, err: str = "") -> CommandResult:
        return CommandResult(tuple(args), code, out.replace("\n", "\r\n").encode(), err.encode())


def windows_os(profile: str) -> OsInfo:
    """A *detected* Windows of this profile (as if SambaTune ran on it)."""
    from sambatune.client.osinfo import forced_profile

    forced = forced_profile(profile)
    major, minor, build = (int(p) for p in forced.version.split("."))
    platform_id = 1 if forced.generation == "win9x" else 2
    return classify_windows(major, minor, build, 3 if forced.server else 1, platform_id)


def windows_system(
    profile: str,
    registry: InMemoryRegistry | None = None,
    net: FakeWindowsNet | None = None,
    admin: bool = True,
) -> WindowsSystem:
    return WindowsSystem(
        windows_os(profile),
        registry or InMemoryRegistry(),
        WindowsNetCommands(net or FakeWindowsNet()),
        admin=admin,
    )
