"""Server overview: the survey laid out so an admin reads it at a glance."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.remote.client_audit import ClientAudit
from sambatune.remote.survey import PROBLEM, WARNING, Survey, untrusted_serving
from sambatune.ui.severity import OTHER_SEVERITY_COLOR, SEVERITY_COLORS
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bits, format_bytes

# Qt's own icons: emoji render as empty boxes where the font lacks them.
SEVERITY_ICONS = {
    PROBLEM: QStyle.StandardPixmap.SP_MessageBoxCritical,
    WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}
PROBLEM_ROW = QColor("#fdecea")
WARNING_ROW = QColor("#fff4e5")


def _badge(text: str, good: bool) -> QLabel:
    label = QLabel(text)
    color, background = ("#1e4620", "#d7f0d8") if good else ("#611a15", "#f9d6d4")
    label.setStyleSheet(
        f"color:{color}; background:{background}; border-radius:8px; padding:1px 8px;font-weight:600;"
    )
    label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return label


def _badge_row(text: str, good: bool) -> QWidget:
    """A badge that keeps its own width inside a form row."""
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(_badge(text, good))
    row.addStretch(1)
    return holder


def _value(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(True)
    return label


def _table(headers: list[str]) -> QTableWidget:
    table = read_only_table(headers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
    return table


def _fit_height(table: QTableWidget) -> None:
    height = table.horizontalHeader().height() + 4
    for row in range(table.rowCount()):
        height += table.rowHeight(row)
    table.setFixedHeight(height)


def _set_row(
    table: QTableWidget, row: int, values: list[str], tint: QColor | None = None, tooltip: str = ""
) -> None:
    for column, text in enumerate(values):
        item = QTableWidgetItem(text)
        if tint is not None:
            item.setBackground(QBrush(tint))
        if tooltip:
            item.setToolTip(tooltip)
        table.setItem(row, column, item)


def listening_text(instance: dict[str, Any]) -> str:
    """Where an smbd listens, address and TCP port: ``*:445`` for every address,
    ``127.0.0.5:4455``, ``[::1]:445``. With bind interfaces only, the address is what
    clients must use."""
    shown = []
    for socket_ in sorted(instance.get("listening") or [], key=lambda p: (int(p["port"]), str(p["address"]))):
        address = str(socket_["address"])
        host = "*" if address in ("0.0.0.0", "::") else f"[{address}]" if ":" in address else address
        text = f"{host}:{socket_['port']}"
        if text not in shown:
            shown.append(text)
    return ", ".join(shown)


class OverviewPage(QWidget):
    refresh_requested = Signal()
    #: The admin chose which smbd SambaTune manages: the smb.conf it runs with.
    instance_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("overviewPage")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        outer.addWidget(scroll)
        self.body = QWidget()
        scroll.setWidget(self.body)
        self.layout_ = QVBoxLayout(self.body)
        self.layout_.setContentsMargins(16, 12, 16, 16)
        self.layout_.setSpacing(12)
        self.placeholder = QLabel("Connect to see what this server is.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.layout_.addWidget(self.placeholder)
        # One stretch, last, for good: content goes in above it (a stretch added per survey
        # stayed behind and pushed the next survey's page down).
        self.layout_.addStretch(1)
        self.survey: Survey | None = None
        self._content: list[QWidget] = []

    # ------------------------------------------------------------------------------
    def show_survey(self, survey: Survey) -> None:
        self.survey = survey
        for widget in self._content:
            widget.deleteLater()
        self._content = []
        self.placeholder.hide()
        data = survey.data
        self._add(self._header(survey))
        notes = survey.notes()
        if notes:
            self._add(self._notes(notes))
        grid_widget = QWidget()
        grid = QGridLayout(grid_widget)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(12)
        grid.addWidget(self._samba_card(survey), 0, 0)
        grid.addWidget(self._system_card(survey), 0, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self._add(grid_widget)
        if len(survey.instances) > 1 or survey.ambiguous:
            self._add(self._instances_card(survey))
        self._add(self._network_card(data))
        audit = survey.client_audit
        if audit is not None:
            self._add(self._clients_card(audit))
        self._add(self._shares_card(survey))
        self._add(self._tcp_card(data.get("tcp") or {}))

    def _add(self, widget: QWidget) -> None:
        self.layout_.insertWidget(self.layout_.count() - 1, widget)
        self._content.append(widget)

    def _header(self, survey: Survey) -> QWidget:
        data = survey.data
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        texts = QVBoxLayout()
        title = QLabel(data.get("hostname", "?"))
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        title.setObjectName("overviewTitle")
        system = data.get("os") or {}
        subtitle = QLabel(
            f"{system.get('distribution', '?')} · kernel {system.get('kernel', '?')} · "
            f"{system.get('machine', '')} · reached as {survey.target} · "
            f"surveyed {survey.collected_at.replace('T', ' ').replace('+00:00', ' UTC')}"
        )
        subtitle.setStyleSheet("color: palette(mid);")
        subtitle.setWordWrap(True)
        texts.addWidget(title)
        texts.addWidget(subtitle)
        row.addLayout(texts, 1)
        refresh = QPushButton("Survey again")
        refresh.setObjectName("refreshSurvey")
        refresh.clicked.connect(self.refresh_requested.emit)
        row.addWidget(refresh, 0, Qt.AlignmentFlag.AlignTop)
        return box

    def _notes(self, notes: list[Any]) -> QWidget:
        box = QGroupBox("Needs attention")
        box.setObjectName("notesBox")
        layout = QVBoxLayout(box)
        order = {PROBLEM: 0, WARNING: 1}
        for note in sorted(notes, key=lambda n: order.get(n.severity, 2)):
            color = SEVERITY_COLORS.get(note.severity, OTHER_SEVERITY_COLOR)
            row = QHBoxLayout()
            icon = QLabel()
            size = icon.fontMetrics().height()
            icon.setPixmap(
                self.style()
                .standardIcon(SEVERITY_ICONS.get(note.severity, SEVERITY_ICONS["info"]))
                .pixmap(size, size)
            )
            row.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
            label = QLabel(f"<span style='color:{color}'><b>{note.subject}</b></span>&nbsp; {note.message}")
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            row.addWidget(label, 1)
            layout.addLayout(row)
        return box

    def _samba_card(self, survey: Survey) -> QWidget:
        samba = survey.samba
        box = QGroupBox("Samba")
        form = QFormLayout(box)
        if not samba.get("installed"):
            form.addRow(_badge_row("not installed", False))
            return box
        version = QWidget()
        version_row = QHBoxLayout(version)
        version_row.setContentsMargins(0, 0, 0, 0)
        version_row.addWidget(_value(samba.get("version_text", "?").replace("Version ", "")))
        if survey.ambiguous:
            version_row.addWidget(_badge("choose an smbd below", False))
        else:
            running = bool(samba.get("running"))
            words = (
                "smbd running"
                if running
                else "smbd UNTRUSTED"
                if untrusted_serving(samba)
                else "smbd NOT running"
            )
            version_row.addWidget(_badge(words, running))
        version_row.addStretch(1)
        form.addRow("Version", version)
        if survey.ambiguous:
            form.addRow("smb.conf", _value("not chosen: several smbd run with different files"))
        else:
            form.addRow("smb.conf", _value(f"{samba.get('config_path')}  ({samba.get('config_source')})"))
        testparm = samba.get("testparm") or {}
        if testparm:
            ok = testparm.get("exit_code") == 0
            form.addRow("testparm", _badge_row("accepts the file" if ok else "rejects the file", ok))
        # Facts of the managed instance only: another smbd's port is not this one's.
        serving = survey.managed_instance
        if serving is not None:
            listening = listening_text(serving)
            if listening:
                form.addRow("Listening", _value(listening))
            form.addRow(
                "Processes", _value(f"{serving.get('processes', '?')} (parent pid {serving.get('pid')})")
            )
        others = len(survey.instances) - (serving is not None)
        if others and not survey.ambiguous:
            form.addRow(
                "Other smbd", _value(f"{others} more instance(s) with other config files (listed below)")
            )
        globals_ = samba.get("globals") or {}
        protocol = globals_.get("server max protocol") or "default (SMB3_11)"
        form.addRow("Max protocol", _value(protocol))
        form.addRow("Min protocol", _value(globals_.get("server min protocol") or "default (SMB2_02)"))
        return box

    def _instances_card(self, survey: Survey) -> QWidget:
        """Every smbd on the host, and the choice of the one SambaTune manages."""
        box = QGroupBox("smbd instances on this host")
        box.setObjectName("instancesBox")
        layout = QVBoxLayout(box)
        explain = QLabel(
            "Several smbd run here, each with its own smb.conf, ports and databases. "
            "SambaTune edits, reloads, measures and checks one of them: "
            + ("choose it." if survey.ambiguous else "the one marked “managed”.")
        )
        explain.setWordWrap(True)
        layout.addWidget(explain)
        table = _table(["", "smb.conf", "Listening", "Parent pid", ""])
        table.setObjectName("instanceTable")
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Long paths lose their middle, not the file name; the tooltip has it all.
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setWordWrap(False)
        instances = survey.instances
        table.setRowCount(len(instances))
        for row, instance in enumerate(instances):
            managed = bool(instance.get("managed"))
            dirs = instance.get("dirs") or {}
            tooltip = "\n".join(
                [" ".join(instance.get("argv") or []), *(f"{name}: {value}" for name, value in dirs.items())]
            )
            _set_row(
                table,
                row,
                [
                    "managed" if managed else "",
                    str(instance.get("config") or "?"),
                    listening_text(instance) or "no TCP port",
                    str(instance.get("pid")),
                ],
                None,
                tooltip,
            )
            if not managed and instance.get("config"):
                choose = QPushButton("Manage this one")
                choose.setObjectName(f"manageInstance{row}")
                config = str(instance["config"])
                choose.clicked.connect(lambda _=False, c=config: self.instance_chosen.emit(c))
                table.setCellWidget(row, 4, choose)
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        header = table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        _fit_height(table)
        layout.addWidget(table)
        return box

    def _system_card(self, survey: Survey) -> QWidget:
        data = survey.data
        box = QGroupBox("System")
        form = QFormLayout(box)
        cpu = data.get("cpu") or {}
        memory = data.get("memory") or {}
        load = data.get("load") or {}
        form.addRow("CPU", _value(f"{cpu.get('available')} × {cpu.get('model')}"))
        form.addRow(
            "Memory",
            _value(
                f"{format_bytes(memory.get('total_bytes'))} "
                f"({format_bytes(memory.get('available_bytes'))} available)"
            ),
        )
        if load:
            busy = load.get("1min", 0) > (cpu.get("available") or 1)
            text = f"{load['1min']:.2f} / {load['5min']:.2f} / {load['15min']:.2f} (1/5/15 min)"
            label = _value(text)
            if busy:
                label.setStyleSheet(f"color:{SEVERITY_COLORS[WARNING]}; font-weight:600;")
            form.addRow("Load", label)
        form.addRow("Python", _value(str(survey.agent.get("python") or "—")))
        return box

    def _network_card(self, data: dict[str, Any]) -> QWidget:
        box = QGroupBox("Network interfaces")
        layout = QVBoxLayout(box)
        nics = data.get("nics") or []
        table = _table(["Interface", "State", "Link speed", "MTU", "Addresses", "Driver"])
        table.setObjectName("nicTable")
        table.setRowCount(len(nics))
        for row, nic in enumerate(nics):
            speed = nic.get("speed_mbit")
            speed_text = format_bits(speed * 1e6) if speed else ("—" if nic.get("virtual") else "unknown")
            tint = None
            tooltip = ""
            is_physical = not nic.get("loopback") and not nic.get("virtual")
            if is_physical and nic.get("state") == "up" and speed and speed < 1000:
                tint, tooltip = PROBLEM_ROW, "Slower than Gigabit: check cable, switch port, autonegotiation."
            if is_physical and nic.get("duplex") == "half":
                tint, tooltip = PROBLEM_ROW, "Half duplex: probably a duplex mismatch."
            kind = " (loopback)" if nic.get("loopback") else (" (virtual)" if nic.get("virtual") else "")
            _set_row(
                table,
                row,
                [
                    f"{nic.get('name')}{kind}",
                    nic.get("state", "?"),
                    speed_text
                    + (f", {nic['duplex']} duplex" if nic.get("duplex") in ("full", "half") else ""),
                    str(nic.get("mtu")),
                    ", ".join(nic.get("addresses") or []) or "—",
                    nic.get("driver") or "",
                ],
                tint,
                tooltip,
            )
        _fit_height(table)
        layout.addWidget(table)
        return box

    def _clients_card(self, audit: ClientAudit) -> QWidget:
        box = QGroupBox("Connected clients")
        layout = QVBoxLayout(box)
        multichannel = {True: "on", False: "off", None: "unknown"}[audit.multichannel]
        offered = ", ".join(
            f"{i.name} ({format_bits(i.speed_mbit * 1e6) if i.speed_mbit else 'speed unknown'}"
            f"{', RSS' if i.capability == 'RSS' else ''})"
            for i in audit.interfaces
        )
        summary = _value(
            f"Multichannel {multichannel}; interfaces offered to clients: {offered or 'none'}. "
            f"Server signing: {audit.server_signing or 'unknown'}. From {audit.source or 'smbstatus'}."
        )
        summary.setObjectName("clientSummary")
        layout.addWidget(summary)
        for note in audit.notes:
            layout.addWidget(_value(note))
        if not audit.sessions:
            layout.addWidget(QLabel("No client is connected."))
            return box
        table = _table(["Client", "User", "Dialect", "Signing", "Encryption", "Channels", "Flagged"])
        table.setObjectName("clientTable")
        table.setRowCount(len(audit.sessions))
        for row, session in enumerate(audit.sessions):
            flags = session.flags
            tint = PROBLEM_ROW if session.smb1 else (WARNING_ROW if flags else None)

            def crypto(cipher: str, degree: str) -> str:
                return f"{cipher} ({degree})" if cipher and degree not in ("", "full") else (cipher or "none")

            _set_row(
                table,
                row,
                [
                    f"{session.machine} ({session.address})" if session.address else session.machine,
                    session.user,
                    session.dialect or "unknown",
                    # A partial signing degree is a session whose setup alone was signed.
                    crypto(session.signing, session.signing_degree).replace("(partial)", "(setup only)"),
                    crypto(session.encryption, session.encryption_degree),
                    str(session.channels) if session.channels is not None else "unknown",
                    ", ".join(flags) or "—",
                ],
                tint,
                "; ".join(flags),
            )
        _fit_height(table)
        layout.addWidget(table)
        return box

    def _shares_card(self, survey: Survey) -> QWidget:
        box = QGroupBox("Shares")
        layout = QVBoxLayout(box)
        shares = survey.shares
        if not shares:
            layout.addWidget(QLabel("No shares are defined."))
            return box
        table = _table(["Share", "Path", "Filesystem", "Free space", "Access"])
        table.setObjectName("shareTable")
        # Long paths lose their middle instead of pushing the table sideways.
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setWordWrap(False)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        table.setRowCount(len(shares))
        for row, share in enumerate(shares):
            fs = share.get("filesystem") or {}
            tint = None
            free_text = "—"
            if fs.get("exists"):
                total, free = fs.get("total_bytes") or 0, fs.get("free_bytes") or 0
                share_of = free / total if total else 0
                free_text = f"{format_bytes(free)} free of {format_bytes(total)} ({share_of:.0%})"
                if total and share_of < 0.10:
                    tint = WARNING_ROW
            elif fs:
                tint, free_text = PROBLEM_ROW, "path missing"
            access = ["read-only" if share.get("read_only") else "read/write"]
            if share.get("guest_ok"):
                access.append("guests")
            if share.get("printable"):
                access.append("printer")
            _set_row(
                table,
                row,
                [
                    share.get("name", ""),
                    share.get("path", "") or "—",
                    f"{fs.get('fstype', '')} on {fs.get('mount_point', '')}" if fs.get("fstype") else "—",
                    free_text,
                    ", ".join(access),
                ],
                tint,
            )
        _fit_height(table)
        layout.addWidget(table)
        return box

    def _tcp_card(self, tcp: dict[str, str]) -> QWidget:
        box = QGroupBox("TCP settings")
        form = QFormLayout(box)

        def triple(key: str) -> str:
            parts = tcp.get(key, "").split()
            if len(parts) == 3:
                return " / ".join(format_bytes(int(p)) for p in parts) + "  (min / default / max)"
            return tcp.get(key, "—")

        form.addRow("Receive buffer (tcp_rmem)", _value(triple("net.ipv4.tcp_rmem")))
        form.addRow("Send buffer (tcp_wmem)", _value(triple("net.ipv4.tcp_wmem")))
        for key, label in (
            ("net.core.rmem_max", "Largest receive buffer an app may set"),
            ("net.core.wmem_max", "Largest send buffer an app may set"),
        ):
            if tcp.get(key, "").isdigit():
                form.addRow(label, _value(format_bytes(int(tcp[key]))))
        scaling = tcp.get("net.ipv4.tcp_window_scaling")
        if scaling is not None:
            form.addRow("Window scaling", _badge_row("on" if scaling == "1" else "OFF", scaling == "1"))
        if tcp.get("net.ipv4.tcp_congestion_control"):
            form.addRow("Congestion control", _value(tcp["net.ipv4.tcp_congestion_control"]))
        return box
