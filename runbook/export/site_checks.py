"""Content checks of a parsed site log (runbook/export/site_log.py): every pod
log is re-verified from the bytes embedded in the site log, exactly as
`runbook verify-log` verifies a completion log on its own, with the verifier's
allowed_signers; then no host in two pods, then the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..store.canonical import CanonicalError, canonical_bytes, sha256_hex
from . import site_log


@dataclass
class SiteFindings:
    problems: list[str] = field(default_factory=list)
    pods: list[tuple[str, Any]] = field(default_factory=list)  # (label, VerifyReport) per pod

    @property
    def all_trusted(self) -> bool:
        """With --allowed-signers a pod signer it does not list is a problem, not
        an untrusted pod (as for one log): so this is "checked against it"."""
        return bool(self.pods) and all(report.trusted for _label, report in self.pods)


def check_site(doc: dict, allowed_text: str | None, allowed_name: Any) -> SiteFindings:
    from .verify import verify_bytes  # verify.py imports this module lazily: no cycle at import time

    f = SiteFindings()
    if doc.get("format_version") != site_log.FORMAT_VERSION:
        f.problems.append(
            f"format_version: {doc.get('format_version')!r} is not supported "
            f"(this version reads {site_log.FORMAT_VERSION})"
        )
        return f
    pods = doc.get("pods")
    if not isinstance(pods, list) or not pods or not all(isinstance(p, dict) for p in pods):
        f.problems.append("pods: a site log holds a non-empty list of pod logs")
        return f
    for i, pod in enumerate(pods):
        label = f"pods[{i}] ({pod.get('name')})"
        try:
            raw = canonical_bytes(pod.get("log"))
        except CanonicalError as exc:
            f.problems.append(f"{label}: the embedded log has no canonical form: {exc}")
            continue
        if sha256_hex(raw) != pod.get("log_sha256"):
            f.problems.append(f"{label}.log_sha256: does not match the embedded log")
        signature = pod.get("signature")
        if not isinstance(signature, str):
            f.problems.append(f"{label}.signature: missing")
            continue
        report = verify_bytes(raw, signature.encode(), label, allowed_text, allowed_name, site_allowed=False)
        f.problems += [f"{label}: {p}" for p in report.problems]
        f.pods.append((label, report))
    if f.problems:
        return f  # the summary is only worth comparing over intact pods
    f.problems += [f"pods: {line}" for line in site_log.overlaps(pods)]
    if not f.problems and site_log.summarize(pods) != doc.get("summary"):
        f.problems.append("summary: does not follow from the pod logs' own summaries (it was edited)")
    return f
