"""The advisor finds its rules by itself: a rule is one function (or one data entry) and
its test, and the order of equally severe findings follows the topics."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import sambatune.advisor.rules as rules_package
from sambatune.advisor.rule_data import load_rule_data
from sambatune.advisor.rules import RULE_IDS, RULES, TOPICS, _all_rules

NEW_RULE_MODULE = """
from sambatune.advisor.rule import rule


@rule("zz-new-rule", "locking")
def new_rule(inputs):
    return iter(())
"""


def _decorated_ids() -> set[str]:
    """Every ``@rule("<id>", ...)`` written in the package's modules."""
    ids = set()
    for path in Path(rules_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "rule":
                        ids.add(decorator.args[0].value)  # type: ignore[attr-defined]
    return ids


def test_every_written_rule_and_data_entry_runs_once() -> None:
    data = load_rule_data()
    expected = _decorated_ids() | set(data.toggles) | set(data.missing_measurements)
    assert sorted(RULE_IDS) == sorted(expected)
    assert len(RULE_IDS) == len(set(RULE_IDS))


def test_findings_of_a_topic_stay_together_in_the_topics_order() -> None:
    ranks = [TOPICS.index(r.topic) for r in RULES]
    assert ranks == sorted(ranks)


def test_a_new_module_with_one_rule_is_all_it_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zz_new_topic_module.py").write_text(NEW_RULE_MODULE)
    monkeypatch.setattr(rules_package, "__path__", [*rules_package.__path__, str(tmp_path)])
    try:
        ids = [r.id for r in _all_rules()]
    finally:
        sys.modules.pop("sambatune.advisor.rules.zz_new_topic_module", None)
    # Last of its topic: after the locking toggles and the locking module's rules.
    assert ids.index("zz-new-rule") == ids.index("directory-leases") + 1
    assert ids.count("zz-new-rule") == 1


def test_a_rule_of_an_unknown_topic_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zz_odd.py").write_text(NEW_RULE_MODULE.replace('"locking"', '"weather"'))
    monkeypatch.setattr(rules_package, "__path__", [*rules_package.__path__, str(tmp_path)])
    try:
        with pytest.raises(ValueError, match="weather"):
            _all_rules()
    finally:
        sys.modules.pop("sambatune.advisor.rules.zz_odd", None)
