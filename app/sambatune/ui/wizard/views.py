"""The pages of the tuning wizard: start, findings, measuring, verdict, finished.

Each view only shows what it is given; :mod:`sambatune.ui.wizard.page` drives the
core wizard in worker threads and decides which view is current.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSpinBox,
    QSplitter,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from sambatune.advisor.findings import describe_change
from sambatune.bench.records import RunRecord
from sambatune.bench.small_files import DEFAULT_COUNT, MAX_COUNT, OPERATION_NAMES
from sambatune.conf.apply import STEP_TITLES, ApplyStep, StepState
from sambatune.ui.bench.run_table import RunTable
from sambatune.ui.severity import OTHER_SEVERITY_COLOR, SEVERITY_COLORS
from sambatune.ui.share_box import SurveyedShareBox
from sambatune.ui.tables import read_only_table
from sambatune.wizard.change import activation_sentence
from sambatune.wizard.measure import AUTO, COPY, DEFAULT_SIZE, FILES, MeasureSpec, format_mean
from sambatune.wizard.store import WizardSummary

#: Verdict plots side by side before a new row starts.
PLOTS_PER_ROW = 3

INTRO = (
    "<p>The wizard walks you through tuning this server the careful way:</p><ol>"
    "<li><b>Look.</b> It reads smb.conf and the server and lists what looks wrong, and why.</li>"
    "<li><b>Measure.</b> It measures how fast Samba is now: the <i>baseline</i>.</li>"
    "<li><b>Change one thing.</b> You pick ONE proposed change. It is applied safely: testparm "
    "checks it first, the old file is backed up, smbd reloads, and if anything fails the old "
    "file goes back automatically.</li>"
    "<li><b>Measure again</b> with exactly the same test, and compare: is the difference real, "
    "or just the normal spread between runs?</li>"
    "<li><b>Keep or revert.</b> Reverting puts the previous file back, byte for byte. Then the "
    "next change, or finish with a report of everything.</li></ol>"
    "<p><b>Why only one change at a time?</b> If you change two settings and the server gets "
    "faster, you cannot tell which one helped, or whether one helped and the other hurt. One "
    "change per measurement gives every difference a single known cause.</p>"
)
TEST_TEXT = (
    "<b>Copy a file:</b> smbclient on the server copies a file into the share and back, so "
    "only Samba's own work is measured. <b>Many small files:</b> this computer creates, "
    "reads, lists and deletes small files on the share, where changes to names, "
    "directories, locking and durability show. <b>Chosen from the findings</b> picks one "
    "of them. Warm-up runs are not counted."
)
#: The wizard's tests as the start form offers them (MeasureSpec.test values).
TEST_CHOICES = (
    ("Chosen from the findings", AUTO),
    ("Copy a file (on the server)", COPY),
    ("Many small files (from this computer)", FILES),
)
#: The mark before each safe-apply step; any other state is a failure.
#: The apply steps' list grows with its steps up to this height, then scrolls.
STEPS_MOST_HEIGHT = 220
STEP_MARKS = {StepState.RUNNING: "…", StepState.DONE: "✓", StepState.WARNING: "!", StepState.SKIPPED: "–"}
#: What the two directions of the wizard's test are, in words.
SERIES_NAMES = {"get": "Read (server → client)", "put": "Write (client → server)"}
SEVERITY_WORDS = {
    "problem": "Problem",
    "warning": "Warning",
    "suggestion": "Suggestion",
    "info": "For information",
}
VERDICT_COLORS = {
    "better": "#1e7d32",
    "worse": "#b3261e",
    "mixed": "#8a5300",
    "no real difference": "#1e5a8c",
    "too few runs": "#555",
}
VERDICT_HEADLINES = {
    "better": "Faster: the change made a real difference",
    "worse": "Slower: the change made things worse",
    "mixed": "Mixed: one direction faster, the other slower",
    "no real difference": "No real difference",
    "too few runs": "Too few runs to tell",
}
VERDICT_MEANING = (
    "<p><b>What the verdict means.</b> Every run gives a slightly different figure, even when "
    "nothing changes. The wizard compares the spread of the runs before and after the change "
    "(Welch's t-test). <i>Real</i> means a difference this large would appear by chance less "
    "than 1 time in 20 if the change did nothing (p below 0.05). <i>No real difference</i> "
    "means the runs overlap too much to tell apart: the change may still matter for other "
    "work than this test, but this test cannot see it.</p>"
)


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setStyleSheet("color: palette(window-text);")
    return label


class StartView(QWidget):
    """What the wizard does, the test it will measure with, and wizards left unfinished."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        intro = QTextBrowser()
        intro.setObjectName("wizardIntro")
        intro.setHtml(INTRO)
        intro.setFrameShape(QTextBrowser.Shape.NoFrame)
        layout.addWidget(intro, 3)
        right = QVBoxLayout()
        test = QGroupBox("The test the wizard measures with")
        form = QFormLayout(test)
        self.share = SurveyedShareBox("wizardShare")
        form.addRow("Share", self.share)
        self.test_kind = QComboBox()
        self.test_kind.setObjectName("wizardTest")
        for text, value in TEST_CHOICES:
            self.test_kind.addItem(text, value)
        form.addRow("Test", self.test_kind)
        self.test_kind.currentIndexChanged.connect(self._test_changed)
        self.file_count = QSpinBox()
        self.file_count.setObjectName("wizardFileCount")
        self.file_count.setRange(1, MAX_COUNT)
        self.file_count.setGroupSeparatorShown(True)
        self.file_count.setValue(DEFAULT_COUNT)
        self.file_count.setToolTip("How many small files the small-file test makes (4 KiB each).")
        form.addRow("Small files", self.file_count)
        self.file_size = QSpinBox()
        self.file_size.setObjectName("wizardSize")
        self.file_size.setRange(1, 65536)
        self.file_size.setSuffix(" MiB")
        self.file_size.setValue(DEFAULT_SIZE >> 20)
        form.addRow("Test file", self.file_size)
        self.runs = QSpinBox()
        self.runs.setObjectName("wizardRuns")
        self.runs.setRange(2, 50)
        self.runs.setValue(5)
        form.addRow("Counted runs", self.runs)
        self.warmup = QSpinBox()
        self.warmup.setObjectName("wizardWarmup")
        self.warmup.setRange(0, 10)
        self.warmup.setValue(1)
        form.addRow("Warm-up runs", self.warmup)
        self.user = QLineEdit()
        self.user.setPlaceholderText("empty = guest")
        form.addRow("Share user", self.user)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("never stored")
        form.addRow("Password", self.password)
        form.addRow(_hint(TEST_TEXT))
        right.addWidget(test, 0)
        unfinished = QGroupBox("Unfinished wizards on this server")
        box = QVBoxLayout(unfinished)
        self.unfinished = QListWidget()
        self.unfinished.setObjectName("wizardUnfinished")
        self.unfinished.setMaximumHeight(110)
        box.addWidget(self.unfinished)
        box.addWidget(
            _hint(
                "A wizard that was interrupted (the app closed, the connection "
                "dropped) carries on from its last finished step."
            )
        )
        right.addWidget(unfinished)
        right.addStretch(1)
        layout.addLayout(right, 2)

    def set_shares(self, names: list[str]) -> None:
        self.share.set_shares(names)

    def _test_changed(self) -> None:
        # Each test's own size field; "chosen from the findings" may run either.
        test = self.test_kind.currentData()
        self.file_count.setEnabled(test != COPY)
        self.file_size.setEnabled(test != FILES)

    def spec(self) -> MeasureSpec:
        user = self.user.text().strip() or None
        return MeasureSpec(
            share=self.share.currentText().strip(),
            size=self.file_size.value() << 20,
            runs=self.runs.value(),
            warmup=self.warmup.value(),
            user=user,
            password=self.password.text() if user else None,
            test=str(self.test_kind.currentData()),
            files=self.file_count.value(),
        )

    def show_unfinished(self, wizards: list[WizardSummary]) -> None:
        self.unfinished.clear()
        for wizard in wizards:
            item = QListWidgetItem(
                f"Wizard {wizard.id}, started {wizard.created_at[:16].replace('T', ' ')}"
                f" — last finished step: {wizard.last_step or 'none'}"
            )
            item.setData(Qt.ItemDataRole.UserRole, wizard.id)
            self.unfinished.addItem(item)
        if wizards:
            self.unfinished.setCurrentRow(0)

    def selected_wizard(self) -> int | None:
        item = self.unfinished.currentItem()
        return int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None


