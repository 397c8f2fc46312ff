"""Apply to server… from the editor: warn, describe, review, apply, then show what happened.

The editor's bytes are the candidate and the bytes read when the file was opened
(or last applied) are the original, so the safe-apply pipeline's hash check
catches a change someone else made meanwhile. Lint errors warn first, but
testparm on the server decides. After a success the applied bytes become the
editor's baseline; after a refusal testparm's complaints are shown at the lines
they are about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMessageBox

from sambatune.cancellation import CancelToken
from sambatune.states import LiveState
from sambatune.ui.editor.text_edit import Marker

if TYPE_CHECKING:
    from sambatune.conf.apply import ApplyOutcome
    from sambatune.ui.apply_dialog import ApplyDialog
    from sambatune.ui.editor.page import ConfEditorPage


class ServerApplyFlow(QObject):
    def __init__(self, page: ConfEditorPage) -> None:
        super().__init__(page)
        self.page = page
        self.dialog: ApplyDialog | None = None

    def start(self) -> None:
        page = self.page
        result = page.lint.current
        errors = [f for f in (result.findings if result else []) if f.severity == "error"]
        if not errors:
            self._describe()
            return
        first = errors[0]
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Samba may refuse this file",
            f"SambaTune found {len(errors)} problem(s) that make Samba refuse the file, "
            f"for example line {first.line}: {first.message}\n\ntestparm on the server has the "
            "final word and nothing is installed if it refuses. Continue to the review?",
            QMessageBox.StandardButton.Cancel,
            page,
        )
        box.setObjectName("lintErrorsBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        go_on = box.addButton("Review and apply", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered(_result: int) -> None:
            if box.clickedButton() is go_on:
                self._describe()

        box.finished.connect(answered)
        box.open()

    def _describe(self) -> None:
        """Say in one line what Samba will read differently, then show the review."""
        page = self.page
        candidate = page.buffer.render()
        original = page.buffer.baseline
        catalog = page.catalog
        page.apply_button.setEnabled(False)

        def work(report: Any, cancel: CancelToken) -> str:
            from sambatune.conf.change_summary import describe_changes
            from sambatune.conf.document import SmbConfDocument
            from sambatune.conf.effective import effective_view

            assert catalog is not None
            return describe_changes(
                effective_view(SmbConfDocument(original), catalog),
                effective_view(SmbConfDocument(candidate), catalog),
            )

        page.start_task(
            work,
            name="Describing the change",
            on_done=lambda summary: self._review(original, candidate, summary),
            on_failed=lambda _error: self._review(original, candidate, ""),
            on_finished=page.update_buttons,
        )

    def _review(self, original: bytes, candidate: bytes, summary: str) -> None:
        from sambatune.ui.apply_dialog import ApplyDialog

        page = self.page
        dialog = ApplyDialog(
            page.session,
            path=page.source.path,
            original=original,
            candidate=candidate,
            summary=summary,
            what="an apply from the editor",
            parent=page.window(),
        )
        self.dialog = dialog
        dialog.finished_outcome.connect(lambda outcome: self._applied(outcome, candidate))
        dialog.open()

    def _applied(self, outcome: ApplyOutcome, candidate: bytes) -> None:
        page = self.page
        if outcome.live == LiveState.NEW:
            page.buffer.mark_saved(candidate)
            page.clear_testparm_errors()
            page.applied.emit(outcome)
        elif outcome.testparm is not None and not outcome.testparm.ok:
            self.show_testparm_errors(outcome.testparm.errors)
        page.update_buttons()

    def show_testparm_errors(self, errors: list[str]) -> None:
        """testparm's complaints at the lines they are about (gutter and list)."""
        from sambatune.conf.testparm_messages import locate_messages

        page = self.page
        if page.catalog is None:
            return
        # "Error loading services." adds nothing when testparm said what was wrong.
        specific = [e for e in errors if not e.lower().startswith("error loading services")]
        located = locate_messages(page.buffer.document, page.catalog, specific or errors)
        anchored: list[tuple[int, Marker]] = []
        listed: list[tuple[int | None, str]] = []
        for item in located:
            for line in item.lines:
                anchored.append((line, Marker("error", item.message, "testparm")))
            listed.append((item.lines[0] if item.lines else None, item.message))
        page.editor.set_anchored(anchored)
        page.findings.show_testparm(listed)
        if anchored:
            page.go_to_line(anchored[0][0])
