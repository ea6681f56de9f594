"""The state a writing store feeds is the state a replay of its journal gives:
events the journal holds exactly are fed as they are, the others (outputs
moved to blobs or cleaned, values sanitized) from their journal form."""

from __future__ import annotations

from runbook.run.events import HostFinished, HostStarted, StepFinished, StepStarted
from runbook.store import Store

from .helpers import new_store


def _picture(store: Store) -> dict:
    st = store.state
    return {
        "outcomes": {k: vars(o) for k, o in st.outcomes.items()},
        "targets": st.step_targets,
        "hashes": st.step_hashes,
    }


def test_the_fed_state_is_the_replayed_state(tmp_path):
    with new_store(tmp_path) as store:
        store.append_many(
            [
                StepStarted("ofed", "verify", ("gpu01", "gpu02", "gpu03"), "ab" * 32),
                HostStarted("ofed", "verify", "gpu01", "ofed_info -s"),
                # a lone surrogate has no JSON form: the journal keeps the cleaned text
                HostStarted("ofed", "verify", "gpu02", "ofed_info -s"),
                HostStarted("ofed", "verify", "gpu03", "ofed_info -s # \udcff"),
                HostFinished("ofed", "verify", "gpu01", "pass", "", "ofed_info -s", 0, "x" * 5000, ""),
            ]
        )
        store.append_many(
            [
                HostFinished("ofed", "verify", "gpu02", "fail", "old", "ofed_info -s", 0, "5.8\n", ""),
                StepFinished("ofed", "verify", "fail", {"pass": 1, "fail": 1}, failing="gpu02"),
            ]
        )
        live = _picture(store)
        assert live["outcomes"][("ofed", "gpu03")]["command"] == "ofed_info -s # \ufffd"
    with Store.open(tmp_path) as again:
        replayed = _picture(again)
        # still running when the writer closed: a reopen says interrupted (store/resume.py)
        running = replayed["outcomes"][("ofed", "gpu03")]
        assert running.pop("status").value == "interrupted" and running.pop("reason")
        del live["outcomes"][("ofed", "gpu03")]["status"], live["outcomes"][("ofed", "gpu03")]["reason"]
        assert replayed == live
