"""Round trip and tampering: every change is refused by our verifier (which
names the first broken element) and by ssh-keygen."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from runbook.export import export_run, verify_log
from runbook.export.signing_keys import load_signer
from runbook.store.canonical import canonical_bytes

from .conftest import SSH_KEYGEN, keygen_verify
from .snapshot_builder import small_snapshot


def _index(doc: dict, step: str, host: str, action: str = "verify") -> int:
    return next(
        i
        for i, r in enumerate(doc["results"])
        if (r["step_id"], r["host"], r["action"]) == (step, host, action)
    )


def _entry(doc: dict, event_type: str) -> int:
    return next(i for i, e in enumerate(doc["journal"]["entries"]) if e["event"]["type"] == event_type)


def test_round_trip_ours_and_ssh_keygen(exported) -> None:
    result, signers = exported
    report = verify_log(result.log, allowed_signers=signers)
    assert report.ok and report.exit_code == 0 and report.first_broken is None
    assert report.signer_identity == "alice@example.com"
    assert any("listed in" in p for p in report.proven)
    assert any("really ran" in p for p in report.not_proven)
    assert keygen_verify(result.log, result.signature, signers, "alice@example.com").returncode == 0


def test_without_allowed_signers_trust_rests_on_the_fingerprint(exported) -> None:
    result, _ = exported
    report = verify_log(result.log)
    assert report.ok
    assert report.signer_fingerprint == result.fingerprint
    assert any("only as trusted as the key fingerprint " + result.fingerprint in p for p in report.not_proven)


def _results_vs_journal(field: str, value: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["results"][_index(doc, "link-type-ib", "gpu07")][field] = value

    return change


def _swap_journal(doc: dict) -> None:
    e = doc["journal"]["entries"]
    e[5], e[6] = e[6], e[5]


def _step_hash(doc: dict) -> None:
    doc["steps"][1]["sha256"] = "0" * 64


def _journal_event(doc: dict) -> None:
    doc["journal"]["entries"][_entry(doc, "HostFinished")]["event"]["stdout"] = "forged\n"


def _summary_verdict(doc: dict) -> None:
    doc["summary"]["verdicts"]["link-type-ib"]["gpu07"]["status"] = "pass"


def _waiver_reason(doc: dict) -> None:
    doc["decisions"][0]["reason"] = "nobody said that"


def _truncate(doc: dict) -> None:
    del doc["journal"]["entries"][-3:]


def _truncate_and_repoint_head(doc: dict) -> None:
    entries = doc["journal"]["entries"]
    del entries[-1]
    doc["journal"]["head"] = entries[-1]["hash"]


def _run_site(doc: dict) -> None:
    doc["run"]["site"] = "another-site"


def _host_key(doc: dict) -> None:
    doc["host_keys"]["gpu03"]["fingerprint"] = "SHA256:forged"


def _claims(doc: dict) -> None:
    doc["claims"]["does_not_prove"] = []


# (mutation, expected start of the first broken element)
CASES = {
    "output": (
        _results_vs_journal("stdout", "LINK_TYPE_P1  IB(1)\n"),
        "results[{i}] (step link-type-ib, host gpu07): output_sha256 does not match its output",
    ),
    "output hash": (
        _results_vs_journal("output_sha256", "f" * 64),
        "results[{i}] (step link-type-ib, host gpu07): output_sha256 does not match",
    ),
    "verdict": (
        _results_vs_journal("status", "pass"),
        "results[{i}] (step link-type-ib, host gpu07): status does not match journal",
    ),
    "timestamp": (
        _results_vs_journal("ended", 1732900999.25),
        "results[{i}] (step link-type-ib, host gpu07): ended does not match journal",
    ),
    "exit status": (
        _results_vs_journal("exit_status", 1),
        "results[{i}] (step link-type-ib, host gpu07): exit_status does not match",
    ),
    "event order": (_swap_journal, "journal.entries[5] (seq 6, "),
    "journal event": (_journal_event, "journal.entries["),
    "truncated journal": (_truncate, "journal.head: is not the hash of the last entry"),
    "truncated, head moved": (_truncate_and_repoint_head, "run.ended: no RunFinished"),
    "step hash": (_step_hash, "steps[1] (link-type-ib): sha256 does not match its definition"),
    "summary verdict": (_summary_verdict, "summary.verdicts.link-type-ib.gpu07.status"),
    "waiver": (_waiver_reason, "decisions[0] (waive nccl-baseline): reason does not match"),
    "run": (_run_site, "run.site: does not match journal.entries[0] (RunStarted)"),
    "host key": (_host_key, "host_keys[gpu03]: fingerprint does not match"),
    "claims": (_claims, "signature: does not match the log"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tampering_is_named_by_ours_and_refused_by_ssh_keygen(exported, tmp_path: Path, case: str) -> None:
    result, signers = exported
    mutate, expected = CASES[case]
    doc = json.loads(result.log.read_bytes())
    forged = copy.deepcopy(doc)
    mutate(forged)
    log = tmp_path / "forged" / "log.json"
    log.parent.mkdir()
    log.write_bytes(canonical_bytes(forged))  # a careful forger keeps the canonical form
    shutil.copy(result.signature, f"{log}.sig")
    report = verify_log(log, allowed_signers=signers)
    assert not report.ok and report.exit_code == 1
    i = _index(doc, "link-type-ib", "gpu07")
    assert report.first_broken.startswith(expected.format(i=i)), report.problems
    assert report.problems[-1].startswith("signature: does not match the log")
    assert keygen_verify(log, Path(f"{log}.sig"), signers, "alice@example.com").returncode != 0


def test_every_single_byte_change_is_refused(exported, tmp_path: Path) -> None:
    result, signers = exported
    raw = result.log.read_bytes()
    positions = list(range(0, len(raw), max(1, len(raw) // 60))) + [len(raw) - 1]
    log = tmp_path / "log.json"
    shutil.copy(result.signature, f"{log}.sig")
    for n, pos in enumerate(positions):
        forged = bytearray(raw)
        forged[pos] = ord("0") if raw[pos] != ord("0") else ord("1")
        log.write_bytes(bytes(forged))
        report = verify_log(log, allowed_signers=signers)
        assert not report.ok and report.first_broken, pos
        if n % 10 == 0:  # ssh-keygen on a sample: it costs a process each
            assert keygen_verify(log, Path(f"{log}.sig"), signers, "alice@example.com").returncode != 0


def test_reformatted_log_is_named_as_not_canonical(exported, tmp_path: Path) -> None:
    result, signers = exported
    log = tmp_path / "log.json"
    log.write_text(json.dumps(json.loads(result.log.read_bytes()), indent=1))
    shutil.copy(result.signature, f"{log}.sig")
    report = verify_log(log, allowed_signers=signers)
    assert report.first_broken.startswith("canonical form: byte 1 differs")


def test_swapped_signature_is_refused_by_both(exported, keys: dict, tmp_path: Path) -> None:
    result, signers = exported
    other = export_run(
        small_snapshot(), tmp_path / "other.json", sign_key=str(keys["ed25519"]), identity="alice@example.org"
    )  # another log, same key
    log = tmp_path / "log.json"
    shutil.copy(result.log, log)
    shutil.copy(other.signature, f"{log}.sig")
    report = verify_log(log, allowed_signers=signers)
    assert report.first_broken.startswith("signature: does not match the log")
    assert keygen_verify(log, Path(f"{log}.sig"), signers, "alice@example.com").returncode != 0


def test_resigned_by_another_key_is_refused(exported, keys: dict, tmp_path: Path) -> None:
    """Mallory re-exports the run and signs it with her own key under alice's name."""
    result, signers = exported
    snap = small_snapshot()
    forged = export_run(
        snap, tmp_path / "log.json", sign_key=str(keys["other"]), identity="alice@example.com"
    )
    report = verify_log(forged.log, allowed_signers=signers)
    assert not report.ok
    assert "is not allowed in allowed_signers for identity 'alice@example.com'" in report.first_broken
    assert keygen_verify(forged.log, forged.signature, signers, "alice@example.com").returncode != 0
    # Without allowed_signers it verifies, but under mallory's fingerprint, said plainly.
    bare = verify_log(forged.log)
    assert bare.ok and bare.signer_fingerprint != result.fingerprint


def test_signer_section_must_name_the_signing_key(exported, keys: dict, tmp_path: Path) -> None:
    result, _ = exported
    log = tmp_path / "log.json"
    shutil.copy(result.log, log)
    (tmp_path / "log.json.sig").write_bytes(load_signer(str(keys["other"])).sign(result.log.read_bytes()))
    report = verify_log(log)
    assert report.first_broken.startswith("signer.fingerprint: the log names " + result.fingerprint)


def test_ssh_keygen_signature_on_our_log_verifies_in_ours(exported, keys: dict) -> None:
    result, signers = exported
    result.signature.unlink()
    subprocess.run(
        [SSH_KEYGEN, "-Y", "sign", "-f", str(keys["ed25519"]), "-n", "runbook", str(result.log)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    report = verify_log(result.log, allowed_signers=signers)
    assert report.ok, report.problems
