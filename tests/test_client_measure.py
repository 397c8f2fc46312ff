"""RTT from timed TCP connects on loopback, and bandwidth read from benchmark results."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from sambatune.cancellation import CancelToken
from sambatune.client.measure import bandwidth_from_file, bandwidth_from_result, measure_rtt
from sambatune.errors import Cancelled, ConnectionFailed, InvalidInput


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_rtt_from_a_listening_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        port = server.getsockname()[1]
        rtt = measure_rtt("127.0.0.1", [free_port(), port], samples=4)
    assert rtt.port == port and rtt.answer == "connected"
    assert len(rtt.samples) == 4 and 0 < rtt.minimum <= rtt.median <= rtt.maximum < 0.5
    assert rtt.to_json()["median_seconds"] == rtt.median


def test_a_refused_port_still_gives_a_round_trip() -> None:
    rtt = measure_rtt("127.0.0.1", [free_port()], samples=2)
    assert rtt.answer == "refused" and len(rtt.samples) == 2


def test_unreachable_and_cancelled() -> None:
    with pytest.raises(ConnectionFailed):
        measure_rtt("no-such-host.invalid", [445])
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        measure_rtt("127.0.0.1", [free_port()], cancel=token)
    with pytest.raises(InvalidInput):
        measure_rtt("127.0.0.1", [445], samples=0)


def test_bandwidth_from_benchmark_results() -> None:
    iperf3 = {"end": {"sum_sent": {"bits_per_second": 9.5e8}, "sum_received": {"bits_per_second": 9.4e8}}}
    assert bandwidth_from_result(iperf3) == (9.4e8, "iperf3 end.sum_received.bits_per_second")
    assert bandwidth_from_result({"result": {"mean_bits_per_second": 2e9}})[0] == 2e9
    assert bandwidth_from_result({"summary": {"mean_bytes_per_second": 1.25e8}})[0] == 1e9
    with pytest.raises(InvalidInput):
        bandwidth_from_result({"end": {}})
    with pytest.raises(InvalidInput):
        bandwidth_from_result([1, 2])


def test_bandwidth_from_a_saved_result_names_the_file(tmp_path: Path) -> None:
    saved = tmp_path / "iperf3.json"
    saved.write_text('{"end": {"sum_received": {"bits_per_second": 9.4e8}}}', encoding="utf-8")
    assert bandwidth_from_file(saved) == (9.4e8, "iperf3 end.sum_received.bits_per_second in iperf3.json")
    (tmp_path / "cut.json").write_text('{"end": ', encoding="utf-8")
    for unreadable in (tmp_path / "cut.json", tmp_path / "missing.json"):
        with pytest.raises(InvalidInput, match="Cannot read"):
            bandwidth_from_file(unreadable)
