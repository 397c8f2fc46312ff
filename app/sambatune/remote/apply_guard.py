"""One apply at a time per file, nothing left behind by runs that died, the real file.

A run starts with one command that stays running on the server for the whole run
(each command over SSH costs a round trip, about 0.1 s on loopback, so the guard does
all of this at once):

1. it resolves smb.conf through symbolic links: the file really replaced;
2. it takes an exclusive ``flock`` on the lock file ``.NAME.sambatune-lock`` beside
   it, on a descriptor that ``cat``, reading our channel, keeps open: when the run
   ends, is cut off or is killed, the channel closes, ``cat`` sees the end of its
   input, and the lock is gone with no process left on the server. The lock file is
   the applying account's, mode 0600, in the folder only that account can write: no
   one else can open it, so no one else can hold the lock and refuse every apply (a
   lock on the folder itself could be taken by anyone who can read it). It stays,
   empty, between runs: removing it would let two runs lock two different files;
3. holding the lock, every temporary file of our naming beside the config (and half
   written backups) is a leftover of a run that is no longer alive, so it removes
   them. Without ``flock`` on the server it removes only leftovers older than an hour
   (a live run never takes that long).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from sambatune.errors import CommandFailed, ConnectionFailed
from sambatune.remote.transport import RemoteProcess, Transport

BUSY_EXIT = 75
STALE_MINUTES = 60

BAD_LOCK_EXIT = 76

# Arguments: the config path as given, the backup directory. Prints "real PATH", then
# "removed PATH" for each leftover, then "locked" or "unlocked", and holds on.
GUARD_SCRIPT = r"""
set -u
path=$1; backup=$2
real=$(readlink -f -- "$path" 2>/dev/null) || real=
[ -n "$real" ] || real=$path
dir=$(dirname -- "$real"); base=$(basename -- "$real")
q=$(printf '%s' "$base" | sed 's/[][*?\\]/\\&/g')
printf 'real %s\n' "$real"
lock="$dir/.$base.sambatune-lock"
if [ -L "$lock" ] || { [ -e "$lock" ] && { [ ! -f "$lock" ] || [ ! -O "$lock" ]; }; }; then
  printf '%s is not a file of this account\n' "$lock" >&2; exit 76
fi
umask 077
exec 9>>"$lock" || exit 1
chmod 600 "$lock" || exit 1
age=
if command -v flock >/dev/null 2>&1; then
  flock -n -E 75 9 || exit 75
  state=locked
else
  state=unlocked; age="-mmin +60"
fi
find "$dir" -maxdepth 1 -type f \( -name ".$q.sambatune-*.new" -o -name ".$q.sambatune.??????" \
  -o -name "..$q.sambatune-*.new.sambatune.??????" \
  -o -name ".$q.sambatune-restore.*" -o -name ".$q.sambatune-theirs.*" \) $age \
  -exec printf 'removed %s\n' {} \; -delete 2>/dev/null
if [ -d "$backup" ]; then
  find "$backup" -maxdepth 1 -type f -name ".$q.*.sambatune.??????" $age \
    -exec printf 'removed %s\n' {} \; -delete 2>/dev/null
fi
echo "$state"
exec cat
"""


class ApplyBusy(CommandFailed):
    """Another SambaTune run is applying to the same file right now."""


@dataclass
class Guarded:
    real_path: str
    locked: bool  # False: the server has no flock, so runs are not kept apart
    removed: list[str] = field(default_factory=list)


class ApplyGuard:
    def __init__(self, transport: Transport, config_path: str, backup_dir: str, *, sudo: bool) -> None:
        self.transport = transport
        self.config_path = config_path
        self.backup_dir = backup_dir
        self.sudo = sudo
        self._process: RemoteProcess | None = None

    def acquire(self) -> Guarded:
        """Resolve, lock and clean. Raises :class:`ApplyBusy` when another run holds it."""
        process = self.transport.start(
            ["sh", "-c", GUARD_SCRIPT, "sambatune-guard", self.config_path, self.backup_dir], sudo=self.sudo
        )
        guarded = Guarded(self.config_path, False)
        for line in process.lines():
            word, _, rest = line.partition(" ")
            if word == "real" and rest:
                guarded.real_path = rest
            elif word == "removed":
                guarded.removed.append(rest)
            elif word in ("locked", "unlocked"):
                guarded.locked = word == "locked"
                self._process = process
                return guarded
        process.close_stdin()
        code = _exit_code(process)
        process.kill()
        lock = (
            f"{posixpath.dirname(guarded.real_path)}/.{posixpath.basename(guarded.real_path)}.sambatune-lock"
        )
        if code == BUSY_EXIT:
            raise ApplyBusy(
                "Another SambaTune run is applying a change to this file right now; "
                "nothing was changed. Try again when it has finished.",
                details=f"lock: {lock}",
            )
        if code == BAD_LOCK_EXIT:
            raise CommandFailed(
                f"{lock} is not SambaTune's lock file: it belongs to another account or is not "
                "a plain file. Nothing was changed; remove it if you know where it comes from.",
                details=process.stderr_text(),
            )
        if not self.transport.is_connected():
            raise ConnectionFailed("The connection dropped while taking the apply lock.")
        raise CommandFailed("Could not take the apply lock on the server.", details=process.stderr_text())

    def release(self) -> None:
        if self._process is not None:
            self._process.close_stdin()
            self._process.kill()
            self._process = None


def _exit_code(process: RemoteProcess) -> int | None:
    try:
        return process.wait(timeout=10)
    except Exception:
        return None
