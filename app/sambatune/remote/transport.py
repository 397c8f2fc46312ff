"""One interface for running things on a target, whether over SSH or on this computer.

Commands are argument lists, never shell strings: a transport that needs a shell
(SSH does) quotes every argument itself. Anything secret goes in on stdin.

Every command is logged here, the one place all of them pass (:meth:`Transport.run`,
:meth:`Transport.start` and what is built on them): the target, the argv shell-quoted
(a long script shortened to its size and first line), the exit status and how long it
took. Never stdin, not even its size (with sudo it starts with the password line).
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import json
import logging
import posixpath
import secrets
import shlex
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sambatune.cancellation import CancelToken
from sambatune.errors import CommandFailed, OutputTooLarge, SudoFailed
from sambatune.remote import regular_file
from sambatune.remote.regular_file import FileRead

# sudo's prompt goes to stderr; an empty prompt keeps stderr clean for parsing.
SUDO_WITH_PASSWORD = ("sudo", "-k", "-S", "-p", "")
SUDO_WITHOUT_PASSWORD = ("sudo", "-n")
# What run() asks sudo to print when it reads the password: a command that sudo lets
# through without one (a NOPASSWD rule) gets the password line on its stdin instead,
# and the missing prompt is how run() knows its output may carry the password.
# Random per process so a command cannot print it by chance; no % (sudo expands those).
SUDO_PROMPT = f"[sambatune-sudo-{secrets.token_hex(6)}]"
REDACTED = "********"
#: An argument longer than this, or of several lines, is a script: logged by its size
#: and first line, not in full at every run.
LOGGED_ARGUMENT_LIMIT = 120
#: The longest line read from a process on a target (an agent's JSON line: a survey
#: of a server with thousands of shares is a few MiB).
LINE_LIMIT = 16 * 1024 * 1024
#: The most a command run to completion may print (stdout and stderr together) before
#: it is stopped: whatever a server prints is held in memory here.
OUTPUT_LIMIT = 64 * 1024 * 1024

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    exit_code: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def error_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def check(self, what: str | None = None) -> CommandResult:
        """Raise :class:`CommandFailed` unless the command succeeded."""
        if self.exit_code != 0:
            label = what or shlex.join(self.argv)
            first = self.error_text.strip().splitlines()
            reason = first[-1] if first else f"exit code {self.exit_code}"
            raise CommandFailed(
                f"{label} failed: {reason}",
                details=f"command: {shlex.join(self.argv)}\nexit code: {self.exit_code}\n"
                f"stderr:\n{self.error_text}",
                exit_code=self.exit_code,
            )
        return self


class RemoteProcess(abc.ABC):
    """A process started on the target whose stdin stays open while we read its output."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None: ...

    @abc.abstractmethod
    def close_stdin(self) -> None: ...

    @abc.abstractmethod
    def readline(self, limit: int = LINE_LIMIT) -> bytes:
        """The next stdout line with its newline; b"" at end of output. A line longer
        than ``limit`` raises :class:`OutputTooLarge` (the rest is not read)."""

    def lines(self, limit: int = LINE_LIMIT) -> Iterator[str]:
        while True:
            line = self.readline(limit)
            if not line:
                return
            yield line.decode("utf-8", "replace").rstrip("\r\n")

    @abc.abstractmethod
    def stderr_text(self) -> str:
        """Everything the process wrote to stderr so far (call after it ended)."""

    @abc.abstractmethod
    def wait(self, timeout: float | None = None) -> int:
        """The exit code; -1 if the process was killed or the channel dropped."""

    @abc.abstractmethod
    def kill(self) -> None:
        """Stop it now: close the channel or kill the process. Safe to call twice."""

    def __enter__(self) -> RemoteProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


