"""Item 7 of issue 16: verify-log never prints OK unless the signer is one the
customer trusts, and the report tells the customer to get the signer's key from
the signer, not from the log."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from runbook.cli.cmd_signed_log import add_verify_arguments, cli_verify_log
from runbook.errors import EXIT_FAIL, EXIT_OK, EXIT_UNTRUSTED
from runbook.export import export_run, verify_log

from ..export.conftest import allowed_signers, keys  # noqa: F401  (the session fixture)
from ..export.snapshot_builder import small_snapshot


def _verify(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="runbook verify-log")
    add_verify_arguments(parser)
    return cli_verify_log(parser.parse_args(list(argv)))


def _export(tmp_path: Path, key: Path, name: str):
    return export_run(
        small_snapshot(), tmp_path / name / "log.json", sign_key=str(key), identity="alice@example.com"
    )


def test_intact_log_without_a_trusted_signer_is_not_ok(tmp_path: Path, keys, capsys) -> None:
    result = _export(tmp_path, keys["ed25519"], "real")
    assert _verify(str(result.log)) == EXIT_UNTRUSTED == 5
    out = capsys.readouterr().out
    verdict = out.splitlines()[1]
    # the verdict is the line's first word; the key's fingerprint after it is
    # random base64 and may spell "OK" anywhere
    assert verdict.startswith("NOT TRUSTED:") and "OK:" not in out
    assert "signature is intact but the signer is not trusted: pass --allowed-signers" in out
    assert _verify(str(result.log), "--json") == 5
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["trusted"] is False


def test_forged_log_resigned_by_any_key_naming_the_signer(tmp_path: Path, keys, capsys) -> None:
    forged = _export(tmp_path, keys["other"], "forged")  # mallory's key, calling itself alice
    assert _verify(str(forged.log)) == EXIT_UNTRUSTED
    assert "OK:" not in capsys.readouterr().out
    signers = allowed_signers(tmp_path / "as", "alice@example.com", Path(f"{keys['ed25519']}.pub"))
    assert _verify(str(forged.log), "--allowed-signers", str(signers)) == EXIT_FAIL
    real = _export(tmp_path, keys["ed25519"], "real")
    assert _verify(str(real.log), "--allowed-signers", str(signers)) == EXIT_OK
    assert capsys.readouterr().out.count("OK: signed by alice@example.com") == 1


def _commands(markdown: str) -> list[str]:
    block = markdown.split("## Signature", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_report_instructions_take_the_key_from_the_signer(tmp_path: Path, keys) -> None:
    result = _export(tmp_path, keys["ed25519"], "real")
    md = result.markdown.read_text()
    html = result.html.read_text()
    key_blob = Path(f"{keys['ed25519']}.pub").read_text().split()[1]
    section = md.split("## Signature", 1)[1]
    assert key_blob not in section and key_blob not in html.split("Signed by", 1)[1]
    assert "obtained from the signer, never from this log" in section
    # the instructions work as written, with signer.pub the signer sent
    work = result.log.parent
    (work / "signer.pub").write_text(Path(f"{keys['ed25519']}.pub").read_text())
    setup, keygen, _ours = _commands(md)
    subprocess.run(["sh", "-c", setup], cwd=work, check=True, timeout=30)
    done = subprocess.run(["sh", "-c", keygen], cwd=work, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Good" in done.stdout + done.stderr
    assert verify_log(result.log, allowed_signers=work / "allowed_signers").trusted
    # the same instructions with a forger's key do not verify the real log
    (work / "signer.pub").write_text(Path(f"{keys['other']}.pub").read_text())
    subprocess.run(["sh", "-c", setup], cwd=work, check=True, timeout=30)
    assert subprocess.run(["sh", "-c", keygen], cwd=work, capture_output=True, timeout=30).returncode != 0
