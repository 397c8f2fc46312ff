"""Which test, where, with which parameters: the left side of the Benchmarks page.

The form only reads what the person typed into a :class:`RunRequest` (plain values,
checked here so a typo gets a clear message before anything starts);
:func:`build_benchmark` turns it into a benchmark in the worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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

from sambatune.bench.runner import Benchmark, Method
from sambatune.cancellation import CancelToken
from sambatune.quantities import parse_count
from sambatune.errors import InvalidInput
from sambatune.ui.share_box import SurveyedShareBox

if TYPE_CHECKING:  # imported in the worker, when a test is built
    from sambatune.bench.small_files import SmallFilesOptions
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_security import ServerSessions

TESTS = {
    "net-download": "Network: server → this computer",
    "net-upload": "Network: this computer → server",
    "disk": "Disk on the server",
    "smb": "SMB on the server (smbclient)",
    "dirscale": "Directory scaling (many files)",
    "sockbuf": "Socket buffer sweep",
    "smb-client": "SMB from this computer",
    "small-files": "Small files from this computer",
}
EXPLANATIONS = {
    "net-download": "Raw TCP from the server to this computer over its own connection (not SSH).",
    "net-upload": "Raw TCP from this computer to the server over its own connection (not SSH).",
    "disk": "Sequential write and read of a test file on the server, bypassing its cache, "
    "and the small-file rate.",
    "smb": "smbclient on the server itself copies a file through the share, against raw TCP "
    "and the disk there.",
    "dirscale": "Lists and looks up names in directories of growing size over SMB "
    "(the cost of case-insensitive names).",
    "sockbuf": "Throughput with fixed SO_SNDBUF/SO_RCVBUF sizes against autotuning.",
    "smb-client": "This computer writes and reads a file on the share: your network and the "
    "server together, as users see them.",
    "small-files": "This computer creates, checks, reads, renames, lists and deletes many small "
    "files in a test directory of its own on the share, timing every call: what a build, "
    "a mail store or a photo library feels. The directory is removed at the end.",
}
SECRET_KIND = "smb"
#: The file size each test starts with; "auto" lets the SMB test size it from a probe.
AUTO = "auto"
DEFAULT_SIZES = {"disk": "256MiB", "smb": AUTO, "smb-client": AUTO, "small-files": "4KiB"}
SIZE_TIPS = {
    "smb": "auto: a short probe copy first, then a file sized so that all the SMB runs take "
    "about a minute (at most 512MiB). A size you give is always used.",
    "smb-client": "auto: a short probe write and read first, then a file sized so that all "
    "the runs take about a minute (at most 256MiB). A size you give is always used.",
    "small-files": "Bytes in each file, at most 64KiB: small files cost round trips, not bandwidth.",
}
#: Requests in flight each test starts with (the small-file test: one file at a time, as a
#: plain copy does; more is what robocopy /MT does).
DEFAULT_OUTSTANDING = {"smb-client": 4, "small-files": 1}
OUTSTANDING_TIPS = {
    "smb-client": "Read or write requests SambaTune's client keeps going at once.",
    "small-files": "Files worked on at once, each by its own thread, like robocopy /MT:N. 1: one "
    "file after the other, as a plain copy does.",
}
#: Counted and warm-up runs each test starts with: in the small-file test every run
#: already times thousands of calls, which give its percentiles.
DEFAULT_METHOD = {"small-files": (1, 0)}
USUAL_METHOD = (5, 1)
#: The tests from this computer: a share through SambaTune's client, or a mounted path.
SHARE_TARGET_TESTS = {"smb-client", "small-files"}
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
#: Which rows each test shows.
ROWS = {
    "share": {"disk", "smb", "dirscale"} | SHARE_TARGET_TESTS,
    "directory": {"disk"},
    "server": SHARE_TARGET_TESTS,
    "port": SHARE_TARGET_TESTS,
    "user": {"smb", "dirscale"} | SHARE_TARGET_TESTS,
    "password": {"smb", "dirscale"} | SHARE_TARGET_TESTS,
    "remember": SHARE_TARGET_TESTS,
    "path": SHARE_TARGET_TESTS,
    "duration": {"net-download", "net-upload", "sockbuf"},
    "count": {"small-files"},
    "size": {"disk", "smb", "smb-client", "small-files"},
    "block": {"disk", "smb-client"},
    "outstanding": {"smb-client", "small-files"},
    "connections": {"small-files"},
    "security": {"smb-client"},
    "sizes": {"sockbuf"},
    "counts": {"dirscale"},
}


@dataclass(frozen=True)
class RunRequest:
    test: str
    runs: int
    warmup: int
    note: str = ""
    share: str = ""
    directory: str = ""
    server: str = ""
    port: int = 445
    user: str = ""
    password: str = field(default="", repr=False)
    remember: bool = False
    path: str = ""
    seconds: float = 5.0
    #: None: the SMB test sizes its file from a short probe.
    size: int | None = 256 << 20
    block: int = 4 << 20
    outstanding: int = 4
    #: The small-file test's SMB connections (each a session and smbd process of its own).
    connections: int = 1
    sizes: tuple[int, ...] = ()
    counts: tuple[int, ...] = ()
    sample_interval: float = 0.1
    count: int = 2000
    #: Sessions to compare (plain, signed, encrypted); empty: one session as usual.
    security: tuple[str, ...] = ()

    @property
    def secret_target(self) -> str:
        return f"{self.user}@{self.server}:{self.port}/{self.share}"


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
        for key, label in TESTS.items():
            self.test.addItem(label, key)
        self.form.addRow("Test", self.test)
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
        self.duration.setValue(5.0)
        self.count = QLineEdit("2000")
        self.count.setToolTip("How many files, 1 to 100,000; e.g. 500, 2000, 10k.")
        self.file_size = QLineEdit("256MiB")
        self._size_default = "256MiB"
        self.block = QLineEdit("4MiB")
        self.outstanding = QSpinBox()
        self.outstanding.setRange(1, 64)
        self.outstanding.setValue(4)
        self._outstanding_default = 4
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
        labels = {
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
        for key, widget in self.rows.items():
            widget.setObjectName(widget.objectName() or f"bench_{key}")
            self.form.addRow(labels[key], widget)
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

    def select_test(self, key: str) -> None:
        self.test.setCurrentIndex(list(TESTS).index(key))

    def _test_changed(self) -> None:
        test = self.current_test()
        for key, widget in self.rows.items():
            self.form.setRowVisible(widget, test in ROWS[key])
        # A size left at one test's default follows to the next test's default.
        default = DEFAULT_SIZES.get(test, self._size_default)
        if self.file_size.text().strip().lower() == self._size_default.lower():
            self.file_size.setText(default)
        self._size_default = default
        self.file_size.setToolTip(SIZE_TIPS.get(test, ""))
        # The same for requests in flight and the runs, left as they were.
        outstanding = DEFAULT_OUTSTANDING.get(test, self._outstanding_default)
        if self.outstanding.value() == self._outstanding_default:
            self.outstanding.setValue(outstanding)
        self._outstanding_default = outstanding
        self.outstanding.setToolTip(OUTSTANDING_TIPS.get(test, ""))
        method = DEFAULT_METHOD.get(test, USUAL_METHOD)
        if (self.runs.value(), self.warmup.value()) == self._method_default:
            self.runs.setValue(method[0])
            self.warmup.setValue(method[1])
        self._method_default = method
        if test == "sockbuf" and self.duration.value() == 5.0:
            self.duration.setValue(2.0)
        elif test != "sockbuf" and self.duration.value() == 2.0:
            self.duration.setValue(5.0)

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
        """What the person asked for, checked; :class:`InvalidInput` says what is wrong."""
        test = self.current_test()

        # Imported where needed: this runs on the GUI thread when Run is pressed.
        def parse_size(text: str) -> int:
            from sambatune.quantities import parse_size

            return parse_size(text)

        def sizes(text: str) -> tuple[int, ...]:
            return tuple(parse_size(p.strip()) for p in text.split(",") if p.strip())

        def counts(text: str) -> tuple[int, ...]:
            from sambatune.bench.dirscale import DEFAULT_COUNTS

            return tuple(parse_count(p) for p in text.split(",") if p.strip()) or DEFAULT_COUNTS

        def file_size(text: str) -> int | None:
            default = DEFAULT_SIZES.get(test, "256MiB")
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

        share = self.share.currentText().strip()
        if test in ("smb", "dirscale", *SHARE_TARGET_TESTS) and not share and not self.path.text().strip():
            raise InvalidInput("Which share? Choose one of the server's shares.")
        if test in SHARE_TARGET_TESTS and not self.path.text().strip() and not self.server.text().strip():
            raise InvalidInput("Which SMB server? Give its name or address.")
        if test == "disk" and not share and not self.directory.text().strip():
            raise InvalidInput("Where should the disk test run? Choose a share or give a directory.")
        request = RunRequest(
            test=test,
            runs=self.runs.value(),
            warmup=self.warmup.value(),
            note=self.note.text().strip(),
            share=share,
            directory=self.directory.text().strip(),
            server=self.server.text().strip(),
            port=self.port.value(),
            user=self.user.text().strip(),
            password=self.password.text(),
            remember=self.remember.isChecked(),
            path=self.path.text().strip(),
            seconds=self.duration.value(),
            size=file_size(self.file_size.text()) if test in ROWS["size"] else 256 << 20,
            block=parse_size(self.block.text()) if test in ROWS["block"] else 4 << 20,
            outstanding=self.outstanding.value(),
            connections=self.connections.value() if test in ROWS["connections"] else 1,
            sizes=sizes(self.sizes.text()) if test == "sockbuf" else (),
            counts=counts(self.counts.text()) if test == "dirscale" else (),
            count=parse_count(self.count.text()) if test == "small-files" else 2000,
            security=self.security_modes() if test == "smb-client" else (),
        )
        # The core's own checks (count, size, requests in flight, a user for signed and
        # encrypted sessions), before anything starts; no password yet: the keyring is read
        # in the worker.
        if test == "small-files":
            small_files_options(request, {"user": request.user or None})
        elif test == "smb-client":
            smb_client_options(request, {"user": request.user or None})
        return request


def _password(request: RunRequest) -> str | None:
    """The typed password, else one the keyring keeps for this share (worker thread)."""
    if not request.user:
        return None
    if request.password:
        return request.password
    from sambatune.remote.secrets import load_secret

    return load_secret(SECRET_KIND, request.secret_target) or ""


def build_benchmark(
    request: RunRequest,
    transport: Any,
    context: Any,
    cancel: CancelToken,
    server_sessions: ServerSessions | None = None,
) -> Benchmark:
    """The benchmark the request describes (runs in the worker thread); ``server_sessions``
    reads the server's session list, to name what each compared SMB session negotiated."""
    method = Method(runs=request.runs, warmup=request.warmup)
    common: dict[str, Any] = {"context": context, "cancel": cancel}
    test = request.test
    if test in ("net-download", "net-upload", "sockbuf"):
        from sambatune.bench.net import NetBenchmark, NetOptions

        direction = "upload" if test == "net-upload" else "download"
        net = NetOptions(
            direction=direction, seconds=request.seconds, sample_interval=request.sample_interval
        )
        if test != "sockbuf":
            return NetBenchmark(transport, method, net, **common)
        from sambatune.bench.sockbuf import DEFAULT_SIZES, SockbufBenchmark, SockbufOptions

        return SockbufBenchmark(
            transport, method, SockbufOptions(sizes=request.sizes or DEFAULT_SIZES, net=net), **common
        )
    if test == "disk":
        from sambatune.bench.disk import DiskBenchmark, DiskOptions

        directory = request.directory or context.share_path(request.share)
        return DiskBenchmark(
            transport,
            method,
            DiskOptions(
                directory=directory,
                size=request.size or 256 << 20,
                block_size=request.block,
                sample_interval=request.sample_interval * 2,
            ),
            **common,
        )
    login: dict[str, Any] = {"user": request.user or None, "password": _password(request)}
    if test == "smb":
        from sambatune.bench.smb import SmbBenchmark, SmbOptions

        return SmbBenchmark(
            transport, method, SmbOptions(share=request.share, size=request.size, **login), **common
        )
    if test == "dirscale":
        from sambatune.bench.dirscale import DirscaleBenchmark, DirscaleOptions

        return DirscaleBenchmark(
            transport, method, DirscaleOptions(share=request.share, counts=request.counts, **login), **common
        )
    if test == "small-files":
        from sambatune.bench.small_files import SmallFilesBenchmark

        return SmallFilesBenchmark(transport, method, small_files_options(request, login), **common)
    from sambatune.bench.smb_client import SmbClientBenchmark

    return SmbClientBenchmark(
        transport, method, smb_client_options(request, login), server_sessions=server_sessions, **common
    )


