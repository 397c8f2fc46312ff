"""Start a server-side agent over a transport and read its JSON-lines protocol.

Nothing is installed on the server. The transport runs ``python3 -u -c BOOTSTRAP``;
the bootstrap reads one length-prefixed JSON bundle from stdin (the agent's modules
and its parameters), runs the agent, and leaves stdin open: when we close it (or
the SSH channel drops) the agent cleans up and exits. The sshuttle way, plus a
hello line so an unusable server Python gives a clear message.

Under sudo with a password, the password line goes ahead of the bundle. A sudoers rule
that lets python3 run without a password (NOPASSWD) leaves that line to python3, so
the bootstrap skips whatever comes before the bundle's header line: the password
never reaches the agent, an error message or a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import (
    AgentFailed,
    Cancelled,
    CommandFailed,
    CommandTimedOut,
    ConnectionFailed,
    OutputTooLarge,
)
from sambatune.packaged import agent_source
from sambatune.remote.transport import LINE_LIMIT, OUTPUT_LIMIT, RemoteProcess, Transport

PROTOCOL = 1
BUNDLE_HEADER = b"SAMBATUNE-BUNDLE "
MIN_PYTHON = (3, 6)
RUNTIME_MODULE = "agent_runtime"

log = logging.getLogger(__name__)

# Written so that any Python parses it, down to 2.7: an old interpreter must be able
# to say it is too old rather than die with a syntax error.
BOOTSTRAP = (
    "import sys,json\n"
    "if sys.version_info<(3,6):\n"
    " sys.stdout.write(json.dumps({'type':'error','code':'python-too-old','python':"
    "'%d.%d.%d'%tuple(sys.version_info[:3]),'message':'Python %d.%d is too old: "
    "SambaTune agents need Python 3.6 or newer'%tuple(sys.version_info[:2])})+'\\n')\n"
    " sys.stdout.flush();sys.exit(3)\n"
    "import types\n"
    "r=sys.stdin.buffer\n"
    "l=r.readline()\n"
    "while l and not l.startswith(b'SAMBATUNE-BUNDLE '):l=r.readline()\n"
    "n=int(l[17:])\n"
    "b=json.loads(r.read(n).decode('utf-8'))\n"
    "for name,src in b['modules']:\n"
    " m=types.ModuleType(name);m.__file__='<sambatune>/'+name+'.py';sys.modules[name]=m\n"
    " if name==b['main']:m.__name__='__main__'\n"
    " exec(compile(src,m.__file__,'exec'),m.__dict__)\n"
    " if name=='agent_runtime':m.PARAMS=b['params']\n"
)


@dataclass
class AgentEvent:
    """One JSON line from an agent (other than hello, result and error)."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class AgentResult:
    hello: dict[str, Any]
    data: Any
    seconds: float
    events: list[AgentEvent]


def python_command(transport: Transport, python: str | None = None, *, sudo: bool = False) -> list[str]:
    """The interpreter command: ``python`` if given, else the target's own (an
    inventory's ansible_python_interpreter) unless the agent runs as root, else python3.

    On this computer the app's own interpreter is used.
    """
    if python:
        return [python, "-u", "-c", BOOTSTRAP]
    if transport.is_local:
        return [sys.executable, "-u", "-c", BOOTSTRAP]
    return [*((not sudo and transport.python) or ("python3",)), "-u", "-c", BOOTSTRAP]


def bundle(name: str, params: dict[str, Any]) -> bytes:
    modules = [(RUNTIME_MODULE, agent_source(RUNTIME_MODULE)), (name, agent_source(name))]
    payload = json.dumps({"modules": modules, "params": params, "main": name}).encode("utf-8")
    return BUNDLE_HEADER + str(len(payload)).encode("ascii") + b"\n" + payload


