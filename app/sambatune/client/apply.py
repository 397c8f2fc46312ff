"""Apply a plan, or restore a backup, safely.

The order never changes:

1. Refuse a plan made for another kind of machine, and writes without admin rights.
2. Read every setting about to change *now*; refuse if one cannot be read (it could
   not be put back) or no longer holds what the plan saw (``force`` overrides).
   Settle each limit the plan may only raise against the value read: a value already
   higher is left as it is, and only what is actually raised is persisted
   (``minimums.py``). A plan for another machine carries minimums, not values to copy.
3. Dry run: stop here and say exactly what would be written or run.
4. Write the backup and read it back.
5. Write each setting, read it back, compare.
6. On any failure, put back everything already written, from the backup.

Restoring is the same engine run on the backup's values, and it takes a backup of
what it replaces first, so a restore can be undone too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.client.backups import Backup, BackupEntry, BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.client.registry import RegistryStore
from sambatune.client.settings import (
    Observed,
    RegistryValueRef,
    SettingRef,
    SettingValue,
    ValueState,
    display_value,
)
from sambatune.client.system import CannotApplyHere, ClientSystem, NeedsAdmin
from sambatune.errors import Cancelled, InvalidInput, SambaTuneError
from sambatune.progress import Progress


class PlanStale(SambaTuneError):
    """A setting changed between planning and applying."""

    code = "plan-stale"


@dataclass
class StepResult:
    id: str
    setting: str
    operations: list[str]
    before: Observed
    wanted: SettingValue | None
    #: "would-change" (dry run), "planned" (dry run of a plan for another machine),
    #: "unchanged" (already so), "left-as-is" (already higher than the plan's minimum, or
    #: no longer SambaTune's to set: nothing written), "changed", "failed",
    #: "not-attempted" (after a failure), "rolled-back", "rollback-failed".
    status: str
    after: Observed | None = None
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "setting": self.setting,
            "operations": list(self.operations),
            "before": self.before.to_json(),
            "wanted": display_value(self.wanted),
            "status": self.status,
            "after": self.after.to_json() if self.after else None,
            "message": self.message,
        }


@dataclass
class ApplyResult:
    action: str  # "apply" or "restore"
    dry_run: bool
    ok: bool
    steps: list[StepResult]
    backup_id: str | None = None
    backup_folder: str | None = None
    restored_backup: str | None = None
    rolled_back: bool = False
    restart_needed: str = "none"
    message: str = ""
    backup_preview: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "action": self.action,
            "dry_run": self.dry_run,
            "message": self.message,
            "backup": {"id": self.backup_id, "folder": self.backup_folder} if self.backup_id else None,
            "restored_backup": self.restored_backup,
            "rolled_back": self.rolled_back,
            "restart_needed": self.restart_needed,
            "steps": [s.to_json() for s in self.steps],
            "backup_preview": self.backup_preview,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class ApplyDone:
    result: ApplyResult


@dataclass
class _Write:
    id: str
    ref: SettingRef
    target: SettingValue | None
    #: What the plan saw; None when there is nothing to compare with (restores).
    expected: Observed | None
    restart: str = "none"
    key_existed: bool | None = None
    #: A plan's write (settled against the machine's values); restores write exactly.
    from_plan: bool = False


def apply_events(
    system: ClientSystem,
    plan: ClientPlan,
    *,
    dry_run: bool = False,
    store: BackupStore | None = None,
    force: bool = False,
    cancel: CancelToken | None = None,
) -> Iterator[Progress | ApplyDone]:
    """Apply ``plan`` to ``system``; yields progress, then ``ApplyDone``.

    A dry run of a plan for another machine (a forced profile, or a plan file brought
    from elsewhere) still says exactly what the plan would write or run *there*.
    """
    elsewhere = (
        plan.os.family != system.os.family
        or plan.os.generation != system.os.generation
        or system.apply_blocker() is not None
    )
    if dry_run and elsewhere:
        yield ApplyDone(preview_elsewhere(plan, system))
        return
    if plan.os.family != system.os.family or plan.os.generation != system.os.generation:
        raise CannotApplyHere(
            f"This plan is for {plan.os.name} ({plan.os.generation}); this computer is "
            f"{system.os.name} ({system.os.generation}).",
            details="Make a plan on this computer: sambatune client plan ... --json",
        )
    writes = [
        _Write(c.id, c.ref, c.target, c.current if c.current.known else None, c.restart, from_plan=True)
        for c in plan.actionable()
        if c.ref is not None
    ]
    if not writes:
        yield ApplyDone(ApplyResult("apply", dry_run, True, [], message="Nothing to change."))
        return
    yield from _execute(
        system,
        writes,
        action="apply",
        plan_id=plan.id,
        dry_run=dry_run,
        store=store or BackupStore(),
        force=force,
        cancel=cancel,
        summary=_summary(plan),
    )


def preview_elsewhere(plan: ClientPlan, system: ClientSystem) -> ApplyResult:
    """The dry run of a plan this computer cannot apply: the writes it makes on its machine.

    Nothing is read here (these are not this computer's settings): each step shows
    what the plan saw, and the exact registry write or command it carries.
    """
    changes = [c for c in plan.actionable() if c.ref is not None]
    for change in changes:
        assert change.ref is not None
        problem = out_of_scope(change.ref, change.target)
        if problem:
            raise InvalidInput(
                f"Refusing the whole plan: {problem}",
                details="A plan may only touch the settings in SambaTune's catalog.",
            )
    steps = [
        StepResult(c.id, c.ref.label(), list(c.operations), c.current, c.target, "planned")
        if _still_planned(c.ref)
        else StepResult(c.id, c.ref.label(), [], c.current, c.target, "left-as-is", message=NOT_PLANNED)
        for c in changes
        if c.ref is not None
    ]
    where = "a profile, not a machine SambaTune has read" if not plan.os.detected else "another computer"
    here = system.os.name if system.os.detected else "this computer"
    message = (
        f"Dry run of a plan for {plan.os.name} ({where}): {len(steps)} setting(s) "
        f"would change there. Nothing on {here} was read or written."
    )
    warnings = [
        f"To apply it, run 'sambatune client apply PLAN.json' on the {plan.os.name} "
        "machine itself; it reads the real values there and takes a backup first."
    ]
    if plan.os.is_windows and plan.reg_file() is not None:
        warnings.append(
            "Its registry part is also in the plan as a .reg file "
            "('sambatune client plan ... --reg-file FILE.reg')."
        )
    return ApplyResult(
        "apply",
        True,
        True,
        steps,
        restart_needed=plan.restart_needed(),
        message=message if steps else "Nothing to change.",
        warnings=warnings,
    )


def apply_plan(system: ClientSystem, plan: ClientPlan, **kwargs: Any) -> ApplyResult:
    return _drain(apply_events(system, plan, **kwargs))


def restore_events(
    system: ClientSystem,
    backup: str | Backup,
    *,
    dry_run: bool = False,
    store: BackupStore | None = None,
    cancel: CancelToken | None = None,
) -> Iterator[Progress | ApplyDone]:
    """Put back what ``backup`` recorded (an id, a folder, a backup.json, or a Backup)."""
    store = store or BackupStore()
    loaded = backup if isinstance(backup, Backup) else store.load(backup)
    if loaded.os.family != system.os.family or loaded.os.generation != system.os.generation:
        raise CannotApplyHere(
            f"Backup {loaded.id} was taken on {loaded.os.name}; this computer is {system.os.name}."
        )
    writes = [
        _Write(
            f"restore:{entry.ref.identity()}",
            entry.ref,
            entry.prior.value if entry.prior.state == ValueState.PRESENT else None,
            None,
            restart=restart_for(entry.ref),
            key_existed=entry.key_existed,
        )
        for entry in reversed(loaded.entries)
    ]
    for event in _execute(
        system,
        writes,
        action="restore",
        plan_id=loaded.plan_id,
        dry_run=dry_run,
        store=store,
        force=True,
        cancel=cancel,
        summary=f"before restoring backup {loaded.id}",
    ):
        if isinstance(event, ApplyDone):
            event.result.restored_backup = loaded.id
            caveats = [e.caveat for e in loaded.entries if e.caveat]
            event.result.warnings += caveats
            if event.result.ok and not dry_run:
                event.result.warnings += _remove_created_keys(system, loaded.entries)
                store.mark_restored(loaded.id)
        yield event


def restore_backup(system: ClientSystem, backup: str | Backup, **kwargs: Any) -> ApplyResult:
    return _drain(restore_events(system, backup, **kwargs))


def _drain(events: Iterator[Progress | ApplyDone]) -> ApplyResult:
    for event in events:
        if isinstance(event, ApplyDone):
            return event.result
    raise AssertionError("no result")  # pragma: no cover


def _summary(plan: ClientPlan) -> str:
    names = [c.ref.label() for c in plan.actionable() if c.ref is not None]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"before applying plan {plan.id}: {shown}"


def _same(observed: Observed, target: SettingValue | None) -> bool:
    if target is None:
        return observed.state == ValueState.ABSENT
    return observed.state == ValueState.PRESENT and observed.value == target


def _registry_of(system: ClientSystem) -> RegistryStore | None:
    registry = getattr(system, "registry", None)
    return registry if isinstance(registry, RegistryStore) else None


def _execute(
    system: ClientSystem,
    writes: list[_Write],
    *,
    action: str,
    plan_id: str | None,
    dry_run: bool,
    store: BackupStore,
    force: bool,
    cancel: CancelToken | None,
    summary: str,
) -> Iterator[Progress | ApplyDone]:
    blocker = system.apply_blocker()
    if blocker:
        raise CannotApplyHere(blocker)
    if not dry_run and not system.is_admin():
        raise NeedsAdmin(
            "Changing these settings needs administrator rights.",
            details="On Windows, accept the elevation prompt (SambaTune starts a one-shot "
            "elevated helper); on Linux or macOS run as root, e.g. "
            "'sudo sambatune client apply PLAN.json'.",
        )
    registry = _registry_of(system)
    for write in writes:
        write.target = write.ref.check_value(write.target) if write.target is not None else None
        problem = out_of_scope(write.ref, write.target) or _file_out_of_place(system, write.ref)
        if problem:
            raise InvalidInput(
                f"Refusing the whole {action}: {problem}",
                details="A plan or backup may only touch the settings in "
                "SambaTune's catalog (see 'sambatune client show').",
            )

    yield Progress(0.05, "reading the current values")
    fresh: list[Observed] = []
    unreadable = [""] * len(writes)
    for index, write in enumerate(writes):
        observed = system.read(write.ref)
        if not observed.known and write.from_plan:
            # Nothing to put back: this one is left alone, the rest of the plan goes on.
            unreadable[index] = (
                f"Not changed: its current value cannot be read here ({observed.detail or 'no answer'}), "
                "so it could not be put back."
            )
        elif not observed.known:
            raise InvalidInput(
                f"The current value of {write.ref.label()} cannot be read, so it could not be "
                "put back; nothing was changed.",
                details=observed.detail,
            )
        if write.expected is not None and not write.expected.same_as(observed) and not force:
            raise PlanStale(
                f"{write.ref.label()} changed since the plan was made "
                f"({write.expected.display()} then, {observed.display()} now); nothing was "
                "changed.",
                details="Make a new plan, or apply with --force.",
            )
        fresh.append(observed)

    left = _settle_minimums(writes, fresh, unreadable)
    steps = [
        StepResult(w.id, w.ref.label(), [], before, w.target, "left-as-is", message=why)
        if why
        else StepResult(
            w.id,
            w.ref.label(),
            system.operations(w.ref, w.target),
            before,
            w.target,
            "unchanged" if _same(before, w.target) else "would-change",
        )
        for w, before, why in zip(writes, fresh, left, strict=True)
    ]
    pending = [(w, s) for w, s in zip(writes, steps, strict=True) if s.status == "would-change"]
    higher = sum(1 for s in steps if s.status == "left-as-is")
    left_text = f" {higher} left as is (each step says why)." if higher else ""
    restart = _heaviest(w.restart for w, _ in pending)

    entries = []
    for write, step in pending:
        key_existed = None
        created: list[str] = []
        if isinstance(write.ref, RegistryValueRef) and registry is not None:
            created = registry.missing_keys(write.ref.key)
            key_existed = not created
        entries.append(BackupEntry(write.ref, step.before, key_existed, _caveat(system, write.ref), created))

    if dry_run:
        preview = None
        if entries:
            preview = {
                "folder": str(store.root / "<new backup>"),
                "settings": [e.to_json() for e in entries],
            }
        message = (
            f"Dry run: {len(pending)} setting(s) would change, "
            f"{len(steps) - len(pending) - higher} already as planned.{left_text} "
            "Nothing was written."
        )
        yield ApplyDone(
            ApplyResult(
                action, True, True, steps, restart_needed=restart, message=message, backup_preview=preview
            )
        )
        return
    if not pending:
        yield ApplyDone(
            ApplyResult(
                action,
                False,
                True,
                steps,
                message="Every setting already holds the planned value"
                + (" or more." if higher else ".")
                + left_text,
            )
        )
        return

    yield Progress(0.15, "writing the backup")
    backup = store.create(
        system.os,
        entries,
        kind="before-apply" if action == "apply" else "before-restore",
        plan_id=plan_id,
        summary=summary,
    )

    done: list[tuple[_Write, StepResult]] = []
    failure: str | None = None
    for index, (write, step) in enumerate(pending):
        try:
            if cancel is not None:
                cancel.raise_if_cancelled()
            yield Progress(0.2 + 0.7 * index / len(pending), f"setting {write.ref.label()}")
            done.append((write, step))
            system.write(write.ref, write.target)
            step.after = system.read(write.ref)
            if not _same(step.after, write.target):
                step.status = "failed"
                step.message = f"read back {step.after.display()} instead of {display_value(write.target)}"
                failure = f"{write.ref.label()}: {step.message}"
                break
            step.status = "changed"
        except Cancelled:
            step.status = "failed"
            step.message = "cancelled"
            failure = "cancelled"
            break
        except (SambaTuneError, OSError) as error:
            step.status = "failed"
            step.message = error.message if isinstance(error, SambaTuneError) else str(error)
            failure = f"{write.ref.label()}: {step.message}"
            break

    result = ApplyResult(
        action,
        False,
        failure is None,
        steps,
        backup.id,
        str(backup.folder),
        restart_needed=restart if failure is None else "none",
    )
    if failure is None:
        result.message = (
            f"{len(pending)} setting(s) changed; backup {backup.id}."
            + left_text
            + " "
            + _restart_text(restart)
        )
        yield ApplyDone(result)
        return

    yield Progress(0.95, "putting back what was changed")
    for step in steps:
        if step.status == "would-change":
            step.status = "not-attempted"
    problems = _roll_back(system, done)
    # Only the writes attempted can have made keys (pending and entries share the order).
    result.warnings += _remove_created_keys(system, entries[: len(done)])
    result.rolled_back = True
    result.message = f"Stopped: {failure}. " + (
        f"Everything already changed was put back from backup {backup.id}."
        if not problems
        else "Putting back failed for: " + "; ".join(problems) + f". Restore by hand from {backup.folder}."
    )
    yield ApplyDone(result)


NOT_PLANNED = "SambaTune plans no longer set this (see 'sambatune client show' for why); left as is."


def _still_planned(ref: SettingRef) -> bool:
    from sambatune.client.minimums import entry_of

    entry = entry_of(ref)
    return entry is None or entry.planned


def _settle_minimums(writes: list[_Write], fresh: list[Observed], unreadable: list[str]) -> list[str]:
    """Settle a plan's limits against the values just read; why each write is left out
    (``unreadable`` says so for those whose value could not be read).

    A limit the catalog marks ``raise_only`` is raised to the plan's minimum, never
    lowered: a value already higher is left as it is (and so is a setting plans no
    longer set). SambaTune's sysctl.d file then gets only the values actually raised.
    Each write's ``target`` becomes what it will really write. Restores are exact.
    """
    from sambatune.client.minimums import entry_of, settle, settle_sysctl_file
    from sambatune.client.settings import FileRef, SysctlRef

    left = list(unreadable)  # what could not be read is left out first
    raised: dict[str, str] = {}
    for index, (write, before) in enumerate(zip(writes, fresh, strict=True)):
        entry = entry_of(write.ref)
        if left[index] or not write.from_plan or entry is None or write.target is None:
            continue
        if not entry.planned:
            left[index] = NOT_PLANNED
            continue
        if entry.raise_only is not None:
            settled = settle(entry.raise_only, before, write.target)
            if settled.left_as_is:
                left[index] = settled.left_as_is
                continue
            write.target = write.ref.check_value(settled.target)
        if isinstance(write.ref, SysctlRef) and not _same(before, write.target):
            raised[write.ref.name] = str(write.target)
    for index, (write, before) in enumerate(zip(writes, fresh, strict=True)):
        if left[index]:
            continue
        if write.from_plan and isinstance(write.ref, FileRef) and isinstance(write.target, str):
            content = settle_sysctl_file(write.target, before, raised)
            if content is None:
                left[index] = (
                    "nothing new to keep across reboots: this apply raises no "
                    "sysctl value here; the file is left as it is."
                )
            else:
                write.target = content
    return left


def _roll_back(system: ClientSystem, done: list[tuple[_Write, StepResult]]) -> list[str]:
    problems = []
    for write, step in reversed(done):
        prior = step.before.value if step.before.state == ValueState.PRESENT else None
        try:
            if _same(system.read(write.ref), prior):
                continue  # the failed write changed nothing
            system.write(write.ref, prior)
            after = system.read(write.ref)
            if _same(after, prior):
                if step.status == "changed":
                    step.status = "rolled-back"
            else:
                step.status = "rollback-failed"
                problems.append(f"{write.ref.label()} reads {after.display()}")
        except (SambaTuneError, OSError) as error:
            step.status = "rollback-failed"
            problems.append(f"{write.ref.label()}: {error}")
    return problems


def _remove_created_keys(system: ClientSystem, entries: list[BackupEntry]) -> list[str]:
    """Remove the registry keys the writes created, once their values are gone again.

    Deepest first, so a created parent is empty when its turn comes. A key that holds
    anything (someone else's value or subkey, or a value that could not be put back)
    stays, and the returned warnings say so.
    """
    registry = _registry_of(system)
    if registry is None:
        return []
    created: dict[str, str] = {}
    for entry in entries:
        for key in entry.created_keys:
            created.setdefault(key.lower(), key)
    warnings = []
    for key in sorted(created.values(), key=lambda k: k.count("\\"), reverse=True):
        if not registry.key_exists(key):
            continue
        if registry.values(key) or registry.subkeys(key):
            warnings.append(
                f"SambaTune created the registry key {key}; it was left in place because it is not empty."
            )
            continue
        registry.delete_tree(key)
    return warnings


def _caveat(system: ClientSystem, ref: SettingRef) -> str:
    from sambatune.client.settings import InterfaceMtuRef

    if isinstance(ref, InterfaceMtuRef) and system.os.family in ("windows", "macos"):
        return (
            f"{ref.label()}: the restore sets the previous number back; whether it had been "
            "set explicitly or came from the adapter's default is not recorded."
        )
    return ""


def out_of_scope(ref: SettingRef, target: SettingValue | None) -> str | None:
    """Why a write falls outside what SambaTune manages, or None if it is in scope."""
    from pathlib import PurePath

    from sambatune.client.catalog import is_catalogued
    from sambatune.client.linux_system import SYSCTL_FILE_NAME, parse_sysctl_file
    from sambatune.client.settings import (
        AdapterPropertyRef,
        ConfKeyRef,
        DefaultsRef,
        FileRef,
        InterfaceMtuRef,
        MountOptionRef,
        SmbClientConfigRef,
        SysctlRef,
        TcpAutotuningRef,
    )

    if isinstance(ref, SmbClientConfigRef):
        # Signing, encryption and guest logons are read for the report only: a plan or
        # backup file that asks to write them is refused whole.
        if not ref.writable:
            return f"{ref.label()} is a security setting SambaTune reports and never writes."
        ok = is_catalogued(ref.kind, name=ref.name)
    elif isinstance(ref, RegistryValueRef):
        ok = is_catalogued("registry", key=ref.key, name=ref.name)
    elif isinstance(ref, SysctlRef):
        ok = is_catalogued("sysctl", name=ref.name)
    elif isinstance(ref, AdapterPropertyRef):
        ok = is_catalogued("adapter-property", keyword=ref.keyword)
    elif isinstance(ref, (InterfaceMtuRef, TcpAutotuningRef)):
        ok = True
    elif isinstance(ref, MountOptionRef):
        # The entry itself must be a cifs mount: the system's read refuses anything else.
        ok = is_catalogued("mount-option", option=ref.option)
    elif isinstance(ref, ConfKeyRef):
        ok = PurePath(ref.path).name == "nsmb.conf" and is_catalogued("conf-key", key=ref.key)
    elif isinstance(ref, DefaultsRef):
        ok = ref.domain == "com.apple.desktopservices" and is_catalogued("defaults", key=ref.key)
    elif isinstance(ref, FileRef):
        if PurePath(ref.path).name != SYSCTL_FILE_NAME:
            return f"{ref.path} is not SambaTune's own {SYSCTL_FILE_NAME}."
        text = str(target or "")
        stray = [name for name in parse_sysctl_file(text) if not is_catalogued("sysctl", name=name)]
        lines = [line.strip() for line in text.splitlines()]
        unreadable = [line for line in lines if line and not line.startswith(("#", ";")) and "=" not in line]
        if stray or unreadable:
            return f"{ref.path} would hold settings SambaTune does not manage: " + ", ".join(
                stray + unreadable
            )
        ok = True
    else:
        ok = False
    return None if ok else f"{ref.label()} is not a setting SambaTune manages."


def _file_out_of_place(system: ClientSystem, ref: SettingRef) -> str | None:
    """Why a whole-file write is not this system's own persistence file in a folder only
    its owner can change, or None. A plan or a backup is a file anyone could hand to the
    apply (run as root): it may name SambaTune's file, never a file elsewhere."""
    import os
    import stat
    from pathlib import Path

    from sambatune.client.settings import FileRef

    if not isinstance(ref, FileRef):
        return None
    own = getattr(system, "persistence_file", None)
    if not isinstance(own, FileRef):
        return f"{ref.path}: this computer keeps no sysctl file of SambaTune's."
    if Path(ref.path) != Path(own.path):
        return (
            f"{ref.path} is not this computer's {own.path} (a plan made with --sysctl-dir "
            "is applied with the same --sysctl-dir)."
        )
    # The folder, or the nearest one above it that exists (the write makes the rest).
    folder = Path(ref.path).parent
    while not os.path.lexists(folder) and folder.parent != folder:
        folder = folder.parent
    try:
        info = os.lstat(folder)
    except OSError as error:
        return f"{folder} cannot be used: {error.strerror}."
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a link or a file), so {ref.path} is not written there."
    if info.st_uid not in (0, os.geteuid()) or info.st_mode & 0o022:
        return f"{folder} can be changed by other users, so {ref.path} is not written there."
    return None


def restart_for(ref: SettingRef) -> str:
    """What putting a setting back needs before it takes effect (restores have no plan)."""
    from sambatune.client.settings import AdapterPropertyRef

    if isinstance(ref, RegistryValueRef):
        return "reboot"
    if isinstance(ref, AdapterPropertyRef):
        return "adapter-restart"
    from sambatune.client.minimums import catalog_entry_of

    entry = catalog_entry_of(ref)
    return entry.restart if entry is not None else "none"


_RESTART_ORDER = ("none", "reconnect", "adapter-restart", "service-restart", "reboot")


def _heaviest(kinds: Iterator[str] | Any) -> str:
    ranked = [k for k in kinds if k in _RESTART_ORDER]
    return max(ranked, key=_RESTART_ORDER.index) if ranked else "none"


def _restart_text(kind: str) -> str:
    return {
        "none": "No restart needed.",
        "reconnect": "Mount the share again (or reconnect to it) for it to take effect.",
        "adapter-restart": "The network adapter restarts to apply it (a short drop).",
        "service-restart": "Restart the service (or the computer) for it to take effect.",
        "reboot": "Restart the computer for it to take effect.",
    }[kind]
