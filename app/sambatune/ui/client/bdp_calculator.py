"""The bandwidth-delay calculator: bandwidth and RTT in, window and scale factor out, live.

Every keystroke recomputes (the arithmetic is a few multiplications, nothing waits);
a field that does not parse says why right under itself, in red, and the results
that depend on it are blanked rather than left showing stale numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from sambatune.client.window import (
    MAX_SCALED_WINDOW,
    MAX_UNSCALED_WINDOW,
    WindowSizing,
    format_rtt,
    size_window,
    throughput_bps,
)
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_bandwidth, parse_duration, parse_size
from sambatune.units import format_bits, format_bytes

ERROR_STYLE = "color:#b3261e;"
BAD_FIELD_STYLE = "QLineEdit { border: 1px solid #b3261e; border-radius: 3px; padding: 2px; }"


class CheckedField(QWidget):
    """A line edit with its error message right below it (hidden while the text is fine)."""

    def __init__(self, name: str, text: str, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.edit = QLineEdit(text)
        self.edit.setObjectName(f"{name}Input")
        self.edit.setPlaceholderText(placeholder)
        self.edit.setClearButtonEnabled(True)
        layout.addWidget(self.edit)
        self.error = QLabel()
        self.error.setObjectName(f"{name}Error")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)

    def text(self) -> str:
        return self.edit.text()

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()
        self.edit.setStyleSheet(BAD_FIELD_STYLE)

    def clear_error(self) -> None:
        self.error.hide()
        self.error.clear()
        self.edit.setStyleSheet("")


def _result_label(name: str) -> QLabel:
    label = QLabel("—")
    label.setObjectName(name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(True)
    return label


class BdpCalculator(QWidget):
    """Bandwidth x RTT -> the window a connection needs, its scale factor, and what a given
    window allows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bdpCalculator")
        self.sizing: WindowSizing | None = None
        outer = QHBoxLayout(self)
        outer.setContentsMargins(12, 12, 12, 12)
        outer.setSpacing(16)

        inputs = QGroupBox("Your link")
        form = QFormLayout(inputs)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.bandwidth = CheckedField("bandwidth", "1gbit", "e.g. 1gbit, 940Mbit/s, 125MB/s")
        self.rtt = CheckedField("rtt", "10ms", "e.g. 20ms, 0.5ms, 250us")
        self.current = CheckedField("current", "64KiB", "optional, e.g. 64KiB, 65535, 4MiB")
        form.addRow("Bandwidth:", self.bandwidth)
        form.addRow("Round-trip time:", self.rtt)
        form.addRow("A window to check:", self.current)
        hint = QLabel(
            "Bits unless the unit says bytes with a capital B (MB/s). "
            "The window to check is optional: try the 64 KiB most old systems stop "
            "at, or your current setting."
        )
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(mid);")
        form.addRow(hint)
        inputs.setMinimumWidth(280)
        inputs.setMaximumWidth(340)
        outer.addWidget(inputs, 2, Qt.AlignmentFlag.AlignTop)

        results = QGroupBox("What one TCP connection needs")
        grid = QGridLayout(results)
        grid.setColumnStretch(1, 1)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(8)
        self.bdp_value = _result_label("bdpValue")
        self.window_value = _result_label("windowValue")
        self.scale_value = _result_label("scaleValue")
        self.unscaled_value = _result_label("unscaledValue")
        self.current_value = _result_label("currentValue")
        rows = [
            ("Bandwidth-delay product", self.bdp_value),
            ("Receive window needed", self.window_value),
            ("Scale factor (RFC 7323)", self.scale_value),
            ("Without scaling", self.unscaled_value),
            ("The window to check", self.current_value),
        ]
        for row, (title, value) in enumerate(rows):
            name = QLabel(title + ":")
            name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            name.setStyleSheet("font-weight: 600;")
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
        self.fill = QProgressBar()
        self.fill.setObjectName("windowFill")
        self.fill.setRange(0, 1000)
        self.fill.setTextVisible(False)
        self.fill.setMaximumHeight(10)
        self.fill.setToolTip("How much of the link the window to check can fill")
        grid.addWidget(self.fill, len(rows), 1)
        self.warning = QLabel()
        self.warning.setObjectName("capWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color:#8a5300;")
        grid.addWidget(self.warning, len(rows) + 1, 0, 1, 2)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setStyleSheet("color: palette(midlight);")
        grid.addWidget(line, len(rows) + 2, 0, 1, 2)
        method = QLabel(
            "Window = bandwidth × RTT ÷ 8 (bytes). TCP's window field holds 65,535 bytes; "
            "scale factor n multiplies it by 2ⁿ, agreed in the handshake, at most 14 "
            f"(65,535 × 2¹⁴ = {MAX_SCALED_WINDOW:,} bytes, just under 1 GiB). "
            "One connection moves at most window ÷ RTT."
        )
        method.setWordWrap(True)
        method.setStyleSheet("color: palette(mid);")
        grid.addWidget(method, len(rows) + 3, 0, 1, 2)
        outer.addWidget(results, 3, Qt.AlignmentFlag.AlignTop)

        for field in (self.bandwidth, self.rtt, self.current):
            field.edit.textChanged.connect(self.recalculate)
        self.recalculate()

    def set_inputs(self, bandwidth: str, rtt: str) -> None:
        """Take the numbers a plan was made with (the results follow at once)."""
        self.bandwidth.edit.setText(bandwidth)
        self.rtt.edit.setText(rtt)

    def recalculate(self) -> None:
        bandwidth = self._parse(self.bandwidth, parse_bandwidth)
        rtt = self._parse(self.rtt, parse_duration)
        current = None
        if self.current.text().strip():
            current = self._parse(self.current, parse_size)
        else:
            self.current.clear_error()
        if bandwidth is None or rtt is None:
            self.sizing = None
            for label in (self.bdp_value, self.window_value, self.scale_value, self.unscaled_value):
                label.setText("—")
            self.warning.clear()
            self._show_current(int(current) if current else None, rtt, None)
            return
        sizing = size_window(bandwidth, rtt, int(current) if current else None)
        self.sizing = sizing
        self.bdp_value.setText(f"{sizing.bdp_bytes:,.0f} bytes ({format_bytes(sizing.bdp_bytes)}) in flight")
        self.window_value.setText(
            f"<b>{sizing.required_window:,} bytes</b>"
            + (" (the most TCP can advertise)" if sizing.capped else "")
        )
        if sizing.scale_shift == 0:
            self.scale_value.setText(f"<b>0</b>: no scaling needed (fits in {MAX_UNSCALED_WINDOW:,} bytes)")
        else:
            self.scale_value.setText(
                f"<b>{sizing.scale_shift}</b>: windows up to "
                f"{sizing.largest_window_at_shift:,} bytes "
                f"(65,535 × 2{_superscript(sizing.scale_shift)})"
            )
        self.unscaled_value.setText(
            f"65,535 bytes: at most {format_bits(sizing.unscaled_throughput_bps)} at this RTT"
            + (
                f", {_percent(sizing.unscaled_throughput_bps, bandwidth)} of the link"
                if sizing.unscaled_throughput_bps < bandwidth
                else ": enough for this link"
            )
        )
        self.warning.setText(
            "The bandwidth-delay product is larger than any TCP window (1 GiB bound): one "
            "connection cannot fill this link; several (SMB multichannel) can."
            if sizing.capped
            else ""
        )
        self._show_current(sizing.current_window, rtt, bandwidth)

    def _show_current(self, window: int | None, rtt: float | None, bandwidth: float | None) -> None:
        if window is None or rtt is None:
            self.current_value.setText("—")
            self.fill.setValue(0)
            self.fill.setEnabled(False)
            return
        allowed = throughput_bps(window, rtt)
        text = f"{window:,} bytes allow at most {format_bits(allowed)} at {format_rtt(rtt)}"
        if bandwidth is not None:
            text += (
                f", {_percent(allowed, bandwidth)} of the link"
                if allowed < bandwidth
                else ": enough to fill the link"
            )
            self.fill.setEnabled(True)
            self.fill.setValue(min(1000, round(1000 * allowed / bandwidth)))
        else:
            self.fill.setEnabled(False)
            self.fill.setValue(0)
        self.current_value.setText(text)

    @staticmethod
    def _parse(field: CheckedField, parse: Callable[[str], float]) -> float | None:
        try:
            value = parse(field.text())
        except InvalidInput as error:
            field.show_error(error.message + (f" {error.details}" if error.details else ""))
            return None
        field.clear_error()
        return float(value)


def _superscript(number: int) -> str:
    return str(number).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _percent(part: float, whole: float) -> str:
    share = 100 * part / whole
    return f"{share:.0f}%" if share >= 10 else f"{share:.1f}%"
