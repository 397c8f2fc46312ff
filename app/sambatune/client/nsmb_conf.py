"""macOS /etc/nsmb.conf, read and edited without losing a byte.

The file is INI-like: ``[default]``, ``[SERVER]`` or ``[SERVER:SHARE]`` sections of
``key=value`` lines (nsmb.conf(5)). An edit touches one line: a key's value is replaced
in place, a new key goes right after its section's last key line, a removed key takes
its line with it. A file SambaTune had to create carries a marker comment; when the last
key SambaTune wrote is removed again, that file is deleted, so restoring a backup of
"it did not exist" leaves no file behind.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from sambatune.client.settings import ConfKeyRef, Observed
from sambatune.errors import InvalidInput

DEFAULT_PATH = "/etc/nsmb.conf"
CREATED_MARKER = "# Created by SambaTune (sambatune client apply); restoring its backup deletes this file.\n"

_SECTION = re.compile(r"^\s*\[([^\]]*)\]\s*$")
_KEY = re.compile(r"^(\s*)([A-Za-z0-9_]+)(\s*=\s*)(.*?)(\s*)$")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def find_key(text: str, section: str, key: str) -> tuple[int, re.Match[str]] | None:
    """The line index and match of ``key`` in ``section`` (the last one: later lines win)."""
    current = None
    found = None
    for index, line in enumerate(_lines(text)):
        body = line.rstrip("\r\n")
        header = _SECTION.match(body)
        if header:
            current = header.group(1).strip()
            continue
        match = _KEY.match(body)
        if match and current is not None and current.lower() == section.lower() and match.group(2) == key:
            found = (index, match)
    return found


def read_key(text: str | None, section: str, key: str) -> Observed:
    if text is None:
        return Observed.absent("the file does not exist: macOS's default applies")
    found = find_key(text, section, key)
    if found is None:
        return Observed.absent("not in the file: macOS's default applies")
    return Observed.present(found[1].group(4))


def set_key(text: str | None, section: str, key: str, value: str | None) -> str | None:
    """The file with one key set (None: removed); None when the file should not exist."""
    if text is None:
        if value is None:
            return None
        return f"{CREATED_MARKER}[{section}]\n{key}={value}\n"
    lines = _lines(text)
    found = find_key(text, section, key)
    if value is None:
        if found is not None:
            del lines[found[0]]
        result = "".join(lines)
        # Only SambaTune's own skeleton is left: the file did not exist before.
        if result.startswith(CREATED_MARKER) and not any(
            _KEY.match(line.rstrip("\r\n")) for line in _lines(result)
        ):
            return None
        return result
    if found is not None:
        index, match = found
        body = lines[index].rstrip("\r\n")
        ending = lines[index][len(body) :]
        lines[index] = body[: match.start(4)] + value + body[match.end(4) :] + ending
        return "".join(lines)
    # A new key goes after the section's last key line (or its header), or a new section at the end.
    current = None
    insert_at = None
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        header = _SECTION.match(body)
        if header:
            current = header.group(1).strip()
            if current.lower() == section.lower():
                insert_at = index + 1
            continue
        if current is not None and current.lower() == section.lower() and _KEY.match(body):
            insert_at = index + 1
    ending = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if insert_at is None:
        prefix = "" if not lines or lines[-1].endswith("\n") else ending
        return "".join(lines) + prefix + f"[{section}]{ending}{key}={value}{ending}"
    if insert_at > 0 and not lines[insert_at - 1].endswith("\n"):
        lines[insert_at - 1] += ending
    lines.insert(insert_at, f"{key}={value}{ending}")
    return "".join(lines)


def read_file(ref: ConfKeyRef) -> Observed:
    try:
        text = Path(ref.path).read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        text = None
    except OSError as exc:
        return Observed.unknown(f"cannot read {ref.path}: {exc.strerror or exc}")
    return read_key(text, ref.section, ref.key)


def write_file(ref: ConfKeyRef, value: str | None) -> None:
    from sambatune.remote.local import write_local_file_atomic

    path = Path(ref.path)
    try:
        text: str | None = path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        text = None
    result = set_key(text, ref.section, ref.key, value)
    if result is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    if "\n" in (value or ""):
        raise InvalidInput("A value on one line only.")
    write_local_file_atomic(str(path), result.encode("utf-8", "surrogateescape"), mode=0o644)