def _share_target(request: RunRequest) -> dict[str, Any]:
    """Where a test from this computer goes: the mounted path, else server, share and port."""
    if request.path:
        return {"path": request.path}
    return {"server": request.server, "share": request.share, "port": request.port}


def small_files_options(request: RunRequest, login: dict[str, Any]) -> SmallFilesOptions:
    """The small-file test's options; :class:`InvalidInput` says what is out of range."""
    from sambatune.bench.small_files import SmallFilesOptions
    from sambatune.bench.smb_wire import SmbLogin

    return SmallFilesOptions(
        login=SmbLogin(**login),
        count=request.count,
        size=request.size if request.size is not None else 4096,
        outstanding=request.outstanding,
        connections=request.connections,
        **_share_target(request),
    )


def smb_client_options(request: RunRequest, login: dict[str, Any]) -> SmbClientOptions:
    """The SMB test's options; :class:`InvalidInput` says what is wrong (e.g. a signed
    session with no user)."""
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_wire import SmbLogin

    return SmbClientOptions(
        login=SmbLogin(**login),
        size=request.size,
        block_size=request.block,
        outstanding=request.outstanding,
        security=request.security,
        **_share_target(request),
    )


def server_session_reader(transport: Any, survey: Any) -> ServerSessions | None:
    """Reads the session list of the smbd SambaTune manages on this server, or None when
    the survey knows no running smbd for its smb.conf (worker thread: it may ask sudo).

    Root sees every session; without it smbstatus lists only the SSH account's own, which
    rarely holds the test's SMB user: the test then says it named the session from this
    computer's side. Decided as the survey's client audit does.
    """
    if survey is None or survey.ambiguous or not survey.config_path or survey.managed_instance is None:
        return None
    from sambatune.bench.smb_security import server_sessions

    return server_sessions(transport, survey.config_path)
