"""verify-log: is this completion log what its signer signed, and is it
consistent? Says what is proven and what is not, and names the first broken
element. Exit codes: 0 all good and signed by a signer of --allowed-signers,
1 something does not match, 2 bad input (raised as UsageError/InputError by
`verify_log`), 5 intact but no trusted signer was given (any key can sign
a log and call itself anything: without --allowed-signers nothing says who
signed, so this is never reported as OK; docs/security.md)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from runbook.errors import EXIT_FAIL, EXIT_OK, EXIT_UNTRUSTED, InputError, Problem, UsageError

from ..store.canonical import CanonicalError, canonical_bytes
from . import completion_log, site_log, sshsig
from .checks import check_document

UNTRUSTED = "signature is intact but the signer is not trusted: pass --allowed-signers"


@dataclass
class VerifyReport:
    path: str
    ok: bool  # the log is intact and consistent, and its signature is valid
    trusted: bool = False  # ...and the signing key is one --allowed-signers lists
    proven: list[str] = field(default_factory=list)
    not_proven: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # every broken element, in check order
    signer_fingerprint: str = ""
    signer_identity: str | None = None
    key_type: str = ""

    @property
    def first_broken(self) -> str | None:
        return self.problems[0] if self.problems else None

    @property
    def exit_code(self) -> int:
        if not self.ok:
            return EXIT_FAIL
        return EXIT_OK if self.trusted else EXIT_UNTRUSTED

    def to_dict(self) -> dict[str, Any]:
        return dict(asdict(self), first_broken=self.first_broken)

    def to_text(self) -> str:
        lines = [f"runbook verify-log {self.path}"]
        if self.ok and self.trusted:
            lines.append(f"OK: signed by {self.signer_identity or 'key'} {self.signer_fingerprint}")
        elif self.ok:
            lines.append(
                f"NOT TRUSTED: {UNTRUSTED} (signed by key {self.signer_fingerprint}, "
                f"which calls itself {self.signer_identity or 'nothing'})"
            )
        else:
            lines.append(f"FAILED: {self.first_broken}")
            lines.append("Broken:")
            lines += [f"  x {p}" for p in self.problems]
        if self.proven:
            lines.append("Proven:")
            lines += [f"  + {p}" for p in self.proven]
        lines.append("Not proven:")
        lines += [f"  - {p}" for p in self.not_proven]
        return "\n".join(lines) + "\n"


def read_input(path: Path, what: str, option: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}{option}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the {what}: {exc.strerror}") from None


def _parse_json(raw: bytes) -> Any:
    def no_duplicates(pairs: list) -> dict:
        keys = [k for k, _ in pairs]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup is not None:
            raise ValueError(f"duplicate key {dup!r}")
        return dict(pairs)

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not allowed")

    return json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constant)


def _canonical_problem(raw: bytes, doc: Any) -> str | None:
    try:
        again = canonical_bytes(doc)
    except CanonicalError as exc:
        return f"canonical form: {exc}"
    if again == raw:
        return None
    at = next((i for i, (a, b) in enumerate(zip(raw, again)) if a != b), min(len(raw), len(again)))
    near = raw[max(0, at - 30) : at + 30].decode("utf-8", "replace")
    return (
        f"canonical form: byte {at} differs from the canonical serialisation "
        f"(near {near!r}); the bytes were reformatted or reordered"
    )


def verify_log(
    path: str | Path,
    signature: str | Path | None = None,
    allowed_signers: str | Path | None = None,
    identity: str | None = None,
) -> VerifyReport:
    path = Path(path)
    raw = read_input(path, "log file", "")
    sig_path = Path(signature) if signature else Path(str(path) + ".sig")
    sig = read_input(sig_path, "signature file", "" if signature else " (pass --signature FILE)")
    allowed_text = read_allowed_signers(allowed_signers)
    return verify_bytes(raw, sig, str(path), allowed_text, allowed_signers, identity)


def read_allowed_signers(path: str | Path | None) -> str | None:
    """The allowed_signers file's text (None for none); InputError when it lists no usable key."""
    if path is None:
        return None
    text = read_input(Path(path), "allowed_signers file", "").decode("utf-8", "replace")
    try:
        asyncssh.import_allowed_signers(text)
    except ValueError as exc:
        raise InputError(Problem(str(path), None, str(exc))) from None
    return text


