"""`runbook run --json` / `runbook status --json` write the summary with orjson
(runbook/cli/summary_json.py): the same text as json.dumps(doc, indent=2), byte for
byte, on what a summary holds."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from runbook.cli.summary_json import summary_json
from runbook.run.state import RunState
from runbook.run.summary import run_summary
from runbook.workspace.project import load_project

REPO = Path(__file__).resolve().parents[2]

# what a summary holds (run/summary.py): no floats
leaves = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_the_text_is_the_standard_librarys(doc):
    assert summary_json(doc) == json.dumps(doc, indent=2)


def test_escapes_past_ascii_and_del_as_the_standard_library_does():
    doc = {"reason": "fan 1 → 0 rpm … \x7f \U0001f600 \x00\t\n", "ok": ["é", 1, None, True]}
    assert summary_json(doc) == json.dumps(doc, indent=2)
    assert "\\u2192" in summary_json(doc) and "\\ud83d\\ude00" in summary_json(doc)


def test_what_orjson_refuses_is_written_by_the_standard_library():
    doc = {"big": 2**70, "key": {1: "an int key"}}
    assert summary_json(doc) == json.dumps(doc, indent=2)


def test_a_real_summary():
    project = load_project(REPO / "steps", REPO / "inventory", check=False)
    state = RunState()
    doc = run_summary(state, project.runbook.steps, project.inventory, with_exit_code=True)
    doc["steps"][0]["hosts"][next(iter(doc["steps"][0]["hosts"]))]["reason"] = "naïve “quoted” reason"
    assert summary_json(doc) == json.dumps(doc, indent=2)