class Transport(abc.ABC):
    """A target: where commands run and files are read and written."""

    #: Short human label, e.g. ``admin@files1:22`` or ``this computer``.
    label: str

    def __init__(self) -> None:
        self._sudo_password: str | None = None
        self._sudo_mode: str | None = None  # "root", "nopasswd", "password"
        #: Called whenever a command ended (answered, failed or stopped): progress, for a
        #: caller that fails a target for making none (the fleet survey's clock).
        self.on_answer: Callable[[], None] | None = None
        self._ahead: dict[tuple[str, ...], CommandResult] = {}
        #: The target's Python for agents that run without sudo (empty: python3 on PATH).
        #: As root only the python3 of sudo's own search path runs: an interpreter an
        #: inventory names may be one a non-root user there can replace.
        self.python: tuple[str, ...] = ()

    # -- to implement ------------------------------------------------------
    @abc.abstractmethod
    def _run(
        self,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        cancel: CancelToken | None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        """Run ``argv``; past ``timeout`` it is stopped (on the target too, where the
        target can) and :class:`CommandTimedOut` raised; printing more than
        ``max_output`` bytes stops it with :class:`OutputTooLarge`."""

    @abc.abstractmethod
    def _start(self, argv: Sequence[str]) -> RemoteProcess: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    @property
    @abc.abstractmethod
    def is_local(self) -> bool: ...

    def is_connected(self) -> bool:
        """False once the link to the target is gone (this computer is always there)."""
        return True

    # -- public API -----------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = 120.0,
        sudo: bool = False,
        cancel: CancelToken | None = None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        """Run a command to completion and return what it printed and its exit code.

        Whatever the target does, this returns or raises within about ``timeout``
        seconds, holding at most ``max_output`` bytes of what the command printed.
        """
        if sudo:
            argv, stdin = self._with_sudo(argv, stdin, prompt=SUDO_PROMPT)
            return self._sudo_result(self._logged_run(tuple(argv), stdin, timeout, cancel, max_output))
        return self._logged_run(tuple(argv), stdin, timeout, cancel, max_output)

    def start(self, argv: Sequence[str], *, sudo: bool = False) -> RemoteProcess:
        """Start a long-running command; its stdin stays open until closed or killed."""
        if sudo:
            argv, prefix = self._with_sudo(argv, None)
            process = self._logged_start(tuple(argv))
            if prefix:
                process.write(prefix)
            return process
        return self._logged_start(tuple(argv))

    def stream(
        self,
        argv: Sequence[str],
        *,
        cancel: CancelToken | None = None,
        sudo: bool = False,
        stdin: bytes | None = None,
    ) -> Iterator[str]:
        """Yield the stdout lines of a long command; cancelling kills it.

        Raises :class:`CommandFailed` at the end if it exited non-zero (unless cancelled).
        """
        process = self.start(argv, sudo=sudo)
        unregister = cancel.on_cancel(process.kill) if cancel else (lambda: None)
        try:
            if stdin:
                process.write(stdin)
            process.close_stdin()
            yield from process.lines()
            code = process.wait()
            if cancel is not None:
                cancel.raise_if_cancelled()
            if code != 0:
                stderr = self.redact(process.stderr_text()) if sudo else process.stderr_text()
                CommandResult(tuple(argv), code, b"", stderr.encode()).check()
        finally:
            unregister()
            process.kill()

    def read_file(self, path: str, *, sudo: bool = False, limit: int = regular_file.READ_LIMIT) -> bytes:
        """A regular file's bytes. Every file SambaTune reads on a target goes through
        :meth:`read_regular_file`: a device, FIFO or directory in its place (smb.conf
        replaced by ``/dev/zero``, a backup by a FIFO) is refused, never opened."""
        found = self.read_regular_file(path, limit, sudo=sudo)
        if found.kind == "file":
            return found.data
        reason = (
            "no such file"
            if found.kind == "missing"
            else f"larger than {limit // (1024 * 1024)} MiB"
            if found.kind == "too large"
            else f"it is {regular_file.described(found.kind)}, not a regular file"
        )
        raise CommandFailed(f"Reading {path} failed: {reason}")

    def file_exists(self, path: str, *, sudo: bool = False) -> bool:
        return self.run(["test", "-e", path], sudo=sudo).exit_code == 0

    def read_regular_file(self, path: str, limit: int, *, sudo: bool = False) -> FileRead:
        """``path``'s bytes if it is a regular file of at most ``limit`` bytes, else what it is.

        Unlike :meth:`read_file`, safe on a path someone else chose: a device, FIFO or
        directory is never opened and at most ``limit + 1`` bytes are read. Raises
        :class:`CommandFailed` when the file is there but cannot be read.
        """
        argv = ["sh", "-c", regular_file.SCRIPT, "sambatune-read", path, str(limit + 1)]
        result = self.run(argv, sudo=sudo, timeout=90.0)
        if result.exit_code == regular_file.TIMEOUT_EXIT:
            raise CommandFailed(
                f"Reading {path} stalled for a minute and was stopped.", exit_code=result.exit_code
            )
        if result.exit_code not in regular_file.ANSWERS:
            result.check(f"Reading {path}")
        return regular_file.outcome(result.exit_code, result.stdout, limit)

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: int | None = None
    ) -> None:
        """Replace ``path`` with ``data`` so readers see the old bytes or the new, never a mix.

        The bytes go to a temporary file in the same directory, are flushed to disk,
        get the old file's mode and owner (or ``mode`` for a new file) and are then
        renamed over the target. Any failure removes the temporary file and leaves
        the target untouched.
        """
        directory = posixpath.dirname(path) or "."
        base = posixpath.basename(path)
        digest = hashlib.sha256(data).hexdigest()
        script = ATOMIC_WRITE_SCRIPT
        args = [directory, base, str(len(data)), digest, "" if mode is None else oct(mode)[2:]]
        self.run(["sh", "-c", script, "sambatune-write", *args], stdin=data, sudo=sudo).check(
            f"Writing {path}"
        )

    def answer_ahead(self, answers: dict[tuple[str, ...], CommandResult]) -> None:
        """Answers to commands the target already ran for us (the survey agent runs a
        host's next commands in one round trip): each is served once, to a run of exactly
        that command without stdin; anything else goes to the target as usual."""
        self._ahead.update(answers)

    # -- the log -----------------------------------------------------------
    def _logged_run(
        self,
        argv: tuple[str, ...],
        stdin: bytes | None,
        timeout: float | None,
        cancel: CancelToken | None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        started = time.monotonic()
        ready = self._ahead.pop(argv, None) if stdin is None else None
        if ready is not None:
            self._log_command(argv, f"exit {ready.exit_code}, answered ahead", started)
            return ready
        try:
            result = self._run(argv, stdin, timeout, cancel, max_output)
        except BaseException as exc:
            self._log_command(argv, _failure(exc), started)
            raise
        self._log_command(argv, f"exit {result.exit_code}", started)
        return result

    def _logged_start(self, argv: tuple[str, ...]) -> RemoteProcess:
        started = time.monotonic()
        try:
            process = self._start(argv)
        except BaseException as exc:
            self._log_command(argv, f"not started: {_failure(exc)}", started)
            raise
        log.info("%s: started %s", self.label, self.loggable(argv))
        return _LoggedProcess(process, lambda outcome: self._log_command(argv, outcome, started, ended=True))

    def _log_command(self, argv: Sequence[str], outcome: str, started: float, *, ended: bool = False) -> None:
        if self.on_answer is not None:
            self.on_answer()
        if log.isEnabledFor(logging.INFO):
            verb = "ended" if ended else "ran"
            log.info(
                "%s: %s %s -> %s in %.2f s",
                self.label,
                verb,
                self.loggable(argv),
                self.redact(outcome),
                time.monotonic() - started,
            )

    def loggable(self, argv: Sequence[str]) -> str:
        """``argv`` as a shell line for the log: scripts shortened, the sudo password
        redacted (no command carries it; this makes sure)."""
        shown = []
        for arg in argv:
            if len(arg) > LOGGED_ARGUMENT_LIMIT or "\n" in arg.strip():
                first = next((line.strip() for line in arg.splitlines() if line.strip()), "")
                arg = f"<script of {len(arg)} characters: {first[:60]}>"
            shown.append(arg)
        return self.redact(shlex.join(shown))

    # -- sudo --------------------------------------------------------------
    def set_sudo_password(self, password: str | None) -> None:
        """Remember the sudo password (in memory only) for later ``sudo=True`` calls."""
        self._sudo_password = password
        self._sudo_mode = None

    def share_sudo_with(self, other: Transport) -> None:
        """Give a new connection to the same target this one's sudo password (a reconnect)."""
        other.set_sudo_password(self._sudo_password)

    def sudo_mode(self) -> str:
        """How this target gets root: ``root`` (already), ``nopasswd`` or ``password``."""
        if self._sudo_mode is None:
            uid = self._logged_run(("id", "-u"), None, 30.0, None)
            if uid.ok and uid.text.strip() == "0":
                self._sudo_mode = "root"
            elif self._logged_run(("sudo", "-n", "true"), None, 30.0, None).ok:
                self._sudo_mode = "nopasswd"
            else:
                self._sudo_mode = "password"
        return self._sudo_mode

    def can_sudo(self) -> bool:
        """Whether root's commands run here now (as root, or by sudo that needs no password
        or has one): :meth:`check_sudo` without the explanation."""
        try:
            self.check_sudo()
        except SudoFailed:
            return False
        return True

    def check_sudo(self) -> None:
        """Raise :class:`SudoFailed` with a plain explanation unless root is reachable."""
        mode = self.sudo_mode()
        if mode in ("root", "nopasswd"):
            return
        if self._sudo_password is None:
            raise SudoFailed(
                f"Root rights are needed on {self.label} and sudo asks for a password.",
                details="Enter the sudo password of this account, or give it passwordless sudo.",
            )
        result = self._logged_run((*SUDO_WITH_PASSWORD, "-v"), self._password_line(), 30.0, None)
        if not result.ok:
            raise explain_sudo_failure(self.label, self.redact(result.error_text))

    def _password_line(self) -> bytes:
        assert self._sudo_password is not None
        return self._sudo_password.encode("utf-8") + b"\n"

    def redact(self, text: str) -> str:
        """``text`` without the sudo password, in any spelling a command could echo it in.

        The password line is sent ahead of a command's stdin; when sudo lets the command
        through without asking (a NOPASSWD rule), the command reads it instead and may
        print it back: a traceback, an error message, JSON. Text that leaves for people
        (error details, the log) goes through here.
        """
        for form in _spellings(self._sudo_password):
            text = text.replace(form, REDACTED)
        return text

    def _redact_bytes(self, data: bytes) -> bytes:
        for form in _spellings(self._sudo_password):
            data = data.replace(form.encode("utf-8", "surrogatepass"), REDACTED.encode())
        return data

    def _sudo_result(self, result: CommandResult) -> CommandResult:
        """What the command printed, as if no password had been handed over."""
        if self._sudo_mode != "password":
            return result
        prompt = SUDO_PROMPT.encode()
        read_by_sudo = prompt in result.stderr
        stderr = self._redact_bytes(result.stderr.replace(prompt, b""))
        # stdout is data (a file's bytes): touched only when the password went to the
        # command, never when sudo took it.
        stdout = result.stdout if read_by_sudo else self._redact_bytes(result.stdout)
        return dataclasses.replace(result, stdout=stdout, stderr=stderr)

    def _with_sudo(
        self, argv: Sequence[str], stdin: bytes | None, prompt: str = ""
    ) -> tuple[tuple[str, ...], bytes | None]:
        mode = self.sudo_mode()
        if mode == "root":
            return tuple(argv), stdin
        if mode == "nopasswd":
            return (*SUDO_WITHOUT_PASSWORD, "--", *argv), stdin
        self.check_sudo()
        # -k makes sudo read the password every time a rule asks for one. A rule that
        # does not (NOPASSWD for this command only) leaves the line to the command:
        # run() and the agents' bootstrap deal with that.
        sudo = (*SUDO_WITH_PASSWORD[:-1], prompt)  # the empty prompt swapped for ``prompt``
        return (*sudo, "--", *argv), self._password_line() + (stdin or b"")


class _LoggedProcess(RemoteProcess):
    """A started process that logs how it ended: its exit status when waited for, or
    that SambaTune closed it. Data written to it is never logged."""

    def __init__(self, inner: RemoteProcess, note: Callable[[str], None]) -> None:
        self._inner = inner
        self._note: Callable[[str], None] | None = note
        self._lock = threading.Lock()

    def _ended(self, outcome: str) -> None:
        with self._lock:
            note, self._note = self._note, None
        if note is not None:
            note(outcome)

    def write(self, data: bytes) -> None:
        self._inner.write(data)

    def close_stdin(self) -> None:
        self._inner.close_stdin()

    def readline(self, limit: int = LINE_LIMIT) -> bytes:
        return self._inner.readline(limit)

    def stderr_text(self) -> str:
        return self._inner.stderr_text()

    def wait(self, timeout: float | None = None) -> int:
        code = self._inner.wait(timeout)
        self._ended(f"exit {code}")
        return code

    def kill(self) -> None:
        self._inner.kill()
        self._ended("closed by SambaTune")


def line_too_long(limit: int) -> OutputTooLarge:
    return OutputTooLarge(
        f"The server sent a line longer than {limit // (1024 * 1024)} MiB; SambaTune stopped reading it."
    )


def output_too_large(argv: Sequence[str], limit: int) -> OutputTooLarge:
    return OutputTooLarge(
        f"{argv[0]} printed more than {limit // (1024 * 1024)} MiB and was stopped.",
        details=f"command: {shlex.join(argv)[:300]}",
    )


def _failure(exc: BaseException) -> str:
    text = getattr(exc, "message", "") or str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _spellings(password: str | None) -> list[str]:
    """The password as is, and as Python and JSON would quote it, longest first."""
    if not password:
        return []
    forms = {
        password,
        repr(password)[1:-1],
        repr(password.encode("utf-8", "surrogatepass"))[2:-1],
        json.dumps(password)[1:-1],
        json.dumps(password, ensure_ascii=False)[1:-1],
    }
    return sorted((form for form in forms if form), key=len, reverse=True)


def explain_sudo_failure(label: str, stderr: str) -> SudoFailed:
    text = stderr.lower()
    if "not in the sudoers" in text or "may not run sudo" in text or "not allowed to" in text:
        return SudoFailed(
            f"This account may not use sudo on {label} (it is not in the sudoers file).",
            details=stderr.strip(),
        )
    if "incorrect password" in text or "sorry, try again" in text or "no password was provided" in text:
        return SudoFailed(f"The sudo password was not accepted on {label}.", details=stderr.strip())
    if "command not found" in text or "no such file" in text:
        return SudoFailed(f"sudo is not installed on {label}.", details=stderr.strip())
    return SudoFailed(f"sudo failed on {label}.", details=stderr.strip())


# Runs under POSIX sh on the target. Arguments: dir, base name, byte count, sha256, mode.
# The content arrives on stdin; the count and digest prove it arrived whole before the
# rename, so a dropped connection can never install a truncated file.
ATOMIC_WRITE_SCRIPT = r"""
set -eu
dir=$1; base=$2; size=$3; sum=$4; mode=$5
target="$dir/$base"
tmp=$(mktemp "$dir/.$base.sambatune.XXXXXX")
# PIPE too: when the connection dies mid-upload, the complaint about the short write
# hits a closed stderr, and an untrapped SIGPIPE would leave the temporary file behind.
trap 'rm -f "$tmp"' EXIT INT TERM HUP PIPE
cat > "$tmp"
got=$(wc -c < "$tmp" | tr -d ' ')
if [ "$got" != "$size" ]; then
  echo "short write: $got of $size bytes arrived" >&2; exit 3
fi
if command -v sha256sum >/dev/null 2>&1; then
  have=$(sha256sum "$tmp" | cut -d' ' -f1)
  if [ "$have" != "$sum" ]; then echo "checksum mismatch after upload" >&2; exit 3; fi
fi
if [ -e "$target" ]; then
  chmod --reference="$target" "$tmp" 2>/dev/null || chmod "$(stat -c %a "$target")" "$tmp"
  chown --reference="$target" "$tmp" 2>/dev/null || true
  if command -v chcon >/dev/null 2>&1; then chcon --reference="$target" "$tmp" 2>/dev/null || true; fi
elif [ -n "$mode" ]; then
  chmod "$mode" "$tmp"
else
  chmod 644 "$tmp"
fi
sync "$tmp" 2>/dev/null || sync
mv -f "$tmp" "$target"
trap - EXIT INT TERM HUP PIPE
"""