def finding_html(finding: dict[str, Any]) -> str:
    color = SEVERITY_COLORS.get(finding["severity"], OTHER_SEVERITY_COLOR)
    change = finding.get("change")
    if change is None:
        proposal = "Nothing to change yet: measure first (see below)."
    elif change.get("kind") == "smb.conf":
        proposal = describe_change(change)
    else:
        proposal = f"{change.get('description')} (not in smb.conf: the wizard cannot apply this one)"
    evidence = "".join(f"<li>{escape(e['text'])}</li>" for e in finding["evidence"])
    return (
        f"<p style='color:{color}'><b>{SEVERITY_WORDS.get(finding['severity'], '')}</b> · "
        f"{escape(finding['subject'])}</p><h3>{escape(finding['title'])}</h3>"
        f"<p><b>What the wizard saw:</b></p><ul>{evidence}</ul>"
        f"<p><b>Proposed change:</b> {escape(proposal)}</p>"
        f"<p><b>What to expect:</b> {escape(finding['expected_effect'])}</p>"
        f"<p style='color:#555'><i>Where that expectation comes from:</i> "
        f"{escape(finding['effect_source'])}</p>"
        f"<p><b>Risk:</b> {escape(finding['risk'])} "
        f"<b>{escape(activation_sentence(finding.get('activation')))}</b></p>"
    )