class AgentRun:
    """A running agent. Iterate :meth:`events`, then read :attr:`result`.

    ``timeout``: seconds the whole run may take; past it the agent is stopped (its
    stdin closed, the channel dropped) and :class:`CommandTimedOut` says so. Agents
    that answer a question (sysinfo) have one; measurements that run as long as the
    person chose have none and are cancelled instead. Every line is at most
    ``LINE_LIMIT`` bytes and the whole output ``OUTPUT_LIMIT``.
    """

    def __init__(
        self,
        transport: Transport,
        name: str,
        params: dict[str, Any] | None = None,
        *,
        sudo: bool = False,
        cancel: CancelToken | None = None,
        python: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.transport = transport
        self.name = name
        self.params = params or {}
        self.cancel = cancel or CancelToken()
        self.hello: dict[str, Any] = {}
        self.result: AgentResult | None = None
        self.timeout = timeout
        self.timed_out = False
        self._watchdog: threading.Timer | None = None
        # The command line is the same bootstrap for every agent: say which one it runs.
        log.info("%s: agent %s", transport.label, name)
        try:
            self.argv = python_command(transport, python, sudo=sudo)
            self._process: RemoteProcess = transport.start(self.argv, sudo=sudo)
        except CommandFailed as exc:
            if exc.exit_code == 127:
                raise self._no_python(exc.message) from exc
            raise
        self._unregister = self.cancel.on_cancel(self.stop)
        if timeout is not None:
            self._watchdog = threading.Timer(timeout, self._expire)
            self._watchdog.daemon = True
            self._watchdog.start()
        try:
            self._process.write(bundle(name, self.params))
        except Exception:
            pass  # the failure shows up as a missing hello, with the server's own message

    @property
    def process(self) -> RemoteProcess:
        return self._process

    def stop(self) -> None:
        """Close the agent's stdin (its cue to clean up and exit) and drop the channel."""
        self._process.close_stdin()
        self._process.kill()

    def _expire(self) -> None:
        self.timed_out = True
        self.stop()

    def _lines(self) -> Iterator[str]:
        """The agent's lines, bounded in length and in total."""
        total = 0
        try:
            for line in self._process.lines(LINE_LIMIT):
                total += len(line) + 1
                if total > OUTPUT_LIMIT:
                    self.stop()
                    raise OutputTooLarge(
                        f"The {self.name} agent on {self.transport.label} sent more than "
                        f"{OUTPUT_LIMIT // (1024 * 1024)} MiB and was stopped."
                    )
                yield line
        except OutputTooLarge as error:
            if error.message.startswith("The server sent"):
                raise OutputTooLarge(
                    f"The {self.name} agent on {self.transport.label} sent a line longer than "
                    f"{LINE_LIMIT // (1024 * 1024)} MiB and was stopped."
                ) from error
            raise
        self._raise_if_timed_out()

    def _raise_if_timed_out(self) -> None:
        if self.timed_out:
            raise CommandTimedOut(
                f"The {self.name} agent on {self.transport.label} did not answer within "
                f"{self.timeout:g} s and was stopped."
            )

    def events(self) -> Generator[AgentEvent, None, None]:
        """Yield progress, samples and logs until the result; raise on error or cancel."""
        collected: list[AgentEvent] = []
        try:
            lines = self._lines()
            self.hello = self._read_hello(lines)
            for line in lines:
                message = _parse(line)
                if message is None:
                    continue
                kind = message.pop("type", "")
                if kind == "result":
                    data = message.get("data")
                    if not isinstance(data, dict):
                        raise AgentFailed(
                            f"The {self.name} agent on {self.transport.label} gave a result "
                            "SambaTune cannot read."
                        )
                    self.result = AgentResult(self.hello, data, _seconds(message.get("seconds")), collected)
                    return
                if kind == "error":
                    raise self._failure(message)
                event = AgentEvent(kind, message)
                collected.append(event)
                yield event
            self.cancel.raise_if_cancelled()
            self._raise_if_disconnected()
            raise AgentFailed(
                f"The {self.name} agent on {self.transport.label} stopped without a result.",
                details=self._stderr(),
            )
        finally:
            if self._watchdog is not None:
                self._watchdog.cancel()
            self._unregister()
            self._process.close_stdin()
            self._process.kill()

    def run(self, on_event: Callable[[AgentEvent], None] | None = None) -> AgentResult:
        for event in self.events():
            if on_event is not None:
                on_event(event)
        assert self.result is not None
        return self.result

    def _read_hello(self, lines: Iterator[str]) -> dict[str, Any]:
        for line in lines:
            message = _parse(line)
            if message is None:
                continue  # a login banner or motd line on stdout
            if message.get("type") == "error":
                raise self._failure(message)
            if message.get("type") != "hello":
                continue
            if message.get("protocol") != PROTOCOL:
                raise AgentFailed(
                    f"The {self.name} agent speaks protocol {message.get('protocol')}, "
                    f"SambaTune speaks {PROTOCOL}."
                )
            message.pop("type")
            return message
        self.cancel.raise_if_cancelled()
        self._raise_if_disconnected()
        stderr = self._stderr()
        code = self._exit_code()
        if code == 127 or "not found" in stderr or "No such file" in stderr:
            raise self._no_python(stderr)
        raise AgentFailed(
            f"The {self.name} agent did not start on {self.transport.label}.",
            details=stderr or f"exit code {code}",
        )

    def _raise_if_disconnected(self) -> None:
        # An agent cut off with its connection is not an agent that failed: callers
        # that must learn what the server has (safe apply) reconnect on this.
        if not self.transport.is_connected():
            raise ConnectionFailed(
                f"The connection to {self.transport.label} dropped while the {self.name} agent ran.",
                command_sent=True,
            )

    def _no_python(self, details: str) -> AgentFailed:
        return AgentFailed(
            f"{self.transport.label} has no {self.argv[0]}: SambaTune needs Python 3.6 or newer "
            "on the server to survey and measure it (nothing else is installed).",
            details=details,
        )

    def _failure(self, message: dict[str, Any]) -> Exception:
        if self.cancel.cancelled:
            return Cancelled()
        code = message.get("code", "error")
        text = self.transport.redact(str(message.get("message", "unknown error")))
        if code == "python-too-old":
            text = (
                f"Python {message.get('python')} on {self.transport.label} is too old: "
                "SambaTune's agents need Python 3.6 or newer."
            )
        error = AgentFailed(text, details=self.transport.redact(str(message.get("details", ""))))
        error.code = f"agent-{code}" if not code.startswith("agent") else code
        return error

    def _stderr(self) -> str:
        try:
            return self.transport.redact(self._process.stderr_text()).strip()
        except Exception:
            return ""

    def _exit_code(self) -> int | None:
        try:
            return self._process.wait(timeout=5)
        except Exception:
            return None


def _parse(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past Python's limit
        return None
    return value if isinstance(value, dict) else None


def _seconds(value: Any) -> float:
    try:
        return max(0.0, float(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0.0


def run_agent(
    transport: Transport,
    name: str,
    params: dict[str, Any] | None = None,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    python: str | None = None,
    timeout: float | None = None,
) -> AgentResult:
    return AgentRun(transport, name, params, sudo=sudo, cancel=cancel, python=python, timeout=timeout).run(
        on_event
    )
