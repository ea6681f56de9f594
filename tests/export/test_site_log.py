"""`runbook merge-logs`: two pods' signed completion logs merged into one site
log, verified by our verify-log (every pod inside re-verified) and by the real
`ssh-keygen -Y verify`; a changed pod, an untrusted pod signer, a host in two
pods and a pod that does not verify are each named."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from runbook.cli.cmd_signed_log import add_merge_arguments, cli_merge_logs
from runbook.export import export_run
from runbook.export.exporter import write_atomic
from runbook.export.signing_keys import load_signer
from runbook.export.verify import verify_log
from runbook.store.canonical import canonical_bytes, sha256_hex

from .conftest import allowed_signers, keygen_verify
from .snapshot_builder import SnapshotBuilder


def pod_snapshot(hosts: list[str], failing: str | None = None, run_id: str = "run-pod") -> dict:
    b = SnapshotBuilder()
    b.run["run_id"] = b.events[0]["run_id"] = run_id  # the RunStarted event names it too
    for h in hosts:
        b.host(h, gpus=8)
    b.step("ofed-version", "software", "OFED version", "ofed_info -s")
    b.step("link-type-ib", "nic-mode", "ConnectX ports in InfiniBand mode", "mlxconfig q")
    for h in hosts:
        b.result("ofed-version", h, stdout="MLNX_OFED_LINUX-23.10-1.1.9.0:\n")
        if h == failing:
            b.result(
                "link-type-ib",
                h,
                "fail",
                stdout="LINK_TYPE_P1 ETH(2)\n",
                reason="expected IB(1), found ETH(2)",
            )
        else:
            b.result("link-type-ib", h, stdout="LINK_TYPE_P1 IB(1)\n")
    return b.finish("fail" if failing else "pass").build()


@pytest.fixture
def pods(tmp_path: Path, keys: dict) -> dict:
    """Pod a (gpu01-04, all pass) signed by alice, pod b (gpu05-08, gpu07 fails) by bob."""
    a = export_run(
        pod_snapshot(["gpu01", "gpu02", "gpu03", "gpu04"], run_id="run-a"),
        tmp_path / "pod-a.json",
        sign_key=str(keys["ed25519"]),
        identity="alice@example.com",
    )
    b = export_run(
        pod_snapshot(["gpu05", "gpu06", "gpu07", "gpu08"], failing="gpu07", run_id="run-b"),
        tmp_path / "pod-b.json",
        sign_key=str(keys["ecdsa"]),
        identity="bob@example.com",
    )
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"{a.allowed_signers_line}\n{b.allowed_signers_line}\n")
    return {"a": a.log, "b": b.log, "signers": signers}


def merge(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="runbook merge-logs")
    add_merge_arguments(parser)
    return cli_merge_logs(parser.parse_args(list(argv)))


def merge_as_carol(pods: dict, keys: dict, site: Path) -> int:
    """Both pods merged into SITE, signed by carol's rsa key."""
    return merge(
        str(pods["a"]), str(pods["b"]), "-o", str(site), "--sign-key", str(keys["rsa"]),
        "--identity", "carol@example.com",
    )  # fmt: skip


def site_signers(tmp_path: Path, pods: dict, keys: dict) -> Path:
    """The pods' signers and carol, who merges."""
    path = tmp_path / "site_signers"
    allowed_signers(path, "carol@example.com", Path(f"{keys['rsa']}.pub"))
    path.write_text(path.read_text() + pods["signers"].read_text())
    return path


