"""export_run: snapshot -> NAME.json (canonical JSON), NAME.json.sig (SSHSIG), NAME.md,
NAME.html (report_paths). The signature keeps the log's full name (ssh-keygen's
convention); the reports drop `.json` (NAME.md, not NAME.json.md).

The log is checked with the verifier's own content checks before it is signed:
a log our verifier would reject is never signed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runbook.errors import RunbookError

from ..store.canonical import CanonicalError, canonical_bytes, sha256_hex
from . import sshsig
from .checks import check_document
from .completion_log import SnapshotError, build_document, store_output_mismatches
from .report_data import build_view
from .report_html import render_html
from .report_md import render_markdown
from .signing_keys import PassphraseCallback, load_signer

_BAD_PRINCIPAL = re.compile(r'[\s,"]')  # allowed_signers principals: no blanks, commas, quotes


class ExportError(RunbookError):
    """The log cannot be built or signed (exit code 2)."""


@dataclass
class ExportResult:
    log: Path
    signature: Path
    markdown: Path
    html: Path
    log_sha256: str
    identity: str
    fingerprint: str
    key_type: str
    allowed_signers_line: str
    warnings: list[str] = field(default_factory=list)


def export_run(
    snapshot: dict,
    out: Path,
    *,
    sign_key: str | None,
    identity: str | None,
    passphrase_cb: PassphraseCallback | None = None,
    agent_path: str | None = None,
) -> ExportResult:
    out = Path(out)
    signer = load_signer(sign_key, passphrase_cb=passphrase_cb, agent_path=agent_path)
    ident = signer_identity(identity, snapshot, signer.comment)
    signer_info = describe_signer(signer, ident, out)
    try:
        doc = build_document(snapshot, signer_info)
        raw = canonical_bytes(doc)
    except (SnapshotError, CanonicalError) as exc:
        raise ExportError(f"cannot build the completion log: {exc}") from None
    parsed = json.loads(raw)  # check what a verifier will read, not our in-memory form
    problems = check_document(parsed).problems
    if problems:
        shown = "\n  ".join(problems[:5]) + ("\n  ..." if len(problems) > 5 else "")
        raise ExportError(f"the store's data would not verify; not signing:\n  {shown}")
    signature = signer.sign(raw)
    check = sshsig.check_signature(raw, signature, allowed_signers=None, identity=None)
    if not check.ok:  # never hand out a signature that does not verify
        raise ExportError(f"the new signature does not verify: {check.message}")
    log_sha256 = sha256_hex(raw)
    view = build_view(parsed, out.name, log_sha256)
    paths = report_paths(out)
    contents = (raw, signature, render_markdown(view).encode(), render_html(view).encode())
    for path, data in zip(paths, contents):
        write_atomic(path, data)
    return ExportResult(
        *paths,
        log_sha256=log_sha256,
        identity=ident,
        fingerprint=signer.fingerprint,
        key_type=signer.key_type,
        allowed_signers_line=signer_info["allowed_signers"],
        warnings=store_output_mismatches(snapshot),
    )


def describe_signer(signer: Any, ident: str, out: Path) -> dict:
    """The log's `signer` section: who signed and the line a verifier can use."""
    return {
        "identity": ident,
        "key_type": signer.key_type,
        "fingerprint": signer.fingerprint,
        "public_key": sshsig.public_key_line(signer.public_key),
        "allowed_signers": sshsig.allowed_signers_line(ident, signer.public_key),
        "namespace": sshsig.NAMESPACE,
        "signature_file": out.name + ".sig",
    }


def report_paths(out: Path) -> tuple[Path, Path, Path, Path]:
    """The log, its signature, the Markdown and HTML reports for OUT. A `.json`
    suffix is the log's own; the reports replace it (run.json -> run.md)."""
    out = Path(out)
    stem = out.with_suffix("") if out.suffix == ".json" else out
    return out, Path(f"{out}.sig"), Path(f"{stem}.md"), Path(f"{stem}.html")


def signer_identity(explicit: str | None, snapshot: dict, comment: str) -> str:
    """The principal written into the log and the allowed_signers line."""
    if explicit:
        if _BAD_PRINCIPAL.search(explicit):
            raise ExportError(
                f"identity {explicit!r}: no spaces, commas or quotes "
                "(it is a principal in ssh-keygen's allowed_signers)"
            )
        return explicit
    for candidate in (comment, (snapshot.get("run") or {}).get("operator")):
        if candidate:
            return _BAD_PRINCIPAL.sub("-", str(candidate).strip())
    return "runbook"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # a log is handed to others; mkstemp made it 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
