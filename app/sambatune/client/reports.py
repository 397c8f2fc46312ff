"""Plans, dry runs, results and backups of the client tuning as plain text, for the
page and the CLI alike.

Registry paths are shown with the short hive name (HKLM), which regedit and reg.exe
accept as well, so long LanmanWorkstation paths fit on a line; the commands and
writes themselves are printed exactly as the core will perform them.
"""

from __future__ import annotations

import difflib

from sambatune.client.apply import ApplyResult
from sambatune.client.backups import Backup
from sambatune.client.plan import ClientPlan
from sambatune.client.settings import SettingValue, ValueState, display_value

#: What each restart kind means to the person applying the plan.
TAKES_EFFECT = {
    "none": "at once",
    "reconnect": "when the share is mounted (connected) again",
    "adapter-restart": "adapter restarts",
    "service-restart": "after a service restart",
    "reboot": "after a reboot",
}

RESTART_SENTENCE = {
    "none": "They take effect at once; no restart is needed.",
    "reconnect": "They take effect when the share is mounted again (the plan lists the commands).",
    "adapter-restart": "The network adapter restarts to apply them (a short drop).",
    "service-restart": "Restart the service (or the computer) for them to take effect.",
    "reboot": "Restart the computer for them to take effect.",
}

STATUS_TEXT = {
    "would-change": "would change",
    "planned": "planned for that machine",
    "unchanged": "already so",
    "left-as-is": "already higher, left as is",
    "changed": "changed",
    "failed": "FAILED",
    "not-attempted": "not attempted",
    "rolled-back": "put back",
    "rollback-failed": "PUT BACK FAILED",
}

KIND_TEXT = {"before-apply": "before an apply", "before-restore": "before a restore"}


def short_path(text: str) -> str:
    """``HKEY_LOCAL_MACHINE\\...`` -> ``HKLM\\...`` (same key, shorter to read)."""
    return text.replace("HKEY_LOCAL_MACHINE\\", "HKLM\\")


def _is_text_file(value: SettingValue | None) -> bool:
    return isinstance(value, str) and "\n" in value


def plan_diff_text(plan: ClientPlan) -> str:
    """The changes as a diff: a header per setting, its value before and after (a file's
    lines when the setting is a file)."""
    forced = not plan.os.detected
    lines: list[str] = []
    for change in plan.actionable():
        where = short_path(change.ref.label()) if change.ref else change.title
        lines.append(f"@@ {change.title}: takes effect {TAKES_EFFECT[change.restart]}")
        before_value = change.current.value if change.current.state == ValueState.PRESENT else None
        if _is_text_file(before_value) or _is_text_file(change.target):
            old = str(before_value or "").splitlines()
            new = str(change.target or "").splitlines()
            lines.append(f"  {where}" + ("  (new file)" if before_value is None else ""))
            for line in difflib.ndiff(old, new):
                if line.startswith(("+ ", "- ", "  ")):
                    lines.append(line[0] + " " + line[2:])
            continue
        if forced and change.current.state == ValueState.UNKNOWN:
            before = "(not read: planning for another system)"
        else:
            before = change.current.display()
        lines.append(f"- {where} = {before}")
        lines.append(f"+ {where} = {display_value(change.target)}")
    return "\n".join(lines)


def changes_sentence(plan: ClientPlan) -> str:
    """How many settings the plan changes and when they take effect; "" for none."""
    changes = plan.actionable()
    if not changes:
        return ""
    restart = plan.restart_needed()
    heavy = [c for c in changes if c.restart == restart]
    count = f"{len(changes)} setting{'s' if len(changes) > 1 else ''} would change"
    if restart == "none":
        return f"{count}. {RESTART_SENTENCE[restart]}"
    if len(heavy) == len(changes):
        return f"{count}, taking effect {TAKES_EFFECT[restart]}."
    return f"{count}; {len(heavy)} of them take effect {TAKES_EFFECT[restart]}."


def result_text(result: ApplyResult) -> str:
    """An apply, restore or dry run as people read it: each step, exactly what it runs."""
    lines = [result.message, ""]
    for step in result.steps:
        lines.append(f"[{STATUS_TEXT.get(step.status, step.status)}] {short_path(step.setting)}")
        wanted = (
            step.wanted
            if isinstance(step.wanted, str) and not _is_text_file(step.wanted)
            else display_value(step.wanted)
        )
        if step.status == "planned":
            lines.append(f"    to: {wanted}")
        else:
            lines.append(f"    {step.before.display()}  ->  {wanted}")
        for operation in step.operations:
            for index, line in enumerate(operation.splitlines()):
                lines.append(("    $ " if index == 0 else "      ") + line)
        if step.after is not None:
            lines.append(f"    read back: {step.after.display()}")
        if step.message:
            lines.append(f"    {step.message}")
    if result.backup_preview:
        lines += [
            "",
            "Before writing, the values above are saved as a backup in "
            f"{result.backup_preview.get('folder')}, so Restore can put them back "
            "exactly (absent ones as absent).",
        ]
    if result.backup_folder:
        lines += ["", f"Backup: {result.backup_id} in {result.backup_folder}"]
    for warning in result.warnings:
        lines += ["", f"Note: {warning}"]
    return "\n".join(lines)


def backup_text(backup: Backup, files: dict[str, str]) -> str:
    """What a backup puts back, for people, then its restore files verbatim."""
    lines = [
        f"Backup {backup.id}, taken {backup.created} on {backup.os.name} "
        f"({KIND_TEXT.get(backup.kind, backup.kind)}).",
        backup.summary,
        "",
        "Restoring it puts back:",
    ]
    for entry in backup.entries:
        prior = "absent (removed again)" if entry.prior.state == ValueState.ABSENT else entry.prior.display()
        lines.append(f"  {short_path(entry.ref.label())} = {prior}")
        if entry.caveat:
            lines.append(f"    note: {entry.caveat}")
    lines += ["", f"Folder: {backup.folder}"]
    for name, content in files.items():
        lines += ["", f"--- {name} (works without SambaTune too) ---", content.rstrip("\n")]
    return "\n".join(lines)
