"""The side panel: everything we know about the parameter under the cursor.

Type, default, scope and status come from the catalog of the server's own Samba
version; what it does, its performance effect, when to change it, its history and
our verdict on classic tuning advice come from our notes
(:func:`sambatune.conf.explain.explain`). The server's man page entry is read on
request, off the GUI thread.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.explain import Explanation, explain

STATUS_STYLES = {
    "current": ("#1a7f37", "#dafbe1"),
    "deprecated": ("#9a6700", "#fff8c5"),
    "removed": ("#cf222e", "#ffebe9"),
    "unknown": ("#57606a", "#eaeef2"),
}
VERDICT_STYLES = {
    "obsolete": ("#cf222e", "obsolete"),
    "holds": ("#1a7f37", "still holds"),
    "partly": ("#9a6700", "partly true"),
    "depends": ("#0969da", "depends"),
}
_CODE = re.compile(r"`([^`]+)`")


def _text(value: str | None) -> str:
    """Our notes as HTML: escaped, with `code` in a fixed font."""
    return _CODE.sub(r"<code>\1</code>", html.escape(value or ""))


class ExplanationPanel(QWidget):
    #: The user asked for the server's man page entry of this parameter.
    man_page_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("explanationPanel")
        self.catalog: ParameterCatalog | None = None
        self.parameter: str | None = None
        self.written: str | None = None
        self.man_pages: dict[str, str | None] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.browser = QTextBrowser()
        self.browser.setObjectName("explanationText")
        self.browser.setOpenExternalLinks(False)
        self.browser.document().setDefaultStyleSheet(
            "h2 { margin: 0; } h4 { margin-top: 10px; margin-bottom: 2px; color: #24292f; }"
            "p { margin-top: 2px; margin-bottom: 4px; } code { background: #eff1f3; }"
            "td { padding-right: 8px; padding-bottom: 2px; } .muted { color: #57606a; }"
        )
        layout.addWidget(self.browser, 1)
        self.man_button = QPushButton("Show the server's man page entry")
        self.man_button.setObjectName("manPageButton")
        self.man_button.clicked.connect(self._ask_man_page)
        layout.addWidget(self.man_button)
        self.man_status = QLabel()
        self.man_status.setObjectName("manPageStatus")
        self.man_status.setWordWrap(True)
        self.man_status.hide()
        layout.addWidget(self.man_status)
        self.show_nothing()

    def set_man_page_owner(self, owner: str) -> None:
        """Whose man page the button reads: "the server's" or "this computer's"."""
        self.man_button.setText(f"Show {owner} man page entry")

    def set_catalog(self, catalog: ParameterCatalog) -> None:
        self.catalog = catalog
        if self.written is not None:
            written, self.written, self.parameter = self.written, None, None
            self.show_parameter(written)

    # -- what is shown -----------------------------------------------------------------------
    def show_nothing(self) -> None:
        self.parameter = self.written = None
        self.man_button.setEnabled(False)
        self.man_status.hide()
        self.browser.setHtml(
            "<p class='muted'>Put the cursor on a parameter to see what it does, its default on "
            "this server's Samba version, and whether old tuning advice about it still "
            "holds.</p>"
        )

    def show_section(self, name: str, settings: int | None = None) -> None:
        self.parameter = self.written = None
        self.man_button.setEnabled(False)
        self.man_status.hide()
        if name.strip().lower() in ("global", "globals"):
            body = (
                "Server-wide settings. Share-level parameters set here are the defaults "
                "of every share defined <i>below</i> them."
            )
        else:
            body = (
                f"The share <b>{html.escape(name)}</b>. What it sets here overrides the "
                "[global] defaults for this share only."
            )
        count = "" if settings is None else f"<p class='muted'>{settings} setting(s).</p>"
        self.browser.setHtml(f"<h2>[{html.escape(name)}]</h2><p>{body}</p>{count}")

    def show_parameter(self, written: str) -> None:
        """Explain the parameter written as ``written`` (any spelling; synonyms resolve)."""
        if self.catalog is None or written == self.written:
            return
        self.written = written
        facts = explain(written, self.catalog)
        self.parameter = facts.name
        self.man_button.setEnabled(facts.status != "unknown")
        self.man_status.hide()
        self.browser.setHtml(self._html(facts))

    def show_man_page(self, name: str, text: str | None) -> None:
        self.man_pages[name] = text
        if name != self.parameter:
            return
        self.man_button.setEnabled(True)
        if text is None:
            self.man_status.setText(f"There is no smb.conf(5) entry for '{name}' (or no man page installed).")
            self.man_status.show()
            return
        self.man_status.hide()
        current = self.browser.toHtml()
        paragraphs = "".join(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n")[1:])
        self.browser.setHtml(
            current.replace("</body>", "")
            + (
                "<a name='man'></a><h4>The man page, smb.conf(5)</h4>"
                f"<div class='muted'>{paragraphs}</div></body>"
            )
        )
        # It goes below the explanation, out of sight: bring it into view.
        self.browser.scrollToAnchor("man")

    def show_man_page_failed(self, name: str, message: str) -> None:
        if name == self.parameter:
            self.man_button.setEnabled(True)
            self.man_status.setText(f"Could not read the man page: {message}")
            self.man_status.show()

    def _ask_man_page(self) -> None:
        if self.parameter is None:
            return
        if self.parameter in self.man_pages:
            self.show_man_page(self.parameter, self.man_pages[self.parameter])
            return
        self.man_button.setEnabled(False)
        self.man_status.setText("Reading the man page…")
        self.man_status.show()
        self.man_page_requested.emit(self.parameter)

    # -- the explanation as HTML --------------------------------------------------------------
    def _html(self, facts: Explanation) -> str:
        color, background = STATUS_STYLES.get(facts.status, STATUS_STYLES["unknown"])
        status_words = {
            "current": "current",
            "deprecated": "deprecated",
            "removed": f"removed in {facts.removed_in}" if facts.removed_in else "removed",
            "unknown": "unknown",
        }[facts.status]
        parts = [
            f"<h2>{html.escape(facts.name)}</h2>",
            f"<p><span style='color:{color}; background:{background};'>&nbsp;{status_words}"
            f"&nbsp;</span> <span class='muted'>on Samba {html.escape(facts.samba_version)}"
            "</span></p>",
        ]
        rows = []
        if facts.synonym_of:
            rows.append(
                (
                    "Written as",
                    f"{html.escape(facts.asked)} — a synonym"
                    + (", with the opposite meaning" if facts.inverse else ""),
                )
            )
        if facts.type:
            rows.append(("Type", html.escape(facts.type)))
        if facts.scope:
            rows.append(
                (
                    "Where",
                    "[global] only"
                    if facts.scope == "global"
                    else "a share, or [global] as every share's default",
                )
            )
        if facts.default is not None:
            rows.append(("Default", f"<code>{html.escape(facts.default) or '(empty)'}</code>"))
        if facts.values:
            rows.append(("Values", ", ".join(f"<code>{html.escape(v)}</code>" for v in facts.values)))
        if facts.synonyms:
            rows.append(
                (
                    "Synonyms",
                    ", ".join(
                        html.escape(s["name"]) + (" (inverted)" if s["inverse"] else "")
                        for s in facts.synonyms
                    ),
                )
            )
        if facts.replacement:
            rows.append(("Use instead", html.escape(facts.replacement)))
        if rows:
            parts.append(
                "<table>"
                + "".join(f"<tr><td class='muted'>{label}</td><td>{value}</td></tr>" for label, value in rows)
                + "</table>"
            )
        if facts.removal_note:
            parts.append(f"<p>{_text(facts.removal_note)}</p>")
        if facts.suggestions:
            parts.append(
                "<p>Did you mean "
                + ", ".join(f"<b>{html.escape(s)}</b>" for s in facts.suggestions)
                + "?</p>"
            )
        for title, body in (
            ("What it does", facts.summary),
            ("Performance", facts.performance),
            ("When to change it", facts.when_to_change),
        ):
            if body:
                parts.append(f"<h4>{title}</h4><p>{_text(body)}</p>")
        if facts.advice_on_this_version:
            parts.append(f"<h4>On this server</h4><p>{_text(facts.advice_on_this_version)}</p>")
        if facts.classic_advice:
            parts.append("<h4>Classic advice, judged today</h4>")
            for item in facts.classic_advice:
                verdict_color, verdict = VERDICT_STYLES.get(item["verdict"], ("#57606a", item["verdict"]))
                parts.append(
                    f"<p><b style='color:{verdict_color}'>{html.escape(verdict)}</b>: "
                    f"“{_text(item['claim'])}” <span class='muted'>({html.escape(item['source'])})"
                    f"</span><br>{_text(item['today'])}</p>"
                )
        if facts.history or facts.later_history:
            parts.append("<h4>History</h4><ul style='margin-top:0'>")
            parts += [f"<li>{html.escape(h['version'])}: {_text(h['change'])}</li>" for h in facts.history]
            parts += [
                f"<li class='muted'>{html.escape(h['version'])} (newer than this server): "
                f"{_text(h['change'])}</li>"
                for h in facts.later_history
            ]
            parts.append("</ul>")
        if facts.sources:
            parts.append(
                "<p class='muted' style='font-size:small'>Sources: "
                + "; ".join(html.escape(s) for s in facts.sources)
                + "</p>"
            )
        if not facts.explained and facts.status != "unknown":
            parts.append("<p class='muted'>The man page entry (button below) says more.</p>")
        return "".join(parts)
