"""Limits a plan may only raise: what an apply writes, given what the machine holds now.

A plan made for a profile (another machine) cannot read that machine's values, so the
numbers it carries for buffer ceilings, window sizes and the like are minimums. The
catalog marks those settings (``raise_only``), and the apply, which does read the
machine, settles each one against the value it finds there:

- ``number``: the target is written only over a lower value; a higher one stays.
- ``third-number``: the largest of three (``net.ipv4.tcp_rmem``): only that field is
  raised; the machine's first two numbers are kept.
- ``bits``: a bit mask (``Tcp1323Opts``): the bits SambaTune needs are ORed into the
  machine's value, the others kept; an absent value counts as its documented default.

The same rule keeps the sysctl.d file from persisting a lower value than the one it holds.
A plan for this computer is already made from its values, so settling changes nothing
there; it matters for profiles, for plan files carried between machines, and for
``--force``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.client.catalog import CatalogEntry, RaiseOnly, find_entry
from sambatune.client.regvalue import REG_DWORD, REG_QWORD, RegValue
from sambatune.client.settings import (
    Observed,
    RegistryValueRef,
    SettingRef,
    SettingValue,
    SysctlRef,
    ValueState,
    display_value,
)


def entry_of(ref: SettingRef | None) -> CatalogEntry | None:
    """The catalog entry of a registry value or sysctl (the kinds with limits), or None."""
    if isinstance(ref, RegistryValueRef):
        return find_entry("registry", key=ref.key, name=ref.name)
    if isinstance(ref, SysctlRef):
        return find_entry("sysctl", name=ref.name)
    return None


def catalog_entry_of(ref: SettingRef | None) -> CatalogEntry | None:
    """The catalog entry of any setting SambaTune manages by name (the SMB-client kinds too)."""
    from sambatune.client.settings import ConfKeyRef, DefaultsRef, MountOptionRef, SmbClientConfigRef

    if isinstance(ref, MountOptionRef):
        return find_entry("mount-option", option=ref.option)
    if isinstance(ref, (ConfKeyRef, DefaultsRef)):
        return find_entry(ref.kind, key=ref.key)
    if isinstance(ref, SmbClientConfigRef):
        return find_entry(ref.kind, name=ref.name)
    return entry_of(ref)


def raise_rule(ref: SettingRef | None) -> RaiseOnly | None:
    entry = entry_of(ref)
    return entry.raise_only if entry is not None else None


@dataclass(frozen=True)
class Settled:
    """What a minimum comes to on a machine whose current value is known."""

    #: The value the setting should hold after the apply.
    target: SettingValue
    #: Non-empty when the machine already holds more than the plan needs: nothing is
    #: written, and this says why.
    left_as_is: str = ""


def settle(rule: RaiseOnly, current: Observed, target: SettingValue) -> Settled:
    """Raise ``current`` to the minimum ``target`` by ``rule``; never lower it."""
    if rule.compare == "third-number":
        return _settle_third(current, target)
    if rule.compare == "bits":
        return _settle_bits(rule, current, target)
    have = number(current.value) if current.state == ValueState.PRESENT else None
    want = number(target)
    if have is None or want is None or have <= want:
        return Settled(target)
    return Settled(target, f"already {have}, higher than the {want} this plan needs; left as is")


def _settle_third(current: Observed, target: SettingValue) -> Settled:
    want = triple(target)
    have = triple(current.value) if current.state == ValueState.PRESENT else None
    if want is None or have is None:
        return Settled(target)
    if have[2] > want[2]:
        return Settled(
            target,
            f"already {have[2]}, higher than the {want[2]} this plan needs; "
            f"left as is (the whole value is {' '.join(map(str, have))})",
        )
    # Only the ceiling is the plan's: the smallest and starting buffers stay the machine's.
    return Settled(f"{have[0]} {have[1]} {want[2]}")


def _settle_bits(rule: RaiseOnly, current: Observed, target: SettingValue) -> Settled:
    if current.state == ValueState.PRESENT:
        have = number(current.value)
        if have is None:
            return Settled(target)
        if have & rule.bits == rule.bits:
            if current.value == target:
                return Settled(target)
            return Settled(
                target, f"already {have}, which has the bit(s) this plan needs ({rule.bits}); left as is"
            )
        return Settled(with_number(target, have | rule.bits))
    # Absent: the documented default, with the needed bits added, written explicitly.
    base = rule.absent_means if rule.absent_means is not None else 0
    return Settled(with_number(target, base | rule.bits))


def minimum_text(rule: RaiseOnly, value: SettingValue | None) -> str:
    """How a plan for another machine states a target: as the minimum it is."""
    if rule.compare == "third-number":
        parts = triple(value)
        if parts is not None:
            return f"third number at least {parts[2]} (the first two stay as they are there)"
    if rule.compare == "bits":
        return (
            f"bit mask {rule.bits} ORed into the value there, other bits kept "
            f"({display_value(value)} if absent)"
        )
    return f"at least {display_value(value)}"


def minimum_note(rule: RaiseOnly) -> str:
    """The sentence a plan item for another machine carries about its minimum."""
    if rule.compare == "bits":
        return (
            "The value on that machine was not read: applied there, SambaTune reads it and "
            f"only sets the bit(s) this plan needs ({rule.bits}), keeping the others."
        )
    if rule.compare == "third-number":
        return (
            "The value on that machine was not read, so the third number is a minimum: "
            "applied there, SambaTune raises only a lower ceiling, keeps the machine's first "
            "two numbers, and leaves a higher ceiling as it is."
        )
    return (
        "The value on that machine was not read, so this is a minimum: applied there, "
        "SambaTune raises only a lower value and leaves a higher one as it is."
    )


def settle_sysctl_file(planned: str, current: Observed, written: dict[str, str]) -> str | None:
    """The sysctl.d file an apply writes: what is there now plus what this apply raises.

    ``planned`` is the file the plan carries (it names the values to persist);
    ``written`` the sysctl values this apply does write. A value the machine already
    held higher was not written, so it is not persisted either, and a value the file
    already holds higher stays. None: this apply raises nothing, so the file (absent or
    not) is left as it is.
    """
    from sambatune.client.linux_system import merge_sysctl_file, parse_sysctl_file

    existing = str(current.value) if current.state == ValueState.PRESENT else None
    held = parse_sysctl_file(existing) if existing is not None else {}
    values: dict[str, str] = {}
    for name in parse_sysctl_file(planned):
        if name not in written:
            continue
        value = written[name]
        rule = raise_rule(SysctlRef(name))
        if name in held and rule is not None and settle(rule, Observed.present(held[name]), value).left_as_is:
            value = held[name]  # the file already keeps more: never persist less
        values[name] = value
    if not values:
        return None
    return merge_sysctl_file(existing, values)


def number(value: SettingValue | None) -> int | None:
    """A whole number held as sysctl text, an int, a DWORD/QWORD or a numeric REG_SZ."""
    if isinstance(value, RegValue):
        if value.type in (REG_DWORD, REG_QWORD) and isinstance(value.data, int):
            return value.data
        value = value.data if isinstance(value.data, str) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def triple(value: SettingValue | None) -> list[int] | None:
    """``"4096 131072 6291456"`` -> ``[4096, 131072, 6291456]``; None if not three numbers."""
    if not isinstance(value, str):
        return None
    parts = value.split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return [int(p) for p in parts]


def with_number(target: SettingValue, value: int) -> SettingValue:
    """``value`` in the shape of ``target`` (a DWORD stays a DWORD, text stays text)."""
    if isinstance(target, RegValue):
        if isinstance(target.data, int):
            return RegValue(target.type, value)
        return RegValue(target.type, str(value))
    if isinstance(target, str):
        return str(value)
    return value
