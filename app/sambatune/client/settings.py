"""What a setting *is* (its address) and what it holds (present, absent or unknown).

Every change SambaTune plans, applies, backs up and restores is addressed by one of
these references, so one apply/restore engine serves the registry, sysctl, interface
MTUs, the netsh auto-tuning level, adapter properties and the sysctl.d file alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from sambatune.client.registry import normalize_key
from sambatune.client.regvalue import TYPE_NAMES, TYPE_NUMBERS, RegValue
from sambatune.errors import InvalidInput
from sambatune.states import TextState

#: What a setting can hold. None (outside this union) means "absent".
SettingValue = RegValue | str | int


@dataclass(frozen=True)
class SettingRef:
    kind: ClassVar[str] = ""

    def label(self) -> str:
        raise NotImplementedError

    def identity(self) -> str:
        """A stable key for maps and comparisons (case-folded where the OS folds case)."""
        return f"{self.kind}:{self.label()}"

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def check_value(self, value: SettingValue) -> SettingValue:
        """The value normalised for this setting, or InvalidInput."""
        return value


@dataclass(frozen=True)
class RegistryValueRef(SettingRef):
    kind: ClassVar[str] = "registry"
    key: str
    name: str
    value_type: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", normalize_key(self.key))

    def label(self) -> str:
        return f"{self.key}\\{self.name}"

    def identity(self) -> str:
        return f"{self.kind}:{self.label().lower()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "name": self.name,
            "type": TYPE_NAMES.get(self.value_type, str(self.value_type)),
        }

    def check_value(self, value: SettingValue) -> SettingValue:
        if not isinstance(value, RegValue):
            raise InvalidInput(f"{self.label()} needs a registry value, not {value!r}.")
        return value


@dataclass(frozen=True)
class SysctlRef(SettingRef):
    kind: ClassVar[str] = "sysctl"
    name: str

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_\-]+)+", self.name):
            raise InvalidInput(f"{self.name!r} is not a sysctl name.")

    def label(self) -> str:
        return self.name

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name}

    def check_value(self, value: SettingValue) -> SettingValue:
        if isinstance(value, RegValue):
            raise InvalidInput(f"{self.name} takes text or a number.")
        return normalize_sysctl_value(str(value))


def normalize_sysctl_value(text: str) -> str:
    """``4096\\t131072  6291456\\n`` -> ``4096 131072 6291456`` (how the kernel compares)."""
    return " ".join(text.split())


@dataclass(frozen=True)
class InterfaceMtuRef(SettingRef):
    """The IP MTU of one interface (Linux ``ip link``, Windows netsh, macOS networksetup)."""

    kind: ClassVar[str] = "mtu"
    interface: str

    def label(self) -> str:
        return f"MTU of {self.interface}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "interface": self.interface}

    def check_value(self, value: SettingValue) -> SettingValue:
        if isinstance(value, bool) or not isinstance(value, int) or not 68 <= value <= 65535:
            raise InvalidInput(f"An MTU is a number from 68 to 65535, not {value!r}.")
        return value


AUTOTUNING_LEVELS = ("disabled", "highlyrestricted", "restricted", "normal", "experimental")


@dataclass(frozen=True)
class TcpAutotuningRef(SettingRef):
    """Windows Vista and later: ``netsh interface tcp set global autotuninglevel=``."""

    kind: ClassVar[str] = "tcp-autotuning"

    def label(self) -> str:
        return "Receive Window Auto-Tuning Level"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def check_value(self, value: SettingValue) -> SettingValue:
        text = str(value).strip().lower()
        if text not in AUTOTUNING_LEVELS:
            raise InvalidInput(
                f"{value!r} is not an auto-tuning level.",
                details="One of: " + ", ".join(AUTOTUNING_LEVELS),
            )
        return text


@dataclass(frozen=True)
class AdapterPropertyRef(SettingRef):
    """A NIC driver's advanced property (``*JumboPacket``): Set-NetAdapterAdvancedProperty."""

    kind: ClassVar[str] = "adapter-property"
    interface: str
    keyword: str

    def label(self) -> str:
        return f"{self.keyword} of {self.interface}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "interface": self.interface, "keyword": self.keyword}

    def check_value(self, value: SettingValue) -> SettingValue:
        return str(value)


