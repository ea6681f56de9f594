"""export_run: reproducible bytes, speed, refusal of inconsistent store data,
and the contracts it shares with the model and the store."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runbook.definition.model import Step
from runbook.export import ExportError, export_run, verify_log
from runbook.export.completion_log import step_definition_json
from runbook.store.canonical import sha256_hex

from .conftest import allowed_signers, keygen_verify
from .snapshot_builder import SnapshotBuilder, fleet_snapshot, small_snapshot


def _export(snapshot: dict, folder: Path, keys: dict, key: str = "ed25519"):
    return export_run(snapshot, folder / "log.json", sign_key=str(keys[key]), identity="alice@example.com")


def _reversed_dicts(value):
    """The same content with every object's keys inserted in the opposite order."""
    if isinstance(value, dict):
        return {k: _reversed_dicts(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_dicts(v) for v in value]
    return value


def test_exporting_twice_gives_identical_bytes(tmp_path: Path, keys: dict) -> None:
    a = _export(small_snapshot(), tmp_path / "a", keys, "ecdsa")  # ECDSA signatures differ...
    b = _export(_reversed_dicts(small_snapshot()), tmp_path / "b", keys, "ecdsa")
    assert a.log.read_bytes() == b.log.read_bytes()  # ...the log does not
    assert a.markdown.read_bytes() == b.markdown.read_bytes()
    assert a.html.read_bytes() == b.html.read_bytes()
    assert a.log_sha256 == sha256_hex(a.log.read_bytes())
    raw = a.log.read_bytes()
    assert b"\n" not in raw and b'{"canonical_form":"RFC' in raw  # no whitespace, sorted keys


def test_fifty_hosts_ten_steps_export_well_under_a_second(tmp_path: Path, keys: dict) -> None:
    snapshot = fleet_snapshot(50, 10)
    assert len(snapshot["results"]) == 500
    start = time.perf_counter()
    result = _export(snapshot, tmp_path, keys)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"export took {elapsed:.2f} s"
    report = verify_log(result.log)
    assert report.ok, report.problems
    signers = allowed_signers(tmp_path / "as", "alice@example.com", Path(f"{keys['ed25519']}.pub"))
    assert keygen_verify(result.log, result.signature, signers, "alice@example.com").returncode == 0


def test_log_holds_what_the_design_lists(tmp_path: Path, keys: dict) -> None:
    doc = json.loads(_export(small_snapshot(), tmp_path, keys).log.read_bytes())
    assert doc["format"] == "runbook-completion-log" and doc["format_version"] == 1
    assert doc["run"]["site"] == "seed-dc" and doc["run"]["operators"] == ["alice"]
    gpu07 = doc["summary"]["verdicts"]["link-type-ib"]["gpu07"]
    # an apply alone is no pass: pending until verify runs again (as status and the TUI say)
    assert gpu07["status"] == "pending"
    assert doc["summary"]["step_status"] == {
        "ofed-version": "pass",
        "link-type-ib": "pending",
        "nccl-baseline": "unknown",
    }
    assert doc["summary"]["verdicts"]["nccl-baseline"]["gpu03"]["status"] == "waived"
    assert doc["summary"]["changes"][0]["before"] == {"LINK_TYPE_P1": "ETH(2)"}
    assert doc["summary"]["open_pending_actions"][0]["host"] == "gpu07"
    assert doc["journal"]["head"] == doc["journal"]["entries"][-1]["hash"]
    assert doc["signer"]["fingerprint"].startswith("SHA256:")
    assert doc["claims"]["proves"] and doc["claims"]["does_not_prove"]
    assert all(
        set(r) >= {"output_sha256", "command", "exit_status", "attempts", "started"} for r in doc["results"]
    )


def test_step_hash_rule_is_the_models() -> None:
    definition = {
        "id": "x",
        "title": "Ünïcode ✓",
        "when": datetime.date(2024, 11, 29),
        "verify": {"run": "true", "timeout": 30.0},
    }
    step = Step("x", "t", "p", "p", "why", "all", None, definition=definition)
    assert sha256_hex(step_definition_json(definition)) == step.sha256


def test_inconsistent_store_data_is_not_signed(tmp_path: Path, keys: dict) -> None:
    snapshot = small_snapshot()
    snapshot["journal"][3]["event"]["time"] += 1  # the store's chain no longer holds
    with pytest.raises(ExportError, match=r"journal.entries\[3\] .*hash does not match"):
        _export(snapshot, tmp_path, keys)
    assert not list(tmp_path.iterdir())


def test_missing_section_is_a_clear_error(tmp_path: Path, keys: dict) -> None:
    snapshot = small_snapshot()
    del snapshot["journal"]
    with pytest.raises(ExportError, match="no 'journal' section"):
        _export(snapshot, tmp_path, keys)


def test_store_output_hash_mismatch_is_a_warning(tmp_path: Path, keys: dict) -> None:
    snapshot = small_snapshot()
    snapshot["results"][0]["output_sha256"] = "0" * 64
    result = _export(snapshot, tmp_path, keys)
    assert result.warnings == [
        "results[0] (step ofed-version, host gpu01): the store's "
        "output_sha256 is not the SHA-256 of its stdout"
    ]


def test_undecodable_text_and_big_integers_still_verify(tmp_path: Path, keys: dict) -> None:
    b = SnapshotBuilder()
    b.host("gpu01", port_guid=0x248A0703009C1234, ratio=0.1)
    b.step("raw", "p")
    b.result("raw", "gpu01", stdout="caf\ufffd \ufffd\n")  # the journal holds valid text
    b.decide("note", "raw", "", "caf\ufffd")
    snapshot = b.finish().build()
    # ...while the store's own copies kept the undecodable bytes (surrogateescape)
    snapshot["results"][0]["stdout"] = b"caf\xe9 \xff\n".decode("utf-8", "surrogateescape")
    snapshot["decisions"][0]["reason"] = b"caf\xe9".decode("utf-8", "surrogateescape")
    result = _export(snapshot, tmp_path, keys)
    doc = json.loads(result.log.read_bytes())
    assert doc["results"][0]["stdout"] == "caf\ufffd \ufffd\n"
    assert doc["decisions"][0]["reason"] == "caf\ufffd"
    assert doc["inventory"]["hosts"]["gpu01"]["port_guid"] == 0x248A0703009C1234
    assert verify_log(result.log).ok


def test_result_that_disagrees_with_its_event_is_not_signed(tmp_path: Path, keys: dict) -> None:
    snapshot = small_snapshot()
    snapshot["results"][4]["stdout"] = "something else\n"
    with pytest.raises(ExportError, match=r"results\[4\] .*stdout does not match journal"):
        _export(snapshot, tmp_path, keys)


def test_export_never_imports_textual() -> None:
    code = (
        "import sys, runbook.export, runbook.cli.cmd_signed_log; "
        "sys.exit(1 if 'textual' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
