"""cifs (SMB) mounts of a Linux client: where they are written, and the one edit SambaTune makes.

Three places name a cifs mount: ``/etc/fstab``, systemd ``.mount`` units in
``/etc/systemd/system`` and autofs maps (``/etc/auto.master`` and the maps it names).
Each entry has an options field (``rsize=...,multichannel,...``). SambaTune reads that
field and changes one option of it at a time; every other byte of the file stays as it
was: comments, spacing, tabs, other lines, the line ending or its absence at the end.

Files are handled as bytes decoded with ``surrogateescape``, so a file in any encoding
goes back out unchanged. An option SambaTune adds goes at the end of the field; taking
it out again removes exactly what was added, which is why a restore (the same edits in
reverse order) gives back the original bytes.

A changed option reaches the kernel only when the share is mounted again. ``mount -o
remount`` keeps the SMB session and its connections (``smb3_reconfigure`` in the
kernel's fs/smb/client/fs_context.c copies the new options into the mount but does not
reconnect), so what is agreed when the session is set up (multichannel, max_channels,
nosharesock, rsize/wsize) would not change. The plan therefore lists an unmount and a
mount (``remount_steps``).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from sambatune.client.settings import MountOptionRef, Observed
from sambatune.errors import InvalidInput

CIFS_TYPES = ("cifs", "smb3")


@dataclass(frozen=True)
class EtcPaths:
    """Where this computer's mount configuration lives (a temporary tree in the tests)."""

    fstab: Path = Path("/etc/fstab")
    systemd_dir: Path = Path("/etc/systemd/system")
    auto_master: Path = Path("/etc/auto.master")
    #: Where autofs looks for a map named without a path (``auto.smb`` -> /etc/auto.smb).
    map_dir: Path = Path("/etc")

    @classmethod
    def under(cls, root: Path) -> EtcPaths:
        """The same layout below ``root`` (``root`` stands in for /etc)."""
        return cls(root / "fstab", root / "systemd" / "system", root / "auto.master", root)


@dataclass(frozen=True)
class MountEntry:
    source: str  # "fstab", "systemd" or "autofs"
    path: str
    #: What names the entry in its file: the mount point (fstab, systemd), the map key (autofs).
    entry: str
    mount_point: str
    what: str
    fstype: str
    #: The options field as written, and where it sits in the decoded file text.
    options: str
    start: int
    end: int
    #: Why the entry cannot be edited ("" when it can).
    problem: str = ""
    #: systemd: the unit's file name (what systemctl restarts).
    unit: str = ""

    def ref(self, option: str) -> MountOptionRef:
        return MountOptionRef(self.source, self.path, self.entry, option)

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "path": self.path,
            "entry": self.entry,
            "mount_point": self.mount_point,
            "what": self.what,
            "fstype": self.fstype,
            "options": self.options,
            "problem": self.problem,
            "unit": self.unit,
        }


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# -- the options field ---------------------------------------------------------------------


def option_tokens(options: str) -> list[str]:
    return options.split(",") if options else []


def option_name(token: str) -> str:
    return token.partition("=")[0]


def current_option(options: str, name: str) -> str | None:
    """The option as the kernel takes it: the last one of that name wins, as when parsed."""
    found = [t for t in option_tokens(options) if option_name(t) == name]
    return found[-1] if found else None


def with_option(options: str, name: str, token: str | None) -> str:
    """``options`` with the last ``name`` option replaced by ``token`` (None: removed);
    a new option goes at the end, so removing it again restores the field exactly."""
    tokens = option_tokens(options)
    where = [i for i, t in enumerate(tokens) if option_name(t) == name]
    if token is None:
        if where:
            del tokens[where[-1]]
        return ",".join(tokens)
    if where:
        tokens[where[-1]] = token
    else:
        tokens.append(token)
    return ",".join(tokens)


# -- fstab -----------------------------------------------------------------------------


