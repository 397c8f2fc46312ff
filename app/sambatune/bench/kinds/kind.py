"""What a kind of benchmark is to the two faces: its name, its words, the form rows it
shows, the command-line arguments it takes, and how either face's input becomes the
benchmark.

A kind lives in one module of this package (``KIND = BenchKind(...)``); the package finds
them. The measuring itself stays in its engine (``bench/disk.py`` and so on), which the
builders import only when a run starts, so that listing the kinds loads no engine.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sambatune.bench.runner import Benchmark, Method
from sambatune.cancellation import CancelToken

#: The rows of the Benchmarks form, each shown by the kinds that name it.
ROWS = (
    "direction",
    "share",
    "directory",
    "server",
    "port",
    "user",
    "password",
    "remember",
    "path",
    "duration",
    "count",
    "size",
    "block",
    "outstanding",
    "connections",
    "security",
    "sizes",
    "counts",
)
#: The rows of a test that reaches a share from this computer.
SHARE_TARGET_ROWS = frozenset({"share", "server", "port", "user", "password", "remember", "path"})
#: The file size that lets a test size its file from a short probe.
AUTO = "auto"
USUAL_METHOD = (5, 1)


@dataclass(frozen=True)
class RunRequest:
    """What the form asked for, checked and parsed: plain values, made on the GUI thread."""

    test: str
    runs: int
    warmup: int
    note: str = ""
    direction: str = "download"
    share: str = ""
    directory: str = ""
    server: str = ""
    port: int = 445
    user: str = ""
    password: str = field(default="", repr=False)
    remember: bool = False
    path: str = ""
    seconds: float = 5.0
    #: None: the test sizes its file from a short probe.
    size: int | None = 256 << 20
    block: int = 4 << 20
    outstanding: int = 4
    #: SMB connections (each a session and smbd process of its own).
    connections: int = 1
    sizes: tuple[int, ...] = ()
    counts: tuple[int, ...] = ()
    sample_interval: float = 0.1
    count: int = 2000
    #: Sessions to compare (plain, signed, encrypted); empty: one session as usual.
    security: tuple[str, ...] = ()

    @property
    def secret_target(self) -> str:
        return share_secret_target(self.user, self.server, self.port, self.share)


def share_secret_target(user: str | None, server: str | None, port: int, share: str | None) -> str:
    """Whom the keyring keeps an SMB password under: one key for the form and the command
    line, so a password either face kept serves the other."""
    return f"{user}@{server}:{port}/{share}"


#: (request, server context) -> the engine's options; on the worker thread (the keyring).
OptionsFromForm = Callable[[RunRequest, Any], Any]
#: (arguments, server context, SMB password) -> the engine's options.
OptionsFromArguments = Callable[[argparse.Namespace, Any, "str | None"], Any]


def _nothing_to_check(request: RunRequest) -> None:
    return None


@dataclass(frozen=True)
class CommandLine:
    """A kind's verb under ``sambatune bench``: its own arguments and how they become the
    engine's options. The CLI adds what every verb of the same reach has: the SSH
    connection for "ssh", the server's session list over SSH for an "smb" kind that
    compares sessions, and the method and JSON options for both."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    options: OptionsFromArguments
    #: "ssh": it runs on the server, reached over SSH; "smb": this computer reaches a
    #: share over SMB itself (``add_share_target_options``), with no SSH and no context.
    over: Literal["ssh", "smb"] = "ssh"
    #: The verb when it is shorter than the kind's name (which then works as well).
    verb: str = ""
    #: Seconds per run for a kind that streams for a time (--duration), else None.
    seconds: float | None = None
    runs: int = 5
    warmup: int = 1
    #: Why the default runs are what they are, said in --help after the number.
    runs_why: str = ""


@dataclass(frozen=True)
class BenchKind:
    #: The name results are stored under and the command line's verb.
    name: str
    #: Where it stands in the form's list of tests.
    order: int
    title: str
    explanation: str
    rows: frozenset[str]
    #: The engine, as ``"module:Class"``: imported only when a run starts.
    engine: str
    options: OptionsFromForm
    #: Raises InvalidInput for a request that cannot run (GUI thread: cheap, no I/O).
    check: Callable[[RunRequest], None] = _nothing_to_check
    #: What each row starts with for this kind (size text, requests in flight, seconds).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    tips: Mapping[str, str] = field(default_factory=dict)
    method: tuple[int, int] = USUAL_METHOD
    #: How a run shows: "runs" (a live curve over the run's seconds when ``timed``, and
    #: the run table), "operations" (counted calls, per operation), "sweep" (a curve over
    #: buffer sizes).
    result_view: Literal["runs", "operations", "sweep"] = "runs"
    timed: bool = False
    #: Runs once per checked kind of session, naming each from the server's session list.
    compares_sessions: bool = False
    #: Its ``sambatune bench`` verb: every kind has one, as the CLI does all the GUI does.
    cli: CommandLine = field(kw_only=True)

    def __post_init__(self) -> None:
        unknown = self.rows - set(ROWS)
        if unknown:
            raise ValueError(f"benchmark kind {self.name}: no form rows {sorted(unknown)}")

    def _engine(self) -> type[Benchmark]:
        module, _, name = self.engine.partition(":")
        engine: type[Benchmark] = getattr(importlib.import_module(module), name)
        return engine

    def build(
        self, transport: Any, method: Method, options: Any, context: Any, cancel: CancelToken, **extra: Any
    ) -> Benchmark:
        """The benchmark for options already made from a form or the command line."""
        return self._engine()(transport, method, options, context=context, cancel=cancel, **extra)

    def from_form(
        self, request: RunRequest, transport: Any, context: Any, cancel: CancelToken, **extra: Any
    ) -> Benchmark:
        """The benchmark the form asked for (worker thread)."""
        method = Method(runs=request.runs, warmup=request.warmup)
        return self.build(transport, method, self.options(request, context), context, cancel, **extra)

    def from_arguments(
        self,
        args: argparse.Namespace,
        transport: Any,
        context: Any,
        cancel: CancelToken,
        password: str | None,
    ) -> Benchmark:
        """The benchmark ``sambatune bench <kind>`` asked for."""
        method = Method(runs=args.runs, warmup=args.warmup)
        return self.build(transport, method, self.cli.options(args, context, password), context, cancel)
