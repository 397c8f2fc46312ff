"""A hostile or failing server, made from a real one: a transport that wraps a real SSH
connection and, for the commands a rule picks, cuts the connection from the server's
side, hangs, or answers with garbage. Only the wire is tampered with; sshd, smbd,
testparm and the files are the real ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sambatune.applied_versions import AppliedVersions
from sambatune.cancellation import CancelToken
from sambatune.conf.apply import ApplyOutcome
from sambatune.remote.transport import OUTPUT_LIMIT, CommandResult, RemoteProcess, Transport

Rewrite = Callable[[tuple[str, ...]], tuple[str, ...]]

# The sshd process that serves this connection: the nearest ancestor called sshd (the
# command may run under the server-side time limit, timeout, or a shell).
SSHD_OF_THIS_CONNECTION = (
    'p=$PPID; while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != sshd ]; do '
    "p=$(cut -d' ' -f4 /proc/$p/stat); done; "
)
# Appended to a command: once it has run, the server kills the sshd process that
# serves this connection, so the client never hears the exit status.
CUT_AFTER = "status=$?; " + SSHD_OF_THIS_CONNECTION + 'kill -KILL "$p"; exit $status'


def is_swap(argv: Sequence[str]) -> bool:
    return "python3" in argv and argv[-1] == "move"


def is_rollback(argv: Sequence[str]) -> bool:
    return "python3" in argv and argv[-1] == "copy"


def is_agent(argv: Sequence[str]) -> bool:
    return any("b['modules']" in a for a in argv)


def then_cut(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Run the command, then drop the connection from the server's side."""
    return ("sh", "-c", '"$@"; ' + CUT_AFTER, "sambatune-cut", *argv)