def _fstab_unescape(field: str) -> str:
    """fstab writes spaces and tabs in paths as octal escapes (\\040, \\011)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_fstab(text: str, path: str) -> list[MountEntry]:
    entries: list[MountEntry] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        fields = list(re.finditer(r"\S+", body))
        if fields and not fields[0].group().startswith("#") and len(fields) >= 3:
            fstype = fields[2].group()
            if fstype in CIFS_TYPES:
                mount_point = _fstab_unescape(fields[1].group())
                if len(fields) >= 4:
                    options = fields[3]
                    entries.append(
                        MountEntry(
                            "fstab",
                            path,
                            mount_point,
                            mount_point,
                            _fstab_unescape(fields[0].group()),
                            fstype,
                            options.group(),
                            offset + options.start(),
                            offset + options.end(),
                        )
                    )
                else:
                    entries.append(
                        MountEntry(
                            "fstab",
                            path,
                            mount_point,
                            mount_point,
                            fields[0].group(),
                            fstype,
                            "",
                            offset + len(body),
                            offset + len(body),
                            problem="the line has no options field; adding one would change more "
                            "than the options",
                        )
                    )
        offset += len(line)
    return _mark_duplicates(entries)


def _mark_duplicates(entries: list[MountEntry]) -> list[MountEntry]:
    seen: dict[str, int] = {}
    for item in entries:
        seen[item.entry] = seen.get(item.entry, 0) + 1
    return [
        MountEntry(**{**e.__dict__, "problem": f"{e.entry} is listed more than once in {e.path}"})
        if seen[e.entry] > 1 and not e.problem
        else e
        for e in entries
    ]


# -- systemd mount units ---------------------------------------------------------------


def _unit_where(name: str) -> str:
    """The mount point a unit file name stands for (systemd-escape --path, reversed)."""
    stem = name[: -len(".mount")]
    text = "/" + stem.replace("-", "/") if stem != "-" else "/"
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def parse_mount_unit(text: str, path: str) -> list[MountEntry]:
    """The cifs mount a ``.mount`` unit describes (none when it is another type)."""
    section = ""
    values: dict[str, tuple[str, int, int, bool]] = {}
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        stripped = body.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
        elif section == "Mount" and stripped and not stripped.startswith(("#", ";")):
            match = re.match(r"(\s*)([A-Za-z]+)(\s*=\s*)(.*?)(\s*)$", body)
            if match:
                key = match.group(2)
                # A later assignment replaces an earlier one, so the last one counts.
                values[key] = (
                    match.group(4),
                    offset + match.start(4),
                    offset + match.end(4),
                    body.endswith("\\"),
                )
        offset += len(line)
    fstype = values.get("Type", ("", 0, 0, False))[0]
    if fstype not in CIFS_TYPES:
        return []
    name = Path(path).name
    where = values.get("Where", (_unit_where(name), 0, 0, False))[0]
    what = values.get("What", ("", 0, 0, False))[0]
    problem = ""
    if "Options" not in values:
        options, start, end = "", 0, 0
        problem = "the unit has no Options= line; adding one would change more than the options"
    else:
        options, start, end, continued = values["Options"]
        if continued:
            problem = "its Options= line continues on the next line"
    return [MountEntry("systemd", path, where, where, what, fstype, options, start, end, problem, name)]


# -- autofs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AutofsMap:
    mount_point: str
    path: str
    #: The master map's options for the whole map (they may name the fstype).
    options: str
    problem: str = ""


def parse_auto_master(text: str, paths: EtcPaths) -> list[AutofsMap]:
    """The file maps auto.master names; maps of other kinds are listed with why they are skipped."""
    maps: list[AutofsMap] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("+"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if len(words) < 2:
            continue
        mount_point, source = words[0], words[1]
        options = " ".join(w for w in words[2:] if w.startswith("-"))
        kind, _, name = (
            source.rpartition(":") if ":" in source and not source.startswith("/") else ("", "", source)
        )
        kind = kind.split(",")[0]
        if source.startswith("-") or kind not in ("", "file"):
            maps.append(AutofsMap(mount_point, source, options, f"a {kind or source} map, not a file"))
            continue
        map_path = Path(name) if name.startswith("/") else paths.map_dir / name
        problem = ""
        if map_path.is_file() and os.access(map_path, os.X_OK):
            problem = "an executable (program) map: its entries are computed, not written in a file"
        maps.append(AutofsMap(mount_point, str(map_path), options, problem))
    return maps


def parse_autofs_map(text: str, amap: AutofsMap) -> list[MountEntry]:
    entries: list[MountEntry] = []
    offset = 0
    master_type = _fstype_of(amap.options.lstrip("-"))
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        continued = body.endswith("\\") or (index > 0 and lines[index - 1].rstrip("\r\n").endswith("\\"))
        fields = list(re.finditer(r"\S+", body))
        if not fields or fields[0].group().startswith(("#", "+")) or continued:
            offset += len(line)
            continue
        key = fields[0].group()
        option_field = fields[1] if len(fields) >= 3 and fields[1].group().startswith("-") else None
        options = option_field.group()[1:] if option_field else ""
        fstype = _fstype_of(options) or master_type
        if fstype in CIFS_TYPES:
            location = fields[-1].group()
            mount_point = key if amap.mount_point == "/-" else amap.mount_point.rstrip("/") + "/" + key
            if option_field is not None:
                start = offset + option_field.start() + 1
                entries.append(
                    MountEntry(
                        "autofs",
                        amap.path,
                        key,
                        mount_point,
                        location.lstrip(":"),
                        fstype,
                        options,
                        start,
                        offset + option_field.end(),
                    )
                )
            else:
                entries.append(
                    MountEntry(
                        "autofs",
                        amap.path,
                        key,
                        mount_point,
                        location.lstrip(":"),
                        fstype,
                        "",
                        0,
                        0,
                        problem="the entry has no options field of its own",
                    )
                )
        offset += len(line)
    return _mark_duplicates(entries)


def _fstype_of(options: str) -> str:
    value = current_option(options, "fstype")
    return value.partition("=")[2] if value else ""


# -- all of them -----------------------------------------------------------------------


@dataclass
class MountScan:
    entries: list[MountEntry]
    #: What could not be read or is not a file SambaTune edits, and why.
    notes: list[str]


def _read_text(path: Path) -> str | None:
    try:
        return decode(path.read_bytes())
    except OSError:
        return None


def scan_mounts(paths: EtcPaths) -> MountScan:
    entries: list[MountEntry] = []
    notes: list[str] = []
    text = _read_text(paths.fstab)
    if text is not None:
        entries += parse_fstab(text, str(paths.fstab))
    try:
        units = sorted(paths.systemd_dir.glob("*.mount"))
    except OSError:
        units = []
    for unit in units:
        # Units enabled elsewhere are symlinks into /usr/lib: SambaTune edits only /etc's own.
        if unit.is_symlink():
            continue
        unit_text = _read_text(unit)
        if unit_text is not None:
            entries += parse_mount_unit(unit_text, str(unit))
    master = _read_text(paths.auto_master)
    if master is not None:
        for amap in parse_auto_master(master, paths):
            if amap.problem:
                notes.append(f"autofs {amap.mount_point}: {amap.path} is {amap.problem}; not read.")
                continue
            map_text = _read_text(Path(amap.path))
            if map_text is None:
                notes.append(f"autofs {amap.mount_point}: cannot read {amap.path}.")
                continue
            entries += parse_autofs_map(map_text, amap)
    return MountScan(entries, notes)


def _entries_in(source: str, path: str, text: str, paths: EtcPaths | None) -> list[MountEntry]:
    if source == "fstab":
        return parse_fstab(text, path)
    if source == "systemd":
        return parse_mount_unit(text, path)
    master = None
    if paths is not None:
        master_text = _read_text(paths.auto_master)
        if master_text is not None:
            master = next((m for m in parse_auto_master(master_text, paths) if m.path == path), None)
    return parse_autofs_map(text, master or AutofsMap("/-", path, ""))


def find_entry(ref: MountOptionRef, text: str, paths: EtcPaths | None = None) -> MountEntry:
    found = [e for e in _entries_in(ref.source, ref.path, text, paths) if e.entry == ref.entry]
    if not found:
        raise InvalidInput(f"{ref.path} has no cifs mount {ref.entry}.")
    if found[0].problem:
        raise InvalidInput(f"{ref.entry} in {ref.path} cannot be edited: {found[0].problem}.")
    return found[0]


def read_option(ref: MountOptionRef, paths: EtcPaths | None = None) -> Observed:
    try:
        text = decode(Path(ref.path).read_bytes())
    except OSError as exc:
        return Observed.unknown(f"cannot read {ref.path}: {exc.strerror or exc}")
    try:
        entry = find_entry(ref, text, paths)
    except InvalidInput as error:
        return Observed.unknown(error.message)
    token = current_option(entry.options, ref.option)
    return (
        Observed.absent("not in the mount options: the kernel's default")
        if token is None
        else Observed.present(token)
    )


def edited_text(ref: MountOptionRef, text: str, token: str | None, paths: EtcPaths | None = None) -> str:
    """The file with only this entry's options field changed."""
    entry = find_entry(ref, text, paths)
    options = with_option(entry.options, ref.option, token)
    if not options:
        raise InvalidInput(f"Removing {ref.option} would leave {ref.entry} without options.")
    return text[: entry.start] + options + text[entry.end :]


