"""merge_logs: several pods' signed completion logs -> one signed site log
SITE.json + SITE.json.sig + SITE.md (runbook/export/site_log.py, docs/site-logs.md).

Every pod log is verified first, as `runbook verify-log` would (with
--allowed-signers when given: then a pod signed by anyone else is refused).
The site log is then verified whole with the verifier's own checks before it
is written: a site log our verifier would reject is never handed out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..store.canonical import CanonicalError, canonical_bytes, sha256_hex
from .exporter import ExportError, describe_signer, signer_identity, write_atomic
from .signing_keys import PassphraseCallback, load_signer
from .site_log import SiteLogError, build_site_document
from .verify import read_allowed_signers, read_input, verify_bytes


@dataclass
class MergeResult:
    log: Path
    signature: Path
    markdown: Path
    log_sha256: str
    identity: str
    fingerprint: str
    key_type: str
    allowed_signers_line: str
    summary: dict
    pod_signer_lines: list[str]  # the pods' own allowed_signers lines: a verifier needs them too


def pod_name(path: Path) -> str:
    """The pod's name in the site log: its file name without `.json`."""
    name = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "pod"


def read_pod(path: Path, allowed_text: str | None, allowed_name: str | None) -> dict:
    """One pod log, read once and verified as `runbook verify-log` would."""
    raw = read_input(path, "log file", "")
    signature = read_input(Path(f"{path}.sig"), "signature file", "")
    report = verify_bytes(raw, signature, str(path), allowed_text, allowed_name)
    if not report.ok:  # with --allowed-signers, also a pod signed by a key it does not list
        raise SiteLogError(f"{path}: does not verify: {report.first_broken}")
    return {
        "name": pod_name(path),
        "log": json.loads(raw),
        "log_sha256": sha256_hex(raw),
        # an armored SSHSIG is ASCII; anything else fails the site log's own check before writing
        "signature": signature.decode("utf-8", "replace"),
    }


def merge_logs(
    paths: list[Path],
    out: Path,
    *,
    sign_key: str | None,
    identity: str | None,
    allowed_signers: str | None = None,
    agent_path: str | None = None,
    passphrase_cb: PassphraseCallback | None = None,
) -> MergeResult:
    out = Path(out)
    allowed_text = read_allowed_signers(allowed_signers)
    pods = [read_pod(Path(p), allowed_text, allowed_signers) for p in paths]
    signer = load_signer(sign_key, passphrase_cb=passphrase_cb, agent_path=agent_path)
    operator = next((p["log"].get("run", {}).get("operator") for p in pods if p["log"].get("run")), None)
    ident = signer_identity(identity, {"run": {"operator": operator}}, signer.comment)
    info = describe_signer(signer, ident, out)
    doc = build_site_document(pods, info)
    try:
        raw = canonical_bytes(doc)
    except CanonicalError as exc:
        raise ExportError(f"cannot build the site log: {exc}") from None
    signature = signer.sign(raw)
    check = verify_bytes(raw, signature, str(out), None, None)
    if not check.ok:  # never hand out a site log that does not verify
        raise ExportError(f"the new site log does not verify: {check.first_broken}")
    markdown = out.with_suffix(".md") if out.suffix == ".json" else Path(f"{out}.md")
    for path, data in ((out, raw), (Path(f"{out}.sig"), signature), (markdown, render_site_markdown(doc))):
        write_atomic(path, data)
    return MergeResult(
        out,
        Path(f"{out}.sig"),
        markdown,
        sha256_hex(raw),
        ident,
        signer.fingerprint,
        signer.key_type,
        info["allowed_signers"],
        doc["summary"],
        list(dict.fromkeys(str((p["log"].get("signer") or {}).get("allowed_signers")) for p in pods)),
    )


def render_site_markdown(doc: dict) -> bytes:
    """A short human page: the pods, and each step's status in each pod."""
    summary = doc["summary"]
    pods = summary["pods"]
    lines = [
        "# Site completion log",
        "",
        f"Site status: **{summary['status']}** over {summary['host_count']} hosts in {len(pods)} pods.",
        "",
        "| pod | hosts | run | signed by |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {p['name']} | {p['host_count']} ({p['hosts']}) | {p['run_id']} | "
        f"{p['signer_identity']} `{p['signer_fingerprint']}` |"
        for p in pods
    ]
    names = [p["name"] for p in pods]
    lines += ["", "| step | site | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for step_id, status in summary["step_status"].items():
        per_pod = summary["step_status_by_pod"].get(step_id, {})
        lines.append(f"| {step_id} | {status} | " + " | ".join(per_pod.get(n, "—") for n in names) + " |")
    if summary["steps_defined_differently"]:
        lines += [
            "",
            "Steps judged by different definitions in different pods: "
            + ", ".join(summary["steps_defined_differently"]),
        ]
    signer = doc["signer"]
    lines += [
        "",
        "Verify (every pod log inside is verified too):",
        "",
        f"    runbook verify-log {Path(signer['signature_file']).stem} --allowed-signers allowed_signers",
        "",
    ]
    return "\n".join(lines).encode()