class FindingsView(QWidget):
    """Everything the advisor found; the ones with an smb.conf change can be chosen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.hint = _hint("")
        self.hint.setObjectName("findingsHint")
        layout.addWidget(self.hint)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.list = QListWidget()
        self.list.setObjectName("wizardFindings")
        self.list.setWordWrap(True)
        self.list.setSpacing(3)
        self.list.currentRowChanged.connect(self._show)
        splitter.addWidget(self.list)
        self.details = QTextBrowser()
        self.details.setObjectName("findingDetails")
        splitter.addWidget(self.details)
        splitter.setSizes([380, 520])
        layout.addWidget(splitter, 1)
        self.findings: list[dict[str, Any]] = []

    def show_findings(self, findings: list[dict[str, Any]], hint: str) -> None:
        self.hint.setText(hint)
        self.findings = findings
        self.list.clear()
        first_applicable = None
        for index, finding in enumerate(findings):
            change = finding.get("change") or {}
            applicable = change.get("kind") == "smb.conf"
            mark = "●" if applicable else "○"
            item = QListWidgetItem(
                f"{mark} {SEVERITY_WORDS.get(finding['severity'], '')}: {finding['title']}"
            )
            item.setForeground(QBrush(QColor(SEVERITY_COLORS.get(finding["severity"], OTHER_SEVERITY_COLOR))))
            if not applicable:
                item.setToolTip("Not an smb.conf change: the wizard cannot apply this one.")
            self.list.addItem(item)
            if applicable and first_applicable is None:
                first_applicable = index
        self.list.setCurrentRow(first_applicable if first_applicable is not None else 0)

    def _show(self, row: int) -> None:
        if 0 <= row < len(self.findings):
            self.details.setHtml(finding_html(self.findings[row]))
        else:
            self.details.clear()

    def selected(self) -> int | None:
        row = self.list.currentRow()
        return row if 0 <= row < len(self.findings) else None

    def selected_is_applicable(self) -> bool:
        row = self.selected()
        return row is not None and (self.findings[row].get("change") or {}).get("kind") == "smb.conf"


class MeasureView(QWidget):
    """A measurement as it runs (the book's run table), and the safe-apply steps before it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.hint = _hint("")
        self.hint.setObjectName("measureHint")
        layout.addWidget(self.hint)
        self.change_box = QGroupBox("The change")
        change_layout = QVBoxLayout(self.change_box)
        self.diff = QPlainTextEdit()
        self.diff.setObjectName("wizardDiff")
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setMaximumHeight(120)
        change_layout.addWidget(self.diff)
        self.steps = QListWidget()
        self.steps.setObjectName("wizardApplySteps")
        # A long step (a path, the shares listed) wraps: a sideways scroll bar took the
        # room of the last step, which was then hidden. The list is as tall as its steps.
        self.steps.setWordWrap(True)
        self.steps.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.steps.setResizeMode(QListWidget.ResizeMode.Adjust)
        change_layout.addWidget(self.steps)
        layout.addWidget(self.change_box)
        self.runs = RunTable()
        layout.addWidget(self.runs, 1)
        self._numbers: dict[str, int] = {}
        self._step_rows: dict[ApplyStep, QListWidgetItem] = {}

    def begin(self, hint: str, diff: str | None) -> None:
        self.hint.setText(hint)
        self.change_box.setVisible(diff is not None)
        self.diff.setPlainText(diff or "")
        self.steps.clear()
        self._step_rows.clear()
        self._fit_steps()
        self.runs.clear()
        self._numbers.clear()

    def applied_earlier(self, message: str) -> None:
        """On a resume: the safe steps ran before the interruption."""
        self.steps.clear()
        self._step_rows.clear()
        self.steps.addItem(QListWidgetItem(f"✓ {message}"))
        self._fit_steps()

    def show_diff(self, diff: str) -> None:
        self.change_box.setVisible(True)
        self.diff.setPlainText(diff)

    def apply_step(self, step: ApplyStep, state: StepState, message: str) -> None:
        mark = STEP_MARKS.get(state, "✗")
        text = f"{mark} {STEP_TITLES.get(step, step)}" + (f": {message}" if message else "")
        item = self._step_rows.get(step)
        if item is None:
            item = QListWidgetItem(text)
            self._step_rows[step] = item
            self.steps.addItem(item)
        item.setText(text)
        self._fit_steps()

    def _fit_steps(self) -> None:
        self.steps.doItemsLayout()  # the wrapped heights, at the list's width now
        rows = sum(
            self.steps.visualItemRect(self.steps.item(row)).height() for row in range(self.steps.count())
        )
        self.steps.setFixedHeight(min(rows + 2 * self.steps.frameWidth() + 2, STEPS_MOST_HEIGHT))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_steps()  # narrower: more lines wrap

    def add_run(self, record: RunRecord) -> None:
        number = None
        if not record.warmup:
            number = self._numbers[record.series] = self._numbers.get(record.series, 0) + 1
        self.runs.add_run(SERIES_NAMES.get(record.series, record.series), record, number)


class VerdictView(QWidget):
    """Before against after: the headline, each direction's figures, the runs as a plot."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.headline = QLabel()
        self.headline.setObjectName("verdictHeadline")
        self.headline.setWordWrap(True)
        layout.addWidget(self.headline)
        self.advice = _hint("")
        self.advice.setObjectName("verdictAdvice")
        layout.addWidget(self.advice)
        self.table = read_only_table(["Direction", "Before", "After", "Change", "Verdict"], "verdictTable")
        layout.addWidget(self.table)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setObjectName("verdictPlots")
        self.plots.setBackground("w")
        self.plots.setMinimumHeight(190)
        layout.addWidget(self.plots, 1)
        self.sentences = _hint("")
        self.sentences.setObjectName("verdictSentences")
        layout.addWidget(self.sentences)
        layout.addWidget(_hint(VERDICT_MEANING))

    def show_verdict(
        self, verdict: dict[str, Any], change: str, runs: dict[str, tuple[list[float], list[float]]]
    ) -> None:
        overall = str(verdict["overall"])
        color = VERDICT_COLORS.get(overall, "#555")
        self.headline.setText(
            f"<span style='font-size:15pt; font-weight:600; color:{color}'>"
            f"{escape(VERDICT_HEADLINES.get(overall, overall))}</span><br>"
            f"<span>after: {escape(change)}</span>"
        )
        advice = {
            "keep": "Recommended: keep it.",
            "revert": "Recommended: revert it.",
            "either": "Your call:",
        }[verdict["recommendation"]]
        self.advice.setText(f"<b>{advice}</b> {escape(verdict['explanation'])}")
        rows = verdict["series"]
        operations = all(item["series"] in OPERATION_NAMES for item in rows)
        self.table.setHorizontalHeaderItem(0, QTableWidgetItem("Operation" if operations else "Direction"))
        self.table.setRowCount(len(rows))
        for row, item in enumerate(rows):
            relative = item.get("relative_change")
            cells = [
                SERIES_NAMES.get(item["series"], item["label"]),
                format_mean(item["series"], item["mean_before"]),
                format_mean(item["series"], item["mean_after"]),
                _relative(relative),
                item["verdict"],
            ]
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if column in (1, 2, 3):
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, cell)
        header = self.table.horizontalHeader().height()
        self.table.setFixedHeight(header + sum(self.table.rowHeight(r) for r in range(len(rows))) + 4)
        self.sentences.setText(
            "<br>".join(
                f"<b>{escape(SERIES_NAMES.get(item['series'], item['label']))}:</b> "
                f"{escape(item['sentence'])}"
                for item in rows
            )
        )
        self.plots.clear()
        # One plot per direction (or operation): they differ too much to share an axis.
        # Three to a row, so the six of the small-file test stay readable.
        self.plots.setMinimumHeight(190 * ((len(runs) + PLOTS_PER_ROW - 1) // PLOTS_PER_ROW or 1))
        for index, (name, (before, after)) in enumerate(runs.items()):
            if index and index % PLOTS_PER_ROW == 0:
                self.plots.nextRow()
            # Operations per second as they are; bytes per second in MB/s.
            operations = name in OPERATION_NAMES
            scale = 1.0 if operations else 1e6
            plot = self.plots.addPlot(title=SERIES_NAMES.get(name, name))
            plot.setLabel("bottom", "counted run")
            plot.setLabel("left", "ops/s" if operations else "MB/s")
            plot.getAxis("left").enableAutoSIPrefix(False)
            plot.addLegend(offset=(-8, 8), colCount=1 if len(runs) <= PLOTS_PER_ROW else 2)
            for values, color, when in ((before, "#8a8a8a", "before"), (after, "#0072b2", "after")):
                plot.plot(
                    list(range(1, len(values) + 1)),
                    [v / scale for v in values],
                    pen=pg.mkPen(color, width=2),
                    symbol="o",
                    symbolBrush=color,
                    symbolSize=7,
                    name=when,
                )
            # Headroom above the highest run keeps the legend (top right) off the lines.
            # (more in the shorter plots of two rows).
            headroom = 1.4 if len(runs) <= PLOTS_PER_ROW else 1.8
            plot.setYRange(0, max([*before, *after, 1.0]) / scale * headroom)
            runs_shown = max(len(before), len(after))
            plot.getAxis("bottom").setTicks([[(i, str(i)) for i in range(1, runs_shown + 1)]])


def _relative(change: float | None) -> str:
    if change is None:
        return "–"
    return f"{change:+.0%}" if abs(change) >= 1 else f"{change:+.1%}"


class FinishView(QWidget):
    """What was kept, the final difference, and the report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.summary = _hint("")
        self.summary.setObjectName("finishSummary")
        layout.addWidget(self.summary)
        self.diff = QPlainTextEdit()
        self.diff.setObjectName("finishDiff")
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.diff, 1)

    def show_finish(self, data: dict[str, Any], rounds: list[tuple[str, str, str]]) -> None:
        lines = "".join(
            f"<li>{escape(change)}: {escape(verdict)}, <b>{escape(decision)}</b></li>"
            for change, verdict, decision in rounds
        )
        tried = f"<p>Changes tried:</p><ul>{lines}</ul>" if rounds else "<p>No change was tried.</p>"
        state = (
            "smb.conf is byte for byte what it was before the wizard."
            if data.get("identical_to_original")
            else "smb.conf differs from before the wizard by the kept changes below."
        )
        self.summary.setText(
            f"<p><b>The wizard is finished.</b> {state}</p>{tried}"
            "<p>Save the report to keep every step, every run and the plots in "
            "one file you can open in any browser.</p>"
        )
        self.diff.setPlainText(data.get("diff") or "(no difference)")
        self.diff.setVisible(not data.get("identical_to_original"))
