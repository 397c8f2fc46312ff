"""Which test, where, with which parameters: the left side of the Benchmarks page.

The form shows the rows the chosen kind of test names (``sambatune.bench.kinds``) and
only reads what the person typed into a :class:`RunRequest` (plain values, checked here
so a typo gets a clear message before anything starts); the kind builds the benchmark
from it in the worker thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from sambatune.bench.kinds import KINDS
from sambatune.bench.kinds.kind import AUTO, ROWS, USUAL_METHOD, BenchKind, RunRequest
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_count
from sambatune.ui.share_box import SurveyedShareBox

#: A file size, requests in flight and seconds per run for a kind that names none.
USUAL_SIZE = "256MiB"
USUAL_OUTSTANDING = 4
USUAL_SECONDS = 5.0
DIRECTIONS = {"download": "server → this computer", "upload": "this computer → server"}
#: The sessions the SMB test can compare, in the order they run: the first one checked is
#: the one the others are measured against (the core's SECURITY_MODES, not imported here so
#: the form does not load the SMB client on the GUI thread at start).
SECURITY_MODES = ("plain", "signed", "encrypted")
SECURITY_TIPS = {
    "plain": "A session that neither signs nor encrypts (SMB 3.1.1 still signs its logon).",
    "signed": "Every request and answer signed (needs a user: a guest has no key).",
    "encrypted": "Every request and answer encrypted (needs a user: a guest has no key).",
}
SECURITY_TIP = (
    "Run the test once in a session of each kind checked, on the same share and file size, "
    "and compare their rates: what signing and encryption cost here. The first one checked "
    "is the baseline. None checked: one session, as the server offers it."
)
SECURITY_PATH_TIP = (
    "Not with a mounted path: this computer's own client keeps the session its mount made. "
    "Clear the path to compare sessions with SambaTune's own client."
)
LABELS = {
    "direction": "Direction",
    "share": "Share",
    "directory": "Directory",
    "server": "SMB server",
    "port": "SMB port",
    "user": "SMB user",
    "password": "Password",
    "remember": "",
    "path": "Or this path",
    "duration": "Seconds per run",
    "count": "Number of files",
    "size": "File size",
    "block": "Block size",
    "outstanding": "Requests in flight",
    "connections": "Connections",
    "security": "Compare sessions",
    "sizes": "Buffer sizes",
    "counts": "File counts",
}


class BenchForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.test = QComboBox()
        self.test.setObjectName("benchTest")
        # Long test names must not widen the form beyond the page's left column.
        self.test.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.test.setMinimumContentsLength(18)
        for kind in KINDS.values():
            self.test.addItem(kind.title, kind.name)
        self.form.addRow("Test", self.test)
        self.direction = QComboBox()
        for key, label in DIRECTIONS.items():
            self.direction.addItem(label, key)
        self.share = SurveyedShareBox("benchShare")
        self.share.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.directory = QLineEdit()
        self.directory.setPlaceholderText("default: the share's path")
        self.server = QLineEdit()
        self.server.setObjectName("benchServer")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(445)
        self.user = QLineEdit()
        self.user.setPlaceholderText("empty: guest")
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        # Short: the form's column must fit the page's left side without cutting it.
        self.remember = QCheckBox("Remember in the system keyring")
        self.remember.setToolTip("After a good run, keep this password for this user and share.")
        self.path = QLineEdit()
        self.path.setPlaceholderText("optional: a mounted share")
        self.path.setToolTip(
            "Measure through this computer's own SMB client: a directory on the "
            "share as this computer mounted it. Empty: SambaTune's own client."
        )
        self.runs = QSpinBox()
        self.runs.setRange(1, 50)
        self.runs.setValue(5)
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 10)
        self.warmup.setValue(1)
        self.duration = QDoubleSpinBox()
        self.duration.setRange(0.5, 120.0)
        self.duration.setSuffix(" s")
        self.duration.setValue(USUAL_SECONDS)
        self.count = QLineEdit("2000")
        self.count.setToolTip("How many files, 1 to 100,000; e.g. 500, 2000, 10k.")
        self.file_size = QLineEdit(USUAL_SIZE)
        self._size_default = USUAL_SIZE
        self.block = QLineEdit("4MiB")
        self.outstanding = QSpinBox()
        self.outstanding.setRange(1, 64)
        self.outstanding.setValue(USUAL_OUTSTANDING)
        self._outstanding_default = USUAL_OUTSTANDING
        self._seconds_default = USUAL_SECONDS
        self.connections = QSpinBox()
        self.connections.setRange(1, 64)
        self.connections.setToolTip(
            "SMB connections the files in flight are spread over, each a session and an smbd "
            "process of its own on the server, as that many clients at once. 1: one client "
            "(robocopy /MT shares one session). At most the files in flight."
        )
        self.security = QWidget()
        self.security.setObjectName("benchSecurity")
        security_row = QHBoxLayout(self.security)
        security_row.setContentsMargins(0, 0, 0, 0)
        self.security_boxes: dict[str, QCheckBox] = {}
        for mode in SECURITY_MODES:
            box = QCheckBox(mode)
            box.setObjectName(f"benchSecurity_{mode}")
            box.setToolTip(SECURITY_TIPS[mode])
            security_row.addWidget(box)
            self.security_boxes[mode] = box
        security_row.addStretch(1)
        self.path.textChanged.connect(self._path_changed)
        self.sizes = QLineEdit("4KiB,16KiB,64KiB,256KiB,1MiB,4MiB")
        self.counts = QLineEdit("1000,10000")
        self.note = QLineEdit()
        self.note.setPlaceholderText("e.g. before: socket options removed")
        self.rows: dict[str, QWidget] = {
            "direction": self.direction,
            "share": self.share,
            "directory": self.directory,
            "server": self.server,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "remember": self.remember,
            "path": self.path,
            "duration": self.duration,
            "count": self.count,
            "size": self.file_size,
            "block": self.block,
            "outstanding": self.outstanding,
            "connections": self.connections,
            "security": self.security,
            "sizes": self.sizes,
            "counts": self.counts,
        }
        assert tuple(self.rows) == ROWS, "a row of the kinds with no widget here"
        for key, widget in self.rows.items():
            widget.setObjectName(widget.objectName() or f"bench_{key}")
            self.form.addRow(LABELS[key], widget)
        security_label = self.form.labelForField(self.security)
        if isinstance(security_label, QLabel):
            # The longest label: on one line it would widen the form past the page's left
            # side, so it breaks in two where the column is narrow.
            security_label.setWordWrap(True)
        self.form.addRow("Counted runs", self.runs)
        self.form.addRow("Warm-up runs", self.warmup)
        self.form.addRow("Note", self.note)
        self._method_default = USUAL_METHOD
        self.test.currentIndexChanged.connect(self._test_changed)
        self._test_changed()
        self._path_changed()

    def current_test(self) -> str:
        return str(self.test.currentData())

    def current_kind(self) -> BenchKind:
        return KINDS[self.current_test()]

    def select_test(self, name: str) -> None:
        self.test.setCurrentIndex(list(KINDS).index(name))

    def _test_changed(self) -> None:
        kind = self.current_kind()
        for key, widget in self.rows.items():
            self.form.setRowVisible(widget, key in kind.rows)
        # A value left at one test's default follows to the next test's default.
        size = kind.defaults.get("size", USUAL_SIZE)
        if self.file_size.text().strip().lower() == self._size_default.lower():
            self.file_size.setText(size)
        self._size_default = size
        self.file_size.setToolTip(kind.tips.get("size", ""))
        outstanding = kind.defaults.get("outstanding", USUAL_OUTSTANDING)
        if self.outstanding.value() == self._outstanding_default:
            self.outstanding.setValue(outstanding)
        self._outstanding_default = outstanding
        self.outstanding.setToolTip(kind.tips.get("outstanding", ""))
        seconds = kind.defaults.get("duration", USUAL_SECONDS)
        if self.duration.value() == self._seconds_default:
            self.duration.setValue(seconds)
        self._seconds_default = seconds
        if (self.runs.value(), self.warmup.value()) == self._method_default:
            self.runs.setValue(kind.method[0])
            self.warmup.setValue(kind.method[1])
        self._method_default = kind.method

    def _path_changed(self) -> None:
        # A mounted path cannot choose its session: the row says why instead of being ignored.
        through_path = bool(self.path.text().strip())
        self.security.setEnabled(not through_path)
        self.security.setToolTip(SECURITY_PATH_TIP if through_path else SECURITY_TIP)
        for mode, box in self.security_boxes.items():
            # A box's own tip would hide the row's reason for being off.
            box.setToolTip(SECURITY_PATH_TIP if through_path else SECURITY_TIPS[mode])
        label = self.form.labelForField(self.security)
        if label is not None:
            label.setEnabled(not through_path)  # greyed with its boxes, not only them
            label.setToolTip(self.security.toolTip())
        # The mount's one connection is the operating system's to choose.
        self.connections.setEnabled(not through_path)
        if through_path:
            self.connections.setValue(1)

    def security_modes(self) -> tuple[str, ...]:
        """The sessions checked, in the order they run; () with a path (the row is off)."""
        if self.path.text().strip():
            return ()
        return tuple(mode for mode, box in self.security_boxes.items() if box.isChecked())

    def set_shares(self, names: list[str]) -> None:
        self.share.set_shares(names)

    def request(self) -> RunRequest:
        """What the person asked for, checked; :class:`InvalidInput` says what is wrong.
        A row the test does not show is not read: its field keeps the usual value."""
        kind = self.current_kind()
        shown = kind.rows
        usual = RunRequest(test=kind.name, runs=0, warmup=0)

        # Imported where needed: this runs on the GUI thread when Run is pressed.
        def parse_size(text: str) -> int:
            from sambatune.quantities import parse_size

            return parse_size(text)

        def sizes(text: str) -> tuple[int, ...]:
            return tuple(parse_size(p.strip()) for p in text.split(",") if p.strip())

        def counts(text: str) -> tuple[int, ...]:
            return tuple(parse_count(p) for p in text.split(",") if p.strip())

        def file_size(text: str) -> int | None:
            default = kind.defaults.get("size", USUAL_SIZE)
            if text.strip().lower() in ("", AUTO):
                if default == AUTO:
                    return None
                if not text.strip():
                    return parse_size(default)
                raise InvalidInput(
                    f"Give the file size, e.g. {default}: only the SMB throughput tests "
                    "size their file themselves."
                )
            return parse_size(text)

        def text(row: str, widget: QLineEdit | QComboBox) -> str:
            if row not in shown:
                return str(getattr(usual, row))
            value = widget.currentText() if isinstance(widget, QComboBox) else widget.text()
            return value.strip()

        request = RunRequest(
            test=kind.name,
            runs=self.runs.value(),
            warmup=self.warmup.value(),
            note=self.note.text().strip(),
            direction=str(self.direction.currentData()) if "direction" in shown else usual.direction,
            share=text("share", self.share),
            directory=text("directory", self.directory),
            server=text("server", self.server),
            port=self.port.value() if "port" in shown else usual.port,
            user=text("user", self.user),
            password=self.password.text() if "password" in shown else "",
            remember=self.remember.isChecked() if "remember" in shown else False,
            path=text("path", self.path),
            seconds=self.duration.value() if "duration" in shown else usual.seconds,
            size=file_size(self.file_size.text()) if "size" in shown else usual.size,
            block=parse_size(self.block.text()) if "block" in shown else usual.block,
            outstanding=self.outstanding.value() if "outstanding" in shown else usual.outstanding,
            connections=self.connections.value() if "connections" in shown else usual.connections,
            sizes=sizes(self.sizes.text()) if "sizes" in shown else (),
            counts=counts(self.counts.text()) if "counts" in shown else (),
            count=parse_count(self.count.text()) if "count" in shown else usual.count,
            security=self.security_modes() if "security" in shown else (),
        )
        kind.check(request)
        return request