#: The Get/Set-SmbClientConfiguration properties SambaTune reads, with their type, and
#: whether it may write them. Only these names reach a PowerShell command line (they
#: are parameter names, which cannot be quoted). The signing and encryption settings
#: are read for the report only: a plan or backup file can never weaken them here.
SMB_CLIENT_CONFIG = {
    "EnableMultiChannel": ("bool", True),
    "RequireSecuritySignature": ("bool", False),
    "RequireEncryption": ("bool", False),
    "EnableInsecureGuestLogons": ("bool", False),
}


@dataclass(frozen=True)
class SmbClientConfigRef(SettingRef):
    """One property of Windows' SMB client configuration (Windows 8 / Server 2012 and later):
    read with Get-SmbClientConfiguration, written with Set-SmbClientConfiguration. It always
    has a value (the effective one, default or not), so a restore sets the prior value back.
    Booleans are held as "true"/"false" (JSON true and the number 1 would compare equal)."""

    kind: ClassVar[str] = "smb-client-config"
    name: str

    def __post_init__(self) -> None:
        if self.name not in SMB_CLIENT_CONFIG:
            raise InvalidInput(
                f"{self.name!r} is not an SMB client setting SambaTune reads.",
                details="One of: " + ", ".join(SMB_CLIENT_CONFIG),
            )

    @property
    def writable(self) -> bool:
        return SMB_CLIENT_CONFIG[self.name][1]

    def label(self) -> str:
        return f"SMB client {self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name}

    def check_value(self, value: SettingValue) -> SettingValue:
        if SMB_CLIENT_CONFIG[self.name][0] == "bool":
            text = str(value).strip().lower() if not isinstance(value, RegValue) else ""
            if isinstance(value, bool):
                text = "true" if value else "false"
            if text in ("true", "1", "$true"):
                return "true"
            if text in ("false", "0", "$false"):
                return "false"
            raise InvalidInput(f"{self.name} is true or false, not {value!r}.")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{self.name} is a whole number, not {value!r}.")
        return value


@dataclass(frozen=True)
class FileRef(SettingRef):
    """A whole text file (the sysctl.d file that makes Linux settings survive a reboot)."""

    kind: ClassVar[str] = "file"
    path: str

    def label(self) -> str:
        return self.path

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path}

    def check_value(self, value: SettingValue) -> SettingValue:
        if not isinstance(value, str):
            raise InvalidInput(f"{self.path} holds text.")
        return value


#: The cifs mount options SambaTune plans; a plan may not touch any other option.
MOUNT_OPTIONS = ("rsize", "wsize", "multichannel", "max_channels", "actimeo", "cache", "nosharesock")
MOUNT_SOURCES = ("fstab", "systemd", "autofs")


@dataclass(frozen=True)
class MountOptionRef(SettingRef):
    """One option of one cifs mount entry: a line of /etc/fstab, the Options= of a systemd
    .mount unit, or an autofs map entry. Its value is the option as written
    (``rsize=4194304``, ``multichannel``); absent means the kernel's default applies.
    One option per reference, so a restore in reverse order puts each file back byte
    for byte (an option the apply appended is the last one its restore removes)."""

    kind: ClassVar[str] = "mount-option"
    source: str
    path: str
    #: The mount point (fstab, systemd) or the map key (autofs) naming the entry.
    entry: str
    option: str

    def __post_init__(self) -> None:
        if self.source not in MOUNT_SOURCES:
            raise InvalidInput(f"{self.source!r} is not a kind of mount entry ({', '.join(MOUNT_SOURCES)}).")

    def label(self) -> str:
        return f"{self.option} of {self.entry} ({self.path})"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "path": self.path,
            "entry": self.entry,
            "option": self.option,
        }

    def check_value(self, value: SettingValue) -> SettingValue:
        text = str(value) if not isinstance(value, RegValue) else ""
        name = text.partition("=")[0]
        # A comma would add an option, white space would split the fstab line: refuse both.
        if name != self.option or re.search(r"[\s,#\\]", text):
            raise InvalidInput(f"{value!r} is not a value of the mount option {self.option}.")
        return text


@dataclass(frozen=True)
class ConfKeyRef(SettingRef):
    """One key of an INI-like file with [sections] (macOS /etc/nsmb.conf)."""

    kind: ClassVar[str] = "conf-key"
    path: str
    section: str
    key: str

    def label(self) -> str:
        return f"{self.key} in [{self.section}] of {self.path}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "section": self.section, "key": self.key}

    def check_value(self, value: SettingValue) -> SettingValue:
        text = str(value) if not isinstance(value, RegValue) else "\n"
        if "\n" in text or "\r" in text or text != text.strip():
            raise InvalidInput(f"{value!r} is not a one-line value for {self.key}.")
        return text