def verify_bytes(
    raw: bytes,
    sig: bytes,
    label: str,
    allowed_text: str | None,
    allowed_name: Any,
    identity: str | None = None,
    *,
    site_allowed: bool = True,
) -> VerifyReport:
    """The checks of verify_log on bytes already read. A site log (several pod
    logs merged, runbook/export/site_log.py) is checked pod by pod through this
    same function; a pod log must be a completion log (`site_allowed=False`)."""
    report = VerifyReport(label, ok=False)
    problems: list[str] = []
    doc: Any = None
    findings = site = None
    try:
        doc = _parse_json(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        problems.append(f"document: not valid JSON ({exc})")
    if doc is not None:
        canon = _canonical_problem(raw, doc)
        if canon:
            problems.append(canon)
        if site_allowed and isinstance(doc, dict) and doc.get("format") == site_log.FORMAT:
            from .site_checks import check_site  # it calls back into verify_bytes for each pod

            site = check_site(doc, allowed_text, allowed_name)
            problems += site.problems
        else:
            findings = check_document(doc)
            problems += findings.problems
    signer = doc.get("signer") if isinstance(doc, dict) and isinstance(doc.get("signer"), dict) else {}
    principal = identity or signer.get("identity")
    check = sshsig.check_signature(raw, sig, allowed_signers=allowed_text, identity=principal)
    if check.fingerprint and signer and signer.get("fingerprint") != check.fingerprint:
        problems.append(
            f"signer.fingerprint: the log names {signer.get('fingerprint')}, but the "
            f"signature was made by {check.fingerprint}"
        )
    if not check.ok:
        problems.append(check.message)
    report.problems = problems
    report.ok = not problems
    report.trusted = report.ok and check.via_allowed_signers and (site is None or site.all_trusted)
    report.signer_fingerprint = check.fingerprint
    report.key_type = check.key_type
    report.signer_identity = check.identity if check.via_allowed_signers else principal
    if site is not None:
        _explain_site(report, check, site, len(raw), allowed_name)
    else:
        _explain(report, check, findings, len(raw), allowed_name)
    return report


def _explain(
    report: VerifyReport, check: sshsig.SignatureCheck, findings: Any, size: int, allowed_signers: Any
) -> None:
    if report.ok:
        _signature_proven(report, check, allowed_signers)
        c = findings.counts
        report.proven += [
            f"canonical form: re-serialising gives the same {size} bytes",
            f"outputs: all {c.get('results', 0)} results' stdout and stderr match their SHA-256",
            f"step definitions: all {c.get('steps', 0)} match their SHA-256",
            f"journal: the hash chain of {c.get('journal', 0)} entries is intact up to its head",
            "summary: every verdict follows from the results and decisions",
        ]
        backed = c.get("results", 0) - findings.unbacked_results
        report.proven.append(
            f"results: {backed} of {c.get('results', 0)} agree with their finished event in the journal"
        )
    else:
        report.not_proven.append("anything in this log: it does not verify (see Broken)")
    _signer_not_proven(report, check)
    if findings is not None and findings.unbacked_results:
        report.not_proven.append(
            f"{findings.unbacked_results} results have no finished event in the journal "
            "(interrupted, or recorded otherwise); they rest on the signature alone"
        )
    report.not_proven += completion_log.CLAIMS["does_not_prove"]


def _signature_proven(report: VerifyReport, check: sshsig.SignatureCheck, allowed_signers: Any) -> None:
    fp = check.fingerprint or "(unknown key)"
    if check.via_allowed_signers:
        report.proven.append(
            f"signature: valid SSHSIG (namespace {sshsig.NAMESPACE}) by "
            f"{report.signer_identity}, key {fp} ({check.key_type}), listed in "
            f"{allowed_signers}: the log is unchanged since this signer signed it"
        )
    else:
        report.proven.append(
            f"signature: valid SSHSIG (namespace {sshsig.NAMESPACE}) by key {fp} "
            f"({check.key_type}): the log is unchanged since this key signed it"
        )


def _signer_not_proven(report: VerifyReport, check: sshsig.SignatureCheck) -> None:
    if not check.via_allowed_signers:
        report.not_proven.append(
            f"who signed: without --allowed-signers the signer is only as trusted as the key "
            f"fingerprint {check.fingerprint or '(unknown key)'}; compare it with the fingerprint "
            "the signer gave you another way"
        )


def _explain_site(
    report: VerifyReport, check: sshsig.SignatureCheck, site: Any, size: int, allowed_signers: Any
) -> None:
    """A site log: its own signature, then each pod's own explanation, prefixed with the pod."""
    if report.ok:
        _signature_proven(report, check, allowed_signers)
        report.proven.append(f"canonical form: re-serialising gives the same {size} bytes")
        for label, pod in site.pods:
            report.proven += [f"{label}: {line}" for line in pod.proven]
        report.proven.append(
            "pods: no host is in two pods, and the site summary follows from the pods' summaries"
        )
    else:
        report.not_proven.append("anything in this site log: it does not verify (see Broken)")
    _signer_not_proven(report, check)
    for label, pod in site.pods:
        report.not_proven += [f"{label}: {line}" for line in pod.not_proven if line.startswith("who signed")]
    report.not_proven += site_log.CLAIMS["does_not_prove"]
