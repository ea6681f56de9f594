"""`runbook export` and `runbook verify-log` (docs/architecture.md), as functions the
main CLI wires in. Both return the exit code; errors are one message on
stderr, never a traceback.

    runbook export  [--sign-key KEY] [-o FILE] [--identity ID] [--agent SOCK]
    runbook verify-log FILE [--signature FILE.sig] [--allowed-signers FILE] [--identity ID] [--json]
    runbook merge-logs POD.json... -o SITE.json [--sign-key KEY] [--identity ID] [--allowed-signers FILE]

`cli_export` needs the store snapshot: the main CLI passes `load_snapshot`
(a callable taking the parsed args); `--snapshot FILE` reads one saved as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from runbook.errors import EXIT_OK, EXIT_USAGE, RunbookError, UsageError, os_error


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sign-key",
        metavar="KEY",
        default=None,
        help="private key file (ed25519, ecdsa, rsa), its .pub when the key is "
        "in ssh-agent, 'agent' or SHA256:FINGERPRINT for an agent key "
        "(default: the first key in ssh-agent)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="the log file NAME.json; NAME.json.sig, NAME.md and NAME.html are "
        "written beside it (default: completion-log-RUN_ID.json)",
    )
    parser.add_argument(
        "--identity",
        metavar="ID",
        default=None,
        help="signer identity, the principal in allowed_signers "
        "(default: the key's comment, else the run's operator)",
    )
    parser.add_argument(
        "--agent",
        metavar="SOCK",
        dest="agent_path",
        default=None,
        help="ssh-agent socket (default: $SSH_AUTH_SOCK)",
    )
    parser.add_argument(
        "--snapshot",
        metavar="FILE",
        dest="snapshot_file",
        default=None,
        help="export a store snapshot saved as JSON instead of the state store",
    )
    parser.add_argument(
        "--pdf",
        action="store_true",
        help="also print the report to NAME.pdf with a headless Chromium "
        "(RUNBOOK_CHROMIUM names one); without one it says how to get one and "
        "exits 2 after writing the log and reports",
    )


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the completion log (JSON)")
    parser.add_argument(
        "--signature", metavar="FILE.sig", default=None, help="the signature (default: FILE.sig)"
    )
    parser.add_argument(
        "--allowed-signers",
        metavar="FILE",
        default=None,
        help="ssh-keygen allowed_signers file with the signer's public key, "
        "obtained from the signer (never from the log); without it "
        "an intact log exits 5: the signer is not trusted",
    )
    parser.add_argument(
        "--identity",
        metavar="ID",
        default=None,
        help="the principal to look up in allowed_signers (default: the identity the log names)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def add_merge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pods", metavar="POD.json", nargs="+", help="the pods' signed completion logs")
    parser.add_argument("-o", "--output", metavar="SITE.json", required=True, help="the site log to write")
    parser.add_argument("--sign-key", metavar="KEY", default=None, help="as for export")
    parser.add_argument("--identity", metavar="ID", default=None, help="as for export")
    parser.add_argument("--agent", metavar="SOCK", dest="agent_path", default=None, help="as for export")
    parser.add_argument(
        "--allowed-signers",
        metavar="FILE",
        default=None,
        help="refuse a pod log whose signer this allowed_signers file does not list",
    )


def _default_output(snapshot: dict) -> Path:
    run_id = str((snapshot.get("run") or {}).get("run_id") or "run")
    return Path(f"completion-log-{re.sub(r'[^A-Za-z0-9._-]+', '_', run_id)}.json")


def _read_snapshot_file(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such snapshot file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a JSON snapshot ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a snapshot is a JSON object")
    return data


def cli_export(
    args: argparse.Namespace, load_snapshot: Callable[[argparse.Namespace], dict] | None = None
) -> int:
    from ..export.exporter import export_run
    from ..export.report_data import verify_commands

    try:
        if getattr(args, "snapshot_file", None):
            snapshot = _read_snapshot_file(args.snapshot_file)
        elif load_snapshot is not None:
            snapshot = load_snapshot(args)
        else:
            raise UsageError("no run to export: no state store is wired in; pass --snapshot FILE")
        out = Path(args.output) if args.output else _default_output(snapshot)
        result = export_run(
            snapshot,
            out,
            sign_key=args.sign_key,
            identity=args.identity,
            agent_path=getattr(args, "agent_path", None),
        )
    except RunbookError as exc:
        print(f"runbook export: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # -o into a read-only directory, a full disk: nothing was written
        where = f"{args.output}: " if args.output else ""
        print(f"runbook export: cannot write the log {where}{os_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    for warning in result.warnings:
        print(f"runbook export: warning: {warning}", file=sys.stderr)
    print(f"log        {result.log}  (SHA-256 {result.log_sha256})")
    print(
        f"signature  {result.signature}  ({result.key_type} {result.fingerprint}, identity {result.identity})"
    )
    print(f"report     {result.markdown}  {result.html}")
    print("verify with:")
    signer = {"identity": result.identity, "allowed_signers": result.allowed_signers_line}
    for line in verify_commands(signer, result.log.name):
        print(f"  {line}")
    if getattr(args, "pdf", False):
        from ..export.pdf import PdfError, print_pdf

        try:
            print(f"pdf        {print_pdf(result.html, result.html.with_suffix('.pdf'))}")
        except PdfError as exc:
            print(f"runbook export: {exc}", file=sys.stderr)
            return exc.exit_code
    return EXIT_OK


def cli_verify_log(args: argparse.Namespace) -> int:
    from ..export.verify import verify_log

    try:
        report = verify_log(
            args.file, signature=args.signature, allowed_signers=args.allowed_signers, identity=args.identity
        )
    except RunbookError as exc:
        print(f"runbook verify-log: {exc}", file=sys.stderr)
        return exc.exit_code if exc.exit_code else EXIT_USAGE
    if getattr(args, "json", False):
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(report.to_text())
    return report.exit_code


def cli_merge_logs(args: argparse.Namespace) -> int:
    """Exit 0 written; 1 a pod log does not verify, its signer is not allowed, or two
    pods share a host (nothing written); 2 usage or input error."""
    from ..export.site_merge import merge_logs

    try:
        result = merge_logs(
            [Path(p) for p in args.pods],
            Path(args.output),
            sign_key=args.sign_key,
            identity=args.identity,
            allowed_signers=args.allowed_signers,
            agent_path=args.agent_path,
        )
    except RunbookError as exc:
        print(f"runbook merge-logs: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(
            f"runbook merge-logs: cannot write the site log {args.output}: {os_error(exc)}", file=sys.stderr
        )
        return EXIT_USAGE
    s = result.summary
    print(f"site log   {result.log}  (SHA-256 {result.log_sha256})")
    print(
        f"signature  {result.signature}  ({result.key_type} {result.fingerprint}, identity {result.identity})"
    )
    print(f"report     {result.markdown}")
    print(f"status     {s['status']}: {s['host_count']} hosts in {len(s['pods'])} pods")
    for pod in s["pods"]:
        print(
            f"  {pod['name']:<16} {pod['host_count']:>5} hosts  run {pod['run_id']}  signed by {pod['signer_identity']}"
        )
    if s["steps_defined_differently"]:
        print(
            "warning: steps judged by different definitions in different pods: "
            + ", ".join(s["steps_defined_differently"])
        )
    print("verify with:")
    # the site's signer and every pod's: verify-log checks each signature against this one file
    for i, line in enumerate(dict.fromkeys([result.allowed_signers_line, *result.pod_signer_lines])):
        print(f"  echo {shlex.quote(line)} {'>' if i == 0 else '>>'} allowed_signers")
    print(f"  runbook verify-log {result.log.name} --allowed-signers allowed_signers")
    return EXIT_OK