@dataclass(frozen=True)
class DefaultsRef(SettingRef):
    """A macOS user default (``defaults write DOMAIN KEY -bool true``), a boolean here."""

    kind: ClassVar[str] = "defaults"
    domain: str
    key: str

    def label(self) -> str:
        return f"{self.domain} {self.key}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "domain": self.domain, "key": self.key}

    def check_value(self, value: SettingValue) -> SettingValue:
        text = str(value).strip().lower()
        if text in ("1", "true", "yes"):
            return "true"
        if text in ("0", "false", "no"):
            return "false"
        raise InvalidInput(f"{self.key} is true or false, not {value!r}.")


def ref_from_json(data: dict[str, Any]) -> SettingRef:
    try:
        kind = data["kind"]
        if kind == RegistryValueRef.kind:
            type_name = data["type"]
            value_type = TYPE_NUMBERS.get(type_name)
            if value_type is None:
                value_type = int(type_name)
            return RegistryValueRef(data["key"], data["name"], value_type)
        if kind == SysctlRef.kind:
            return SysctlRef(data["name"])
        if kind == InterfaceMtuRef.kind:
            return InterfaceMtuRef(data["interface"])
        if kind == TcpAutotuningRef.kind:
            return TcpAutotuningRef()
        if kind == AdapterPropertyRef.kind:
            return AdapterPropertyRef(data["interface"], data["keyword"])
        if kind == FileRef.kind:
            return FileRef(data["path"])
        if kind == MountOptionRef.kind:
            return MountOptionRef(data["source"], data["path"], data["entry"], data["option"])
        if kind == ConfKeyRef.kind:
            return ConfKeyRef(data["path"], data["section"], data["key"])
        if kind == DefaultsRef.kind:
            return DefaultsRef(data["domain"], data["key"])
        if kind == SmbClientConfigRef.kind:
            return SmbClientConfigRef(data["name"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"A setting description is incomplete: {data!r}") from exc
    raise InvalidInput(f"Unknown kind of setting {data.get('kind')!r}.")


def value_to_json(value: SettingValue | None) -> Any:
    if isinstance(value, RegValue):
        return {"registry": value.to_json()}
    return value


def value_from_json(data: Any) -> SettingValue | None:
    if isinstance(data, dict) and "registry" in data:
        return RegValue.from_json(data["registry"])
    if data is None or isinstance(data, (str, int)):
        return data
    raise InvalidInput(f"Not a setting value: {data!r}")


def display_value(value: SettingValue | None) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, RegValue):
        return value.display()
    if isinstance(value, str) and "\n" in value:
        lines = value.count("\n") + (0 if value.endswith("\n") else 1)
        return f"({lines} lines of text)"
    return str(value)


class ValueState(TextState):
    """Whether a setting holds a value now (JSON and plan files carry the text)."""

    PRESENT = "present"
    ABSENT = "absent"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Observed:
    """What a setting holds right now: present with a value, absent, or unknown (and why)."""

    state: ValueState
    value: SettingValue | None = None
    detail: str = ""

    @classmethod
    def present(cls, value: SettingValue) -> Observed:
        return cls(ValueState.PRESENT, value)

    @classmethod
    def absent(cls, detail: str = "") -> Observed:
        return cls(ValueState.ABSENT, None, detail)

    @classmethod
    def unknown(cls, why: str) -> Observed:
        return cls(ValueState.UNKNOWN, None, why)

    @property
    def known(self) -> bool:
        return self.state != ValueState.UNKNOWN

    def same_as(self, other: Observed) -> bool:
        return self.state == other.state and self.value == other.value

    def display(self) -> str:
        if self.state == ValueState.UNKNOWN:
            return f"(unknown: {self.detail})" if self.detail else "(unknown)"
        return display_value(self.value)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"state": self.state}
        if self.state == ValueState.PRESENT:
            data["value"] = value_to_json(self.value)
        if self.detail:
            data["detail"] = self.detail
        data["display"] = self.display()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observed:
        state = data.get("state")
        if state == ValueState.PRESENT:
            value = value_from_json(data.get("value"))
            if value is None:
                raise InvalidInput("A present value without data.")
            return cls.present(value)
        if state == ValueState.ABSENT:
            return cls.absent(data.get("detail", ""))
        if state == ValueState.UNKNOWN:
            return cls.unknown(data.get("detail", ""))
        raise InvalidInput(f"Unknown value state {state!r}.")
