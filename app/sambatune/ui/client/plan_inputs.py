"""What a client plan starts from: the system to plan for, bandwidth, RTT and MTU.

Bad input is marked under its own field; nothing here measures or reads anything (the
page does that in a task once the request is complete).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from sambatune.client.measure import DEFAULT_RTT_PORTS
from sambatune.client.planner import PlanRequest
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_bandwidth, parse_duration
from sambatune.ui.client.bdp_calculator import CheckedField
from sambatune.ui.file_places import remember, suggested

#: The profiles offered besides this computer: one per Windows generation that plans
#: differently, the newest first, then the other families.
PROFILE_CHOICES: tuple[tuple[str, str], ...] = (
    ("windows-11", "Windows 11"),
    ("windows-10", "Windows 10"),
    ("windows-server-2022", "Windows Server 2022"),
    ("windows-7", "Windows 7"),
    ("windows-xp", "Windows XP"),
    ("windows-2003", "Windows Server 2003"),
    ("windows-2000", "Windows 2000"),
    ("windows-98", "Windows 98"),
    ("linux", "Linux"),
    ("macos", "macOS"),
)


@dataclass(frozen=True)
class PlanTarget:
    """The server the plan is for: where to measure the RTT and path MTU to."""

    host: str
    label: str
    ports: tuple[int, ...] = DEFAULT_RTT_PORTS
    #: What the server's survey says its smbd offers (None: not known), for the SMB
    #: client items: multichannel on cifs mounts, signing in nsmb.conf.
    multichannel: bool | None = None
    signing: str | None = None


def bandwidth_input_text(bits_per_second: float) -> str:
    """A bandwidth as text the bandwidth field parses back to (nearly) the same number."""
    if bits_per_second >= 1e9 and (bits_per_second / 1e9).is_integer():
        return f"{bits_per_second / 1e9:g}gbit"
    return f"{bits_per_second / 1e6:.4g}mbit"


def rtt_input_text(seconds: float) -> str:
    return f"{seconds * 1000:.4g}ms"


def _caption(text: str) -> QLabel:
    """A field's name, right-aligned against the field and level with its first line."""
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
    label.setContentsMargins(0, 5, 0, 0)
    return label


