"""The parsers' and design comparisons' index (runbook/workspace/lint_cache.py
load_indexes, parsers.use_index, criteria/design.py use_index): once a clean lint of
the same source has discovered every module, loading the steps imports no parser and
no comparator module, and judging imports only the one a step names. The index is a
hint: a name it gets wrong is found by the full discovery, never mistaken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook.criteria import design
from runbook.workspace import lint_cache

REPO = Path(__file__).resolve().parents[2]

_PROBE = r"""
import json, sys
from runbook.workspace.project import load_project
load_project(sys.argv[1], sys.argv[2], state=sys.argv[3])
loaded = lambda: sorted(m for m in sys.modules if m.startswith(("runbook.criteria.designs.", "runbook.parsers.")))
after_load = loaded()
from runbook.criteria.design import get, scope
comparator = get("sm-master-standby")
print(json.dumps({"after_load": after_load, "after_get": loaded(), "scope": scope("sm-master-standby"),
                  "name": comparator.name, "func": comparator.func.__qualname__}))
"""


def _probe(state: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(REPO / "steps"), str(REPO / "inventory"), str(state)],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_with_the_index_loading_imports_no_parser_or_comparator_module(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    first = _probe(state)  # lints: discovers every module, then remembers where each name is
    assert "runbook.criteria.designs.gpu_health" in first["after_load"]
    second = _probe(state)
    assert second["after_load"] == ["runbook.parsers.base"]
    assert [m for m in second["after_get"] if ".designs." in m] == ["runbook.criteria.designs.sm"]
    assert second["scope"] == first["scope"] == "fleet"
    assert second["name"] == "sm-master-standby" and second["func"] == first["func"]


@pytest.fixture
def hint():
    yield design.use_index
    design.use_index({})


def test_a_wrong_hint_is_never_mistaken(hint, monkeypatch):
    full = design.comparators()["dcgm-diag"]
    monkeypatch.setattr(design, "_discovered", [])  # as in a fresh process
    hint({"dcgm-diag": ("sm", "host"), "sm-master-standby": ("sm", "host")})
    assert design.get("dcgm-diag") is full  # not in that module: the full discovery finds it
    assert design.get("sm-master-standby") is design.comparators()["sm-master-standby"]  # scope differs
    hint({"dcgm-diag": ("no_such_module", "host")})
    assert design.get("dcgm-diag") is full
    assert design.get("no-such-comparison") is None and not design.known("no-such-comparison")


def test_a_malformed_index_is_not_used(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    good_parsers, good_designs = {"ofed_info": "ofed_info"}, {"dcgm-diag": ("gpu_health", "host")}
    lint_cache.remember_indexes(state, (good_parsers, good_designs))
    assert lint_cache.load_indexes(state) == (good_parsers, good_designs)
    path = lint_cache._index_path(state)
    for designs in ({"x": ["gpu_health", "pod"]}, {"x": ["../evil", "host"]}, {"x": "gpu_health"}, ["x"]):
        path.write_text(json.dumps({"parsers": good_parsers, "designs": designs}))
        assert lint_cache.load_indexes(state) == (good_parsers, None), designs
    path.write_text(json.dumps({"parsers": {"ofed_info": "os.system"}, "designs": {"x": ["sm", "fleet"]}}))
    assert lint_cache.load_indexes(state) == (None, {"x": ("sm", "fleet")})
