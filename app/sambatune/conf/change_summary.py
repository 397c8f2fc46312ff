"""One line saying what an edit of an smb.conf changes, as Samba sees it.

``add [projects]; log level 3 → 1 in [global]; unset max xmit in [global]``: the
sections and settings that differ between two effective views, for the summary of
an applied change and the history that lists it. Comments and layout do not
count; an edit that changes nothing Samba reads says so.
"""

from __future__ import annotations

from sambatune.conf.effective import EffectiveConfig, Section

MAX_PARTS = 4
MAX_VALUE = 30


def _short(value: str) -> str:
    return value if len(value) <= MAX_VALUE else value[: MAX_VALUE - 1] + "…"


def _where(section: Section) -> str:
    return "[global]" if section.is_global else f"[{section.name}]"


def describe_changes(before: EffectiveConfig, after: EffectiveConfig) -> str:
    parts: list[str] = []
    for key, section in after.sections.items():
        if key not in before.sections:
            parts.append(f"add {_where(section)}")
    for key, section in before.sections.items():
        if key not in after.sections:
            parts.append(f"remove {_where(section)}")
    for key, section in after.sections.items():
        old_section = before.sections.get(key)
        if old_section is None:
            continue
        old, new = old_section.own_settings(), section.own_settings()
        where = _where(section)
        for name, setting in new.items():
            previous = old.get(name)
            if previous is None:
                parts.append(f"set {name} = {_short(setting.value)} in {where}")
            elif previous.value != setting.value:
                parts.append(f"{name} {_short(previous.value)} → {_short(setting.value)} in {where}")
        parts += [f"unset {name} in {where}" for name in old if name not in new]
    if not parts:
        return "comments or layout only (nothing Samba reads changed)"
    text = "; ".join(parts[:MAX_PARTS])
    if len(parts) > MAX_PARTS:
        text += f"; and {len(parts) - MAX_PARTS} more"
    return text