def write_option(ref: MountOptionRef, token: str | None, paths: EtcPaths | None = None) -> None:
    from sambatune.remote.local import write_local_file_atomic

    path = Path(ref.path)
    text = decode(path.read_bytes())
    # The atomic write keeps the file's mode and owner (fstab 0644, a credentials-bearing unit 0600).
    write_local_file_atomic(str(path), encode(edited_text(ref, text, token, paths)))


def remount_steps(entry: MountEntry) -> list[str]:
    """What makes the kernel use the new options: unmount and mount again."""
    where = shlex.quote(entry.mount_point)
    if entry.source == "systemd":
        return ["systemctl daemon-reload", f"systemctl restart {shlex.quote(entry.unit)}"]
    if entry.source == "autofs":
        # autofs mounts again on the next access, with the map as it is then.
        return [f"umount {where}  # autofs mounts it again, with the new options, on the next access"]
    # systemd generates units from fstab; without the reload it warns that fstab changed.
    return ["systemctl daemon-reload  # where systemd runs", f"umount {where}", f"mount {where}"]


def cifs_mountable(filesystems: Path = Path("/proc/filesystems")) -> str | None:
    """None when this kernel can mount cifs now, else why not (so remounts are not run)."""
    try:
        listed = filesystems.read_text()
    except OSError as exc:
        return f"cannot read {filesystems}: {exc.strerror or exc}"
    if re.search(r"\bcifs\b", listed):
        return None
    return (
        "this kernel has no cifs file system loaded (not in /proc/filesystems; 'modprobe cifs' "
        "loads it where the module is installed), so SambaTune cannot mount shares here"
    )
