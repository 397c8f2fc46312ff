"""The wizard measuring with many small files: chosen when the changes it can make are
about metadata, and carried through baseline, change, measurement and verdict on the
real test bed (real sshd, real smbd, SambaTune's SMB client from this computer)."""

from __future__ import annotations

from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from sambatune.bench.small_files import DIRECTORY_PREFIX, OPERATION_NAMES
from sambatune.errors import InvalidInput
from sambatune.remote.transport import Transport
from sambatune.wizard.machine import TuningWizard
from sambatune.wizard.measure import AUTO, COPY, FILES, MeasureSpec, format_mean
from sambatune.wizard.store import WizardStore
from screenshots import Screenshot
from testbed.smbd import SmbServer


def _finding(rule_id: str, change: bool = True) -> dict[str, Any]:
    return {"id": rule_id, "change": {"kind": "smb.conf"} if change else None}


def test_auto_takes_small_files_when_most_changes_are_about_metadata() -> None:
    spec = MeasureSpec(share="data", test=AUTO)
    metadata = [_finding("sync-always"), _finding("large-directories-case"), _finding("log-level-high")]
    assert spec.chosen_for(metadata).test == FILES
    throughput = [
        _finding("sync-always"),
        _finding("log-level-high"),
        _finding("socket-options-fixed-buffers"),
    ]
    assert spec.chosen_for(throughput).test == COPY
    # Findings that change nothing (what to measure next) do not count.
    assert (
        spec.chosen_for([_finding("sync-always"), _finding("measure-throughput", change=False)]).test == FILES
    )
    assert spec.chosen_for([]).test == COPY
    # A test the admin chose stays.
    assert MeasureSpec(share="data", test=COPY).chosen_for(metadata).test == COPY


def test_the_spec_is_stored_with_its_test_and_old_records_read_as_copies() -> None:
    spec = MeasureSpec(share="data", test=FILES, files=300, file_size=1024)
    assert MeasureSpec.from_json(spec.to_json()) == spec
    old = {"test": "smb", "share": "data", "size": 1 << 20, "runs": 3, "warmup": 1, "operations": ["put"]}
    assert MeasureSpec.from_json(old).test == COPY
    assert "300 files of 1 KiB" in spec.describe()
    with pytest.raises(InvalidInput, match="between 1 and 100,000"):
        MeasureSpec(share="data", test=FILES, files=0)
    with pytest.raises(InvalidInput, match="measures with"):
        MeasureSpec(share="data", test="fast")


def test_means_are_formatted_by_what_the_series_counts() -> None:
    assert format_mean("create", 1234.5).endswith("ops/s")
    assert format_mean("get", 2.5e9).endswith("GB/s")
    assert format_mean("put", None) == "–"


def test_a_metadata_change_measured_with_small_files_end_to_end(
    troubled_smbd: SmbServer, ssh: Transport
) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    spec = MeasureSpec(share=troubled_smbd.share, test=FILES, files=40, runs=2, warmup=0)
    wizard = TuningWizard.start(WizardStore(), ssh, spec, config_path=str(config))
    wizard.run_survey(ssh)
    wizard.find_problems(ssh)

    baseline = wizard.measure_baseline(ssh)
    assert baseline.test == "small-files"
    assert set(baseline.series) == set(OPERATION_NAMES)
    assert all(len(s.counted) == 2 for s in baseline.series.values())
    assert wizard.measure_spec.test == FILES

    index = next(i for i, f in enumerate(wizard.findings) if f["id"] == "sync-always")
    wizard.choose(ssh, index)
    applied = wizard.apply(ssh)
    assert applied.data["ok"] is True, applied.data["message"]
    after = wizard.measure_again(ssh)
    assert after.test == "small-files" and set(after.series) == set(OPERATION_NAMES)
    verdict = wizard.compare()
    assert {c.series for c in verdict.comparisons} == set(OPERATION_NAMES)
    assert all(c.comparison.p_value is not None for c in verdict.comparisons)

    wizard.decide(ssh, keep=False)
    assert config.read_bytes() == original
    report = wizard.report_html()
    assert "ops/s" in report and "files of 4 KiB" in report
    # The runs chart counts operations in its own unit, never as a byte rate.
    chart = report[report.index("Counted runs of") :]
    chart = chart[: chart.index("</svg>")]
    assert "operations per second" in chart and "ops/s" in chart and "B/s" not in chart
    # Every measurement removed its files from the share.
    assert not [p for p in troubled_smbd.share_path.iterdir() if p.name.startswith(DIRECTORY_PREFIX)]


def test_the_start_page_offers_the_test_and_only_its_own_size(qtbot: QtBot) -> None:
    from sambatune.ui.wizard.views import StartView

    view = StartView()
    qtbot.addWidget(view)
    view.set_shares(["bench"])
    assert view.test_kind.currentData() == AUTO and view.spec().test == AUTO
    view.test_kind.setCurrentIndex(view.test_kind.findData(FILES))
    view.file_count.setValue(500)
    assert not view.file_size.isEnabled() and view.file_count.isEnabled()
    spec = view.spec()
    assert (spec.test, spec.files) == (FILES, 500)
    view.test_kind.setCurrentIndex(view.test_kind.findData(COPY))
    assert view.file_size.isEnabled() and not view.file_count.isEnabled()


def test_the_small_file_verdict_counts_operations_three_plots_to_a_row(
    qtbot: QtBot, screenshot: Screenshot
) -> None:
    """Six operations: six plots in two rows at 1180 px, each in ops/s as measured (not
    MB/s scaled by 1e-6), the table with every operation."""
    from sambatune.ui.wizard.views import VerdictView

    view = VerdictView()
    qtbot.addWidget(view)
    view.resize(1180, 700)
    before = {name: [400.0 + i, 410.0 + i, 405.0] for i, name in enumerate(OPERATION_NAMES)}
    after = {name: [v * 1.3 for v in values] for name, values in before.items()}
    rows = [
        {
            "series": name, "label": name, "mean_before": 405.0, "mean_after": 526.5,
            "relative_change": 0.3, "verdict": "better", "sentence": f"{name} is faster.",
        }
        for name in OPERATION_NAMES
    ]  # fmt: skip
    verdict = {"overall": "better", "recommendation": "keep", "explanation": "All faster.", "series": rows}
    view.show_verdict(verdict, "sync always = no", {n: (before[n], after[n]) for n in OPERATION_NAMES})
    view.show()
    qtbot.waitExposed(view)
    plots = [item for item in view.plots.ci.items if hasattr(item, "getAxis")]
    assert len(plots) == len(OPERATION_NAMES)
    for plot in plots:
        axis = plot.getAxis("left")
        assert axis.labelText == "ops/s" and not axis.autoSIPrefix
        low, high = plot.viewRange()[1]
        assert low < 1 < 500 < high  # the values themselves, not a millionth of them
    assert {view.plots.ci.getItem(row, 0) is not None for row in (0, 1)} == {True}
    assert view.table.rowCount() == len(OPERATION_NAMES)
    header = view.table.horizontalHeaderItem(0)
    assert header is not None and header.text() == "Operation"
    screenshot(view, "wizard-verdict-small-files")