def test_merged_site_log_verifies_here_and_with_ssh_keygen(
    tmp_path: Path, pods: dict, keys: dict, capsys
) -> None:
    site = tmp_path / "site.json"
    code = merge(
        str(pods["a"]),
        str(pods["b"]),
        "-o",
        str(site),
        "--sign-key",
        str(keys["rsa"]),
        "--identity",
        "carol@example.com",
        "--allowed-signers",
        str(pods["signers"]),
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "status     fail: 8 hosts in 2 pods" in out
    doc = json.loads(site.read_bytes())
    assert doc["summary"]["step_status"] == {"ofed-version": "pass", "link-type-ib": "fail"}
    assert doc["summary"]["step_status_by_pod"]["link-type-ib"] == {"pod-a": "pass", "pod-b": "fail"}
    assert [p["hosts"] for p in doc["summary"]["pods"]] == ["gpu[01-04]", "gpu[05-08]"]
    # every pod log is embedded byte for byte
    for pod, path in zip(doc["pods"], (pods["a"], pods["b"])):
        assert canonical_bytes(pod["log"]) == path.read_bytes()

    signers = site_signers(tmp_path, pods, keys)
    report = verify_log(site, allowed_signers=signers)
    assert report.ok and report.trusted, report.problems
    assert any(line.startswith("pods[1] (pod-b): signature: valid SSHSIG") for line in report.proven)
    # the stock tool checks the site log's own signature
    res = keygen_verify(site, Path(f"{site}.sig"), signers, "carol@example.com")
    assert res.returncode == 0, res.stderr
    # the printed lines are a working allowed_signers file
    assert "echo " in out and ">> allowed_signers" in out


def test_a_pod_signer_the_verifier_does_not_list_is_named(tmp_path: Path, pods: dict, keys: dict) -> None:
    site = tmp_path / "site.json"
    assert merge_as_carol(pods, keys, site) == 0
    carol_and_alice = tmp_path / "partial"
    allowed_signers(carol_and_alice, "carol@example.com", Path(f"{keys['rsa']}.pub"))
    alice = pods["signers"].read_text().splitlines()[0]
    carol_and_alice.write_text(carol_and_alice.read_text() + alice + "\n")
    report = verify_log(site, allowed_signers=carol_and_alice)
    assert not report.ok and report.exit_code == 1
    assert len(report.problems) == 1
    assert report.problems[0].startswith("pods[1] (pod-b): signature: key ")
    assert "is not allowed in allowed_signers for identity 'bob@example.com'" in report.problems[0]
    # without any allowed_signers the site log is intact but nobody is trusted: exit 5, as for one log
    loose = verify_log(site)
    assert loose.ok and not loose.trusted and loose.exit_code == 5


def _resign(site: Path, doc: dict, key: Path) -> None:
    """Write an edited site log and sign it again with the merger's own key: the
    outer signature is then valid, so only the pod checks can catch the edit."""
    raw = canonical_bytes(doc)
    write_atomic(site, raw)
    write_atomic(Path(f"{site}.sig"), load_signer(str(key)).sign(raw))


def test_an_edited_pod_verdict_is_named_even_when_the_site_is_signed_again(
    tmp_path: Path, pods: dict, keys: dict
) -> None:
    site = tmp_path / "site.json"
    assert merge_as_carol(pods, keys, site) == 0
    doc = json.loads(site.read_bytes())
    b = doc["pods"][1]["log"]
    b["summary"]["verdicts"]["link-type-ib"]["gpu07"]["status"] = "pass"  # hide the failure
    doc["pods"][1]["log_sha256"] = sha256_hex(canonical_bytes(b))
    _resign(site, doc, keys["rsa"])
    report = verify_log(site, allowed_signers=site_signers(tmp_path, pods, keys))
    assert not report.ok
    assert report.first_broken.startswith("pods[1] (pod-b): "), report.problems
    assert any("signature" in p and "pods[1]" in p for p in report.problems)


def test_an_edited_site_summary_is_named(tmp_path: Path, pods: dict, keys: dict) -> None:
    site = tmp_path / "site.json"
    assert merge_as_carol(pods, keys, site) == 0
    doc = json.loads(site.read_bytes())
    doc["summary"]["step_status"]["link-type-ib"] = "pass"
    _resign(site, doc, keys["rsa"])
    report = verify_log(site, allowed_signers=site_signers(tmp_path, pods, keys))
    assert report.problems == ["summary: does not follow from the pod logs' own summaries (it was edited)"]


def test_a_host_in_two_pods_is_refused_and_nothing_is_written(tmp_path: Path, keys: dict, capsys) -> None:
    a = export_run(
        pod_snapshot(["gpu01", "gpu02"]), tmp_path / "a.json", sign_key=str(keys["ed25519"]), identity="alice"
    )
    b = export_run(
        pod_snapshot(["gpu02", "gpu03"]), tmp_path / "b.json", sign_key=str(keys["ed25519"]), identity="alice"
    )
    site = tmp_path / "site.json"
    assert merge(str(a.log), str(b.log), "-o", str(site), "--sign-key", str(keys["rsa"])) == 1
    assert "host gpu02 is in pod a and pod b" in capsys.readouterr().err
    assert not site.exists()


def test_a_pod_that_does_not_verify_is_refused(tmp_path: Path, pods: dict, keys: dict, capsys) -> None:
    raw = pods["b"].read_bytes().replace(b"expected IB(1), found ETH(2)", b"expected IB(1), found IB(1)!")
    pods["b"].write_bytes(raw)
    site = tmp_path / "site.json"
    assert merge(str(pods["a"]), str(pods["b"]), "-o", str(site), "--sign-key", str(keys["rsa"])) == 1
    err = capsys.readouterr().err
    assert f"{pods['b']}: does not verify" in err
    assert not site.exists()


def test_a_pod_signed_by_someone_else_is_refused_with_allowed_signers(
    tmp_path: Path, pods: dict, keys: dict, capsys
) -> None:
    only_alice = tmp_path / "only_alice"
    only_alice.write_text(pods["signers"].read_text().splitlines()[0] + "\n")
    code = merge(
        str(pods["a"]), str(pods["b"]), "-o", str(tmp_path / "s.json"), "--sign-key", str(keys["rsa"]),
        "--allowed-signers", str(only_alice),
    )  # fmt: skip
    assert code == 1
    assert "pod-b.json: does not verify: signature: key " in capsys.readouterr().err


def test_usage_errors_exit_2(tmp_path: Path, pods: dict, keys: dict, capsys) -> None:
    assert (
        merge(str(tmp_path / "missing.json"), "-o", str(tmp_path / "s.json"), "--sign-key", str(keys["rsa"]))
        == 2
    )
    assert "missing.json: no such log file" in capsys.readouterr().err
    same = tmp_path / "again"
    same.mkdir()
    (same / "pod-a.json").write_bytes(pods["a"].read_bytes())
    (same / "pod-a.json.sig").write_bytes(Path(f"{pods['a']}.sig").read_bytes())
    code = merge(
        str(pods["a"]),
        str(same / "pod-a.json"),
        "-o",
        str(tmp_path / "s.json"),
        "--sign-key",
        str(keys["rsa"]),
    )
    assert code == 1
    assert "both named 'pod-a'" in capsys.readouterr().err


def test_the_main_cli_wires_merge_logs_and_verify_log(tmp_path: Path, pods: dict, keys: dict) -> None:
    import subprocess
    import sys

    site = tmp_path / "site.json"
    cmd = [sys.executable, "-m", "runbook"]
    made = subprocess.run(
        [*cmd, "merge-logs", str(pods["a"]), str(pods["b"]), "-o", str(site), "--sign-key", str(keys["rsa"]),
         "--identity", "carol@example.com"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    checked = subprocess.run(
        [
            *cmd,
            "verify-log",
            str(site),
            "--allowed-signers",
            str(site_signers(tmp_path, pods, keys)),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["trusted"] is True
