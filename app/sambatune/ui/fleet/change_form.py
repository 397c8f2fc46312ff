"""The change a fleet rollout (or an Ansible export) carries, and how it is to go.

Edits are typed one per line as ``[section] name = value`` (``unset [section] name``
takes a parameter out), the words ``sambatune fleet apply --set/--unset`` take; each is
made by the lossless engine in every host's own smb.conf. The options are the CLI's:
canary, wave size, permission to restart, how the canary is measured.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from sambatune.errors import InvalidInput
from sambatune.fleet.change import Edit, parse_edit
from sambatune.fleet.rollout import MeasureLevel, RolloutOptions

UNSET = "unset "
FIRST_CHANGING = "the first host the change alters"

MEASURES = (
    (MeasureLevel.QUICK, "quick (4 MiB, 1 + 5 runs)"),
    (MeasureLevel.FULL, "full (64 MiB, 1 + 5 runs)"),
    (MeasureLevel.NONE, "not measured"),
)

RESTART_WARNING = (
    "A restart of smbd ends every client's connection to that server: open files are "
    "closed and unsaved work in them can be lost. The plan names who is connected now."
)


def parse_edits(text: str) -> list[Edit]:
    """Every non-empty line of ``text`` as an edit (``#`` starts a comment line)."""
    edits = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.lower().startswith(UNSET):
            edits.append(parse_edit(stripped[len(UNSET) :], unset=True))
        else:
            edits.append(parse_edit(stripped))
    if not edits:
        raise InvalidInput('Type the change first, one line each: "[global] log level = 1".')
    return edits


class ChangeForm(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        left = QVBoxLayout()
        left.addWidget(QLabel("Change, one line each (unset [section] name takes one out):"))
        self.edits_text = QPlainTextEdit()
        self.edits_text.setObjectName("fleetEdits")
        self.edits_text.setPlaceholderText("[global] log level = 1\nunset [global] socket options")
        self.edits_text.setTabChangesFocus(True)
        self.edits_text.setMaximumHeight(96)
        self.edits_text.textChanged.connect(self._changed)
        left.addWidget(self.edits_text)
        layout.addLayout(left, 3)

        form = QFormLayout()
        self.canary = QComboBox()
        self.canary.setObjectName("fleetCanary")
        self.canary.setToolTip("Changed (and measured) first; the others follow only if it is fine")
        self.canary.currentIndexChanged.connect(self._changed)
        form.addRow("Canary:", self.canary)
        self.wave = QSpinBox()
        self.wave.setObjectName("fleetWave")
        self.wave.setRange(1, 500)
        self.wave.setValue(2)
        self.wave.setSuffix(" hosts at once")
        self.wave.valueChanged.connect(self._changed)
        form.addRow("Then waves of:", self.wave)
        measure_row = QHBoxLayout()
        self.measure = QComboBox()
        self.measure.setObjectName("fleetMeasure")
        for level, label in MEASURES:
            self.measure.addItem(label, level)
        self.measure.currentIndexChanged.connect(self._changed)
        measure_row.addWidget(self.measure)
        self.share = QLineEdit()
        self.share.setObjectName("fleetMeasureShare")
        self.share.setPlaceholderText("share")
        self.share.setToolTip("The share the canary is measured through; empty: its samba_measure_share")
        self.share.textChanged.connect(self._changed)
        measure_row.addWidget(self.share, 1)
        form.addRow("Measure canary:", measure_row)
        self.allow_restart = QCheckBox("Allow restarting smbd where the change needs it")
        self.allow_restart.setObjectName("fleetAllowRestart")
        self.allow_restart.toggled.connect(self._changed)
        form.addRow(self.allow_restart)
        self.restart_warning = QLabel(RESTART_WARNING)
        self.restart_warning.setObjectName("fleetRestartWarning")
        self.restart_warning.setWordWrap(True)
        self.restart_warning.setStyleSheet("color:#8a5a00;")
        self.restart_warning.setVisible(False)
        self.allow_restart.toggled.connect(self.restart_warning.setVisible)
        form.addRow(self.restart_warning)
        self.skip_unreachable = QCheckBox("Leave out hosts that cannot be reached (as Ansible does)")
        self.skip_unreachable.setObjectName("fleetSkipUnreachable")
        self.skip_unreachable.setToolTip(
            "Without this, one host that cannot be reached when planning refuses the whole rollout."
        )
        self.skip_unreachable.toggled.connect(self._changed)
        form.addRow(self.skip_unreachable)
        layout.addLayout(form, 2)

    def _changed(self, *_args: object) -> None:
        # Each field's signal carries its own value; the form only says "something changed".
        self.changed.emit()

    def set_hosts(self, names: list[str]) -> None:
        current = self.canary.currentData()
        self.canary.blockSignals(True)
        self.canary.clear()
        self.canary.addItem(FIRST_CHANGING, None)
        for name in names:
            self.canary.addItem(name, name)
        index = self.canary.findData(current)
        self.canary.setCurrentIndex(max(0, index))
        self.canary.blockSignals(False)

    def edits(self) -> list[Edit]:
        return parse_edits(self.edits_text.toPlainText())

    def options(self) -> RolloutOptions:
        canary = self.canary.currentData()
        return RolloutOptions(
            canary=str(canary) if canary else None,
            wave=self.wave.value(),
            allow_restart=self.allow_restart.isChecked(),
            skip_unreachable=self.skip_unreachable.isChecked(),
            measure=MeasureLevel(self.measure.currentData()),
            share=self.share.text().strip() or None,
        )