def cut_first(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Drop the connection before the command runs."""
    return ("sh", "-c", SSHD_OF_THIS_CONNECTION + 'kill -KILL "$p"', "sambatune-cut")


def cut_mid_stream(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The real command gets the first 64 bytes sent on stdin, then the connection drops:
    a cut in the middle of an upload."""
    return (
        "sh",
        "-c",
        "{ head -c 64; " + SSHD_OF_THIS_CONNECTION + 'kill -KILL "$p"; } | "$@"',
        "sambatune-cut",
        *argv,
    )


def garbage_testparm(code: int) -> Rewrite:
    """A testparm that answers binary noise and terminal escapes with ``code``."""
    noise = "\x1b]0;owned\x07\x1b[2J\xff\xfe[global\n = =\n\x00"
    return lambda _argv: (
        "python3",
        "-c",
        f"import sys; sys.stdout.write({noise!r}); sys.stderr.write({noise!r}); sys.exit({code})",
    )


def patched_swap(
    prefix: str = "", *, alarm: int | None = None, replace: Sequence[tuple[str, str]] = ()
) -> Rewrite:
    """The real swap script, changed: ``prefix`` runs first (it may wrap os functions),
    its alarm fires after ``alarm`` seconds, and each ``replace`` pair edits its text."""

    def rewrite(argv: tuple[str, ...]) -> tuple[str, ...]:
        at = argv.index("-c") + 1
        script = argv[at]
        if alarm is not None:
            assert "signal.alarm(60)" in script
            script = script.replace("signal.alarm(60)", f"signal.alarm({alarm})")
        for old, new in replace:
            assert old in script, old
            script = script.replace(old, new)
        return (*argv[:at], prefix + script, *argv[at + 1 :])

    return rewrite


def on_directory_fsync(action: str) -> str:
    """A prefix for :func:`patched_swap`: ``action`` (a statement) runs whenever the
    script fsyncs a directory, which it does only after its rename."""
    return (
        "import os as _os, stat as _stat, errno as _errno, time as _time\n"
        "_fsync = _os.fsync\n"
        "def _patched(fd):\n"
        f"    if _stat.S_ISDIR(_os.fstat(fd).st_mode): {action}\n"
        "    return _fsync(fd)\n"
        "_os.fsync = _patched\n"
    )


def then_hang(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Run the command, then never answer (until our short timeout gives up)."""
    return ("sh", "-c", '"$@"; exec sleep 30', "sambatune-hang", *argv)


def garbage_agent(config: str) -> Rewrite:
    """An "agent" that greets properly, then names ``config``'s smbd with a pid that is
    a terminal escape sequence instead of a number."""
    result = json.dumps(
        {
            "type": "result",
            "seconds": 0,
            "data": {
                "samba": {"instances": [{"pid": "\x1b[2Jnot-a-pid", "config": config, "verified": True}]}
            },
        }
    )
    script = (
        f'import sys; sys.stdin.readline(); print(\'{{"type":"hello","protocol":1}}\'); print({result!r})'
    )
    return lambda _argv: ("python3", "-c", script)


HELLO = '{"type":"hello","protocol":1}'


def silent_agent(_argv: tuple[str, ...]) -> tuple[str, ...]:
    """An agent that greets, then never answers (it leaves when its stdin closes, as
    SambaTune's own agents do)."""
    script = f"import sys; sys.stdin.readline(); print({HELLO!r}, flush=True); sys.stdin.read()"
    return ("python3", "-c", script)


def endless_line_agent(size: int) -> Rewrite:
    """An agent that greets, then sends one line of ``size`` bytes and more."""
    script = (
        f"import sys; sys.stdin.readline(); print({HELLO!r}, flush=True); "
        f"sys.stdout.write('{{' + 'x' * {size}); sys.stdout.flush(); sys.stdin.read()"
    )
    return lambda _argv: ("python3", "-c", script)


@dataclass
class Rule:
    matches: Callable[[tuple[str, ...]], bool]
    rewrite: Rewrite
    times: int = 1  # how many matching commands it applies to
    timeout: float | None = None  # a shorter wait for a hang
    after_step: str | None = None  # only once the pipeline reported this step
    fired: int = 0


@dataclass
class FaultyTransport(Transport):
    inner: Transport
    rules: list[Rule] = field(default_factory=list)
    steps_seen: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        Transport.__init__(self)
        self.label = self.inner.label

    def _pick(self, argv: tuple[str, ...]) -> tuple[tuple[str, ...], Rule | None]:
        for rule in self.rules:
            if rule.fired >= rule.times or not rule.matches(argv):
                continue
            if rule.after_step and rule.after_step not in self.steps_seen:
                continue
            rule.fired += 1
            return rule.rewrite(argv), rule
        return argv, None

    def _run(
        self,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        cancel: CancelToken | None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        wire, rule = self._pick(tuple(argv))
        if rule is not None and rule.timeout is not None:
            timeout = rule.timeout
        return self.inner._run(wire, stdin, timeout, cancel, max_output)

    def _start(self, argv: Sequence[str]) -> RemoteProcess:
        wire, _rule = self._pick(tuple(argv))
        return self.inner._start(wire)

    def close(self) -> None:
        self.inner.close()

    @property
    def is_local(self) -> bool:
        return self.inner.is_local

    def is_connected(self) -> bool:
        return self.inner.is_connected()

    def note_step(self, event: object) -> None:
        step = getattr(event, "step", "")
        if getattr(event, "state", "") == "done":
            self.steps_seen.append(step)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def assert_truth(outcome: ApplyOutcome, config: Path, original: bytes, candidate: bytes, server: str) -> str:
    """The three must agree: what the app says, what history records, what is live."""
    live = config.read_bytes()
    assert live in (original, candidate), "the live file is neither the old nor the new version"
    actual = "new" if live == candidate else "old"
    assert outcome.live == actual, f"reported {outcome.live!r}, live is {actual}: {outcome.message}"
    rows = AppliedVersions().for_server(server, str(config))
    if rows:
        latest = rows[0]
        assert latest.outcome == outcome.status, (latest.outcome, outcome.status)
        assert latest.live == actual, (latest.live, actual)
        assert latest.sha256 == sha(live), "history keeps other bytes than the live ones"
    return actual
