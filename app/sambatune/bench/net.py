"""The network test: TCP throughput between this computer and the server.

The net agent listens on a fresh port for every run; this computer connects straight
to it (never through the SSH channel), presents the run's one-time token, and the
stream runs in the chosen direction. The receiver's count is the run's figure: this
computer's for a download, the agent's for an upload.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from sambatune.bench import progress
from sambatune.bench.events import BenchEvent, Progress
from sambatune.bench.runner import WHOLE, Benchmark, Phase, Recorder
from sambatune.bench.tcp_stream import (
    DIRECT,
    DOWNLOAD,
    SSH_FORWARD,
    UPLOAD,
    StreamSocket,
    StreamSpec,
    StreamThread,
    connect_direct,
    connect_forwarded,
    handshake,
)
from sambatune.errors import AgentFailed, InvalidInput
from sambatune.remote.agents import AgentRun

DIRECTIONS = (DOWNLOAD, UPLOAD)
SERVER = "server"
BOTH = "both"
SERIES_LABELS = {
    DOWNLOAD: "Download (server to this computer)",
    UPLOAD: "Upload (this computer to server)",
}
THROUGH_SSH_NOTE = (
    "Measured through the SSH connection (an SSH port forward), because the direct "
    "connection was not possible: this is SSH's throughput (encryption, one shared "
    "connection), not the network's."
)


@dataclass(frozen=True)
class NetOptions:
    direction: str = DOWNLOAD
    seconds: float = 5.0
    #: Move exactly this many bytes per run instead of streaming for ``seconds``.
    size: int | None = None
    sndbuf: int | None = None
    rcvbuf: int | None = None
    nodelay: bool = False
    #: "server": buffer sizes on the agent's socket only, as smb.conf's socket options
    #: would set them on smbd's; "both": on this computer's socket too.
    buffers_on: str = SERVER
    through_ssh: bool = False
    connect_timeout: float = 5.0
    #: Where this computer connects (default: the address the SSH connection reached).
    data_address: str | None = None
    sample_interval: float = 0.5

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise InvalidInput(f"The direction must be download or upload, not '{self.direction}'.")
        if self.buffers_on not in (SERVER, BOTH):
            raise InvalidInput(f"Buffers go on 'server' or 'both', not '{self.buffers_on}'.")
        if self.seconds <= 0:
            raise InvalidInput(f"A run must last more than 0 seconds, not {self.seconds:g}.")
        if self.size is not None and self.size <= 0:
            raise InvalidInput(f"The size must be more than 0 bytes, not {self.size}.")
        for name in ("sndbuf", "rcvbuf"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise InvalidInput(f"{name} must be a positive number of bytes, not {value}.")

    def spec(self, sndbuf: int | None = None, rcvbuf: int | None = None) -> StreamSpec:
        return StreamSpec(
            direction=self.direction,
            seconds=self.seconds,
            bytes=self.size,
            sndbuf=sndbuf,
            rcvbuf=rcvbuf,
            nodelay=self.nodelay,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PlannedRun:
    series: str
    attempt: int
    spec: StreamSpec


def expected(run: PlannedRun) -> progress.PlannedRun:
    """What the progress plan expects of a stream: its bytes, else its seconds."""
    spec = run.spec
    if spec.bytes:
        return progress.PlannedRun(run.series, run.attempt, bytes=spec.bytes)
    return progress.PlannedRun(run.series, run.attempt, seconds=spec.seconds)


class NetStreams:
    """Runs a plan of streams against one net agent; shared by the net and sockbuf tests."""

    def __init__(self, bench: Benchmark, options: NetOptions) -> None:
        self.bench = bench
        self.options = options
        self.path = SSH_FORWARD if options.through_ssh else DIRECT

    def run(self, recorder: Recorder, plan: list[PlannedRun], phase: Phase = WHOLE) -> Iterator[BenchEvent]:
        bench = self.bench
        tokens = [secrets.token_hex(16) for _ in plan]
        params = {
            "runs": [p.spec.to_agent() for p in plan],
            "tokens": tokens,
            "sample_interval": self.options.sample_interval,
        }
        if self.path == SSH_FORWARD:
            recorder.extra["path"] = SSH_FORWARD
            yield recorder.note(THROUGH_SSH_NOTE)
        else:
            recorder.extra.setdefault("path", DIRECT)
        agent = AgentRun(bench.transport, "net", params, cancel=bench.cancel)
        lines = agent.events()
        stream: StreamThread | None = None
        ports: dict[int, int] = {}
        unregister = bench.cancel.on_cancel(lambda: stream.abort() if stream else None)
        try:
            for event in lines:
                data = event.data
                index = int(data.get("run", 0))
                planned = plan[index - 1] if 0 < index <= len(plan) else None
                if event.type == "listening" and planned is not None:
                    ports[index] = int(data["port"])
                    yield recorder.started(planned.series, planned.attempt)
                    sock = self._connect(str(data["address"]), int(data["port"]), planned.spec)
                    try:
                        handshake(sock, tokens[index - 1])
                    except BaseException:
                        sock.close()
                        raise
                    stream = StreamThread(sock, planned.spec)
                    stream.start()
                elif event.type == "sample" and planned is not None:
                    yield recorder.sample(
                        planned.series,
                        planned.attempt,
                        data.get("t", 0.0),
                        data.get("bytes", 0),
                        data.get("bytes_per_s", 0.0),
                    )
                elif event.type == "run" and planned is not None:
                    assert stream is not None
                    stream.join()
                    yield self._record(recorder, planned, {**data, "port": ports.get(index)}, stream)
                    stream = None
                elif event.type == "progress":
                    yield Progress(phase.scale(data.get("fraction")), str(data.get("message", "")))
        finally:
            unregister()
            lines.close()
            if stream is not None:
                stream.abort()
        recorder.agents.append(agent.hello)

    def _connect(self, agent_address: str, port: int, spec: StreamSpec) -> StreamSocket:
        if self.path == SSH_FORWARD:
            return connect_forwarded(self.bench.transport, agent_address, port)
        host = self.options.data_address or self.bench.context.data_address
        return connect_direct(
            host, port, spec, buffers=self.options.buffers_on == BOTH, timeout=self.options.connect_timeout
        )

    def _record(
        self, recorder: Recorder, planned: PlannedRun, server: dict[str, Any], stream: StreamThread
    ) -> BenchEvent:
        outcome = stream.outcome
        if outcome.error is not None:
            self.bench.cancel.raise_if_cancelled()
            raise AgentFailed(
                "This computer's end of the network test failed.", details=str(outcome.error)
            ) from outcome.error
        spec = planned.spec
        details = {
            "path": self.path,
            "direction": spec.direction,
            "requested": {
                "sndbuf": spec.sndbuf,
                "rcvbuf": spec.rcvbuf,
                "nodelay": spec.nodelay,
                "buffers_on": self.options.buffers_on,
            },
            "server": {
                "port": server.get("port"),
                "role": server.get("role"),
                "bytes": server.get("bytes"),
                "seconds": server.get("seconds"),
                "sndbuf": server.get("sndbuf"),
                "rcvbuf": server.get("rcvbuf"),
                "tcp_info": server.get("tcp_info"),
            },
            "client": {
                "bytes": outcome.bytes,
                "seconds": outcome.seconds,
                **(outcome.buffers or {}),
                "tcp_info": outcome.tcp_info,
            },
        }
        if spec.direction == DOWNLOAD:
            moved, seconds = outcome.bytes, outcome.seconds
        else:
            moved, seconds = int(server.get("bytes", 0)), float(server.get("seconds", 0.0))
        return recorder.record(planned.series, planned.attempt, seconds=seconds, bytes=moved, details=details)


class NetBenchmark(Benchmark[NetOptions]):
    """TCP throughput in one direction, warm-up runs first, then the counted runs."""

    test = "net"

    def default_options(self) -> NetOptions:
        return NetOptions()

    def primary_series(self, recorder: Recorder) -> str:
        return self.options.direction

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        direction = self.options.direction
        recorder.declare(direction, SERIES_LABELS[direction])
        spec = self.options.spec(self.options.sndbuf, self.options.rcvbuf)
        plan = [PlannedRun(direction, attempt, spec) for attempt in range(1, self.method.attempts + 1)]
        self.plan.add(expected(run) for run in plan)
        yield from NetStreams(self, self.options).run(recorder, plan)