class PlanInputs(QWidget):
    profile_changed = Signal()
    plan_requested = Signal()
    bandwidth_file_chosen = Signal(object)  # a Path

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target: PlanTarget | None = None
        self._benchmark: tuple[str, tuple[float, str]] | None = None
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(4)

        # Row 0: what to plan for, and whether to probe.  Row 1: the numbers and the
        # button.  Row 2: what empty fields mean, then what was measured.
        grid.addWidget(_caption("Plan for:"), 0, 0)
        self.profile = QComboBox()
        self.profile.setObjectName("profileChooser")
        self.profile.addItem("This computer", None)
        self.profile.insertSeparator(1)
        for key, name in PROFILE_CHOICES:
            self.profile.addItem(f"{name} (another system)", key)
        self.profile.setMinimumContentsLength(26)
        self.profile.currentIndexChanged.connect(lambda _index: self._profile_chosen())
        grid.addWidget(self.profile, 0, 1, 1, 3)
        self.probe = QCheckBox("Probe the path MTU")
        self.probe.setObjectName("probeMtu")
        self.probe.setChecked(True)
        self.probe.setToolTip(
            "Send don't-fragment packets to the server to find the largest "
            "packet that gets there whole (and whether big ones vanish)."
        )
        grid.addWidget(self.probe, 0, 4, 1, 4)

        grid.addWidget(_caption("Bandwidth:"), 1, 0)
        self.bandwidth = CheckedField("planBandwidth", "", "e.g. 1gbit")
        grid.addWidget(self.bandwidth, 1, 1)
        self.bandwidth_file_button = QPushButton("From iperf3 result…")
        self.bandwidth_file_button.setObjectName("bandwidthFromFile")
        self.bandwidth_file_button.setToolTip(
            "Take the bandwidth from a network benchmark: iperf3 -J output or a SambaTune "
            "network result (JSON)."
        )
        self.bandwidth_file_button.clicked.connect(self._choose_bandwidth_file)
        grid.addWidget(self.bandwidth_file_button, 1, 2, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(_caption("RTT:"), 1, 3)
        self.rtt = CheckedField("planRtt", "", "e.g. 20ms")
        grid.addWidget(self.rtt, 1, 4)
        grid.addWidget(_caption("MTU:"), 1, 5)
        self.mtu = CheckedField("planMtu", "", "auto")
        self.mtu.edit.setToolTip(
            "Leave empty to let the path-MTU probe decide; enter e.g. 9000 "
            "to plan jumbo frames (every hop must carry them)."
        )
        self.mtu.setMaximumWidth(110)
        grid.addWidget(self.mtu, 1, 6)
        self.plan_button = QPushButton("Make plan")
        self.plan_button.setObjectName("makePlanButton")
        self.plan_button.setDefault(True)
        self.plan_button.clicked.connect(self.plan_requested.emit)
        grid.addWidget(self.plan_button, 1, 7, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(4, 3)
        grid.setColumnStretch(6, 1)

        self.hint = QLabel()
        self.hint.setObjectName("inputHint")
        self.hint.setStyleSheet("color: palette(mid);")
        # Wrapped: one long line set the whole window's narrowest width (it grew past 1180 px).
        self.hint.setWordWrap(True)
        grid.addWidget(self.hint, 2, 1, 1, 7)
        self.measured = QLabel()
        self.measured.setObjectName("measuredNote")
        self.measured.setWordWrap(True)
        self.measured.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.measured.hide()
        grid.addWidget(self.measured, 3, 1, 1, 7)
        for field in (self.bandwidth, self.rtt, self.mtu):
            field.edit.returnPressed.connect(self.plan_requested.emit)
        self.set_target(None)

    # ------------------------------------------------------------------------------
    def profile_key(self) -> str | None:
        data = self.profile.currentData()
        return str(data) if data else None

    def set_this_computer(self, os_name: str) -> None:
        # "Debian GNU/Linux 12 (bookworm)" -> "Debian GNU/Linux 12": the combo stays narrow.
        short = re.sub(r" \(.*\)$", "", os_name)
        self.profile.setItemText(0, f"This computer ({short})")

    def _profile_chosen(self) -> None:
        self.set_target(self.target)
        self.profile_changed.emit()

    def set_target(self, target: PlanTarget | None) -> None:
        self.target = target
        if target is None:
            self.rtt.edit.setPlaceholderText("e.g. 20ms")
            self.probe.setChecked(False)
            self.probe.setEnabled(False)
            self.probe.setText("Probe the path MTU (needs a remote server)")
            self.hint.setText(
                "The Samba server here is this computer: enter the RTT of the link "
                "to plan for. Empty bandwidth: the interface's link speed."
            )
            return
        self.rtt.edit.setPlaceholderText("measured")
        self.hint.setText(
            f"Empty RTT: measured to {target.label} ({target.host}) with TCP "
            "connects. Empty bandwidth: the link speed. Empty MTU: the probe "
            "decides."
        )
        if self.profile.currentData():
            # The probe runs from this computer: it says nothing about another machine's path.
            self.probe.setChecked(False)
            self.probe.setEnabled(False)
            self.probe.setText("Probe the path MTU (from this computer only)")
            return
        if not self.probe.isEnabled():
            self.probe.setChecked(True)
        self.probe.setEnabled(True)
        self.probe.setText(f"Probe the path MTU to {target.label}")

    def set_measured(self, text: str) -> None:
        self.measured.setText(text)
        self.measured.setVisible(bool(text))

    def set_busy(self, busy: bool) -> None:
        for widget in (self.plan_button, self.profile, self.bandwidth_file_button):
            widget.setEnabled(not busy)

    def set_benchmark(self, bits_per_second: float, where: str) -> None:
        """Fill the bandwidth from a benchmark; the plan then names the file as its source."""
        text = bandwidth_input_text(bits_per_second)
        self._benchmark = (text, (bits_per_second, where))
        self.bandwidth.edit.setText(text)
        self.bandwidth.clear_error()
        self.bandwidth.edit.setToolTip(f"From the benchmark: {where}")

    def _choose_bandwidth_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Bandwidth from a benchmark result", suggested(), "JSON results (*.json);;All files (*)"
        )
        if path:
            remember(path)
            self.bandwidth_file_chosen.emit(Path(path))

    # ------------------------------------------------------------------------------
    def request(self) -> PlanRequest | None:
        """The plan request from the fields, or None after marking what is wrong inline."""
        target = self.target
        ok = True
        bandwidth = rtt = None
        benchmark = None
        text = self.bandwidth.text().strip()
        if self._benchmark is not None and text == self._benchmark[0]:
            benchmark = self._benchmark[1]
            self.bandwidth.clear_error()
        elif text:
            try:
                bandwidth = parse_bandwidth(text)
                self.bandwidth.clear_error()
            except InvalidInput as error:
                self.bandwidth.show_error(error.message)
                ok = False
        else:
            self.bandwidth.clear_error()
        text = self.rtt.text().strip()
        if text:
            try:
                rtt = parse_duration(text)
                self.rtt.clear_error()
            except InvalidInput as error:
                self.rtt.show_error(error.message)
                ok = False
        elif target is None:
            self.rtt.show_error("Enter the round-trip time: there is no remote server to measure it to.")
            ok = False
        else:
            self.rtt.clear_error()
        mtu = None
        text = self.mtu.text().strip()
        if text:
            if text.isdigit() and 576 <= int(text) <= 65535:
                mtu = int(text)
                self.mtu.clear_error()
            else:
                self.mtu.show_error("An MTU is a whole number of bytes from 576 to 65535.")
                ok = False
        else:
            self.mtu.clear_error()
        if not ok:
            return None
        return PlanRequest(
            bandwidth_bps=bandwidth,
            rtt_seconds=rtt,
            server=target.host if target else None,
            rtt_ports=target.ports if target else DEFAULT_RTT_PORTS,
            benchmark_bandwidth=benchmark,
            mtu=mtu,
            probe_mtu=self.probe.isChecked() and target is not None,
            server_multichannel=target.multichannel if target else None,
            server_signing=target.signing if target else None,
        )
