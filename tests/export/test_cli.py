"""`runbook export` / `runbook verify-log` as the main CLI wires them: argparse,
stdout/stderr, exit codes 0 / 1 / 2, no traceback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from runbook.cli.cmd_signed_log import add_export_arguments, add_verify_arguments, cli_export, cli_verify_log
from runbook.store.canonical import canonical_bytes

from .conftest import allowed_signers
from .snapshot_builder import small_snapshot


def _export_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="runbook export")
    add_export_arguments(parser)
    return parser.parse_args(list(argv))


def _verify_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="runbook verify-log")
    add_verify_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def signed(tmp_path: Path, keys: dict, capsys: pytest.CaptureFixture) -> tuple[Path, Path]:
    snap = tmp_path / "snapshot.json"
    snap.write_text(json.dumps(small_snapshot()))
    log = tmp_path / "out" / "log.json"
    code = cli_export(
        _export_args(
            "--snapshot",
            str(snap),
            "--sign-key",
            str(keys["rsa"]),
            "-o",
            str(log),
            "--identity",
            "carol@example.com",
        )
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "ssh-keygen -Y verify -f allowed_signers -I carol@example.com -n runbook "
        "-s log.json.sig < log.json" in out
    )
    signers = allowed_signers(tmp_path / "as", "carol@example.com", Path(f"{keys['rsa']}.pub"))
    return log, signers


def test_export_writes_the_four_files(signed: tuple[Path, Path]) -> None:
    log, _ = signed
    assert log.name == "log.json"
    for name in ("log.json", "log.json.sig", "log.md", "log.html"):
        assert (log.parent / name).stat().st_size > 0
    assert not Path(f"{log}.md").exists() and not Path(f"{log}.html").exists()


def test_export_uses_the_wired_store_loader(
    tmp_path: Path, keys: dict, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = cli_export(
        _export_args("--sign-key", str(keys["ed25519"])), load_snapshot=lambda args: small_snapshot()
    )
    assert code == 0
    assert (tmp_path / "completion-log-run-20241129-0001.json.sig").exists()
    assert "identity alice@example.com" in capsys.readouterr().out  # the key's comment


def test_verify_ok_exits_0(signed: tuple[Path, Path], capsys: pytest.CaptureFixture) -> None:
    log, signers = signed
    assert cli_verify_log(_verify_args(str(log), "--allowed-signers", str(signers))) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"runbook verify-log {log}\nOK: signed by carol@example.com SHA256:")
    assert "Proven:" in out and "Not proven:" in out


def test_verify_mismatch_exits_1_naming_the_first_broken(
    signed: tuple[Path, Path], capsys: pytest.CaptureFixture
) -> None:
    log, signers = signed
    doc = json.loads(log.read_bytes())
    doc["results"][7]["stdout"] += "x"
    log.write_bytes(canonical_bytes(doc))
    code = cli_verify_log(_verify_args(str(log), "--allowed-signers", str(signers), "--json"))
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["ok"] is False
    assert report["first_broken"] == (
        "results[7] (step link-type-ib, host gpu07): output_sha256 does not match its output"
    )


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--signature", "/nonexistent.sig"], "no such signature file"),
        (["--allowed-signers", "/nonexistent"], "no such allowed_signers file"),
    ],
)
def test_verify_usage_errors_exit_2(
    signed: tuple[Path, Path], capsys: pytest.CaptureFixture, extra: list[str], message: str
) -> None:
    log, _ = signed
    assert cli_verify_log(_verify_args(str(log), *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_verify_missing_log_or_bad_allowed_signers_exit_2(
    signed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    log, _ = signed
    assert cli_verify_log(_verify_args(str(tmp_path / "nope.json"))) == 2
    bad = tmp_path / "bad_signers"
    bad.write_text("# nothing here\n")
    assert cli_verify_log(_verify_args(str(log), "--allowed-signers", str(bad))) == 2
    err = capsys.readouterr().err
    assert "no such log file" in err and f"{bad}: " in err


def test_export_errors_exit_2(
    tmp_path: Path, keys: dict, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    assert cli_export(_export_args("-o", str(tmp_path / "l.json"))) == 2  # no snapshot source
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(small_snapshot()))
    assert cli_export(_export_args("--snapshot", str(snap), "-o", str(tmp_path / "l.json"))) == 2
    assert (
        cli_export(
            _export_args(
                "--snapshot", str(snap), "--sign-key", str(keys["ed25519"]), "--identity", "two words"
            )
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "pass --snapshot FILE" in err and "no signing key" in err and "no spaces" in err
    assert "Traceback" not in err and not (tmp_path / "l.json").exists()
