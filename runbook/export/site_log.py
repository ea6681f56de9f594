"""The site log: the signed completion logs of several pods merged into one
document, signed by the engineer who merged them (docs/site-logs.md).

A site too large for one machine runs one runbook per pod, each behind its
own jump host (bench/README.md, "Past one laptop"); each pod exports and signs
its own completion log. The site log embeds every pod log whole, with its
signature, so it stands on its own: `runbook verify-log SITE.json` re-verifies
each pod log from it, and `ssh-keygen -Y verify` checks the site log's bytes
like any completion log's.

A pod log is embedded as its parsed JSON; a completion log is canonical
(RFC 8785), so `canonical_bytes(pod["log"])` gives back exactly the bytes its
signer signed.
"""

from __future__ import annotations

from runbook.definition.model import Status
from runbook.errors import EXIT_FAIL, RunbookError
from runbook.inventory.hostsel import fold
from runbook.run import rules

from . import completion_log

FORMAT = "runbook-site-log"
FORMAT_VERSION = 1

CLAIMS = {
    "proves": [
        "Integrity: with a valid SSHSIG signature (namespace 'runbook') over these exact bytes, "
        "not one byte of this site log, the pod logs inside it included, has changed since it "
        "was signed.",
        "Each pod log carries its own signature by its own signer: verify-log checks every one "
        "of them, and each pod log's content, exactly as it checks a single completion log.",
        "No host appears in two pods; the summary follows from the pod logs' own summaries.",
    ],
    "does_not_prove": [
        "That the pods cover the whole site: the site log holds the pods its signer merged, "
        "and names each one; compare the host list with the site's design.",
        *completion_log.CLAIMS["does_not_prove"],
    ],
}


class SiteLogError(RunbookError):
    """The pod logs cannot be merged: one does not verify, two share a host (exit 1)."""

    exit_code = EXIT_FAIL


def pod_hosts(log: dict) -> set[str]:
    """Every host a pod log knows: its inventory and every host judged in it."""
    hosts = set(((log.get("inventory") or {}).get("hosts") or {}).keys())
    for per_host in ((log.get("summary") or {}).get("verdicts") or {}).values():
        if isinstance(per_host, dict):
            hosts.update(per_host.keys())
    return {str(h) for h in hosts}


def overlaps(pods: list[dict]) -> list[str]:
    """'host H is in pod A and pod B' for every host two pods share."""
    seen: dict[str, str] = {}
    out = []
    for pod in pods:
        for host in sorted(pod_hosts(pod.get("log") or {})):
            if host in seen:
                out.append(f"host {host} is in pod {seen[host]} and pod {pod.get('name')}")
            else:
                seen[host] = str(pod.get("name"))
    return out


def summarize(pods: list[dict]) -> dict:
    """The site's verdict from its pods': per step the worst pod status wins
    (rules.step_status, the rule a step uses for its hosts)."""
    by_pod: dict[str, dict[str, str]] = {}
    definitions: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    described = []
    for pod in pods:
        log, name = pod["log"], str(pod["name"])
        summary = log.get("summary") or {}
        for step_id, status in (summary.get("step_status") or {}).items():
            by_pod.setdefault(str(step_id), {})[name] = str(status)
        for step in log.get("steps") or []:
            definitions.setdefault(str(step.get("id")), set()).add(str(step.get("sha256")))
        for per_host in (summary.get("verdicts") or {}).values():
            for verdict in per_host.values():
                counts[str(verdict.get("status"))] = counts.get(str(verdict.get("status")), 0) + 1
        hosts = pod_hosts(log)
        signer = log.get("signer") or {}
        described.append(
            {
                "name": name,
                "run_id": (log.get("run") or {}).get("run_id"),
                "site": (log.get("run") or {}).get("site"),
                "operator": (log.get("run") or {}).get("operator"),
                "tool_version": log.get("tool_version"),
                "hosts": fold(sorted(hosts)),
                "host_count": len(hosts),
                "signer_identity": signer.get("identity"),
                "signer_fingerprint": signer.get("fingerprint"),
                "log_sha256": pod["log_sha256"],
            }
        )
    step_status = {
        step_id: rules.step_status(_status(s) for s in statuses.values()).value
        for step_id, statuses in by_pod.items()
    }
    return {
        "pods": described,
        "host_count": sum(p["host_count"] for p in described),
        "step_status": step_status,
        "step_status_by_pod": by_pod,
        "verdict_counts": dict(sorted(counts.items())),
        "status": rules.step_status(_status(s) for s in step_status.values()).value,
        # the same step id judged by different definitions in different pods:
        # the site's verdict then mixes two rulebooks, which the reader must know
        "steps_defined_differently": sorted(k for k, v in definitions.items() if len(v) > 1),
    }


def _status(value: str) -> Status:
    try:
        return Status(value)
    except ValueError:
        return Status.UNKNOWN  # a status this version does not know: never a pass


def build_site_document(pods: list[dict], signer: dict) -> dict:
    """`pods`: [{name, log (parsed), log_sha256, signature (armored text)}], in the
    order given. Raises SiteLogError when two pods share a name or a host."""
    names = [str(p["name"]) for p in pods]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise SiteLogError(f"two pod logs are both named {dup!r}: rename one file")
    shared = overlaps(pods)
    if shared:
        raise SiteLogError(
            "; ".join(shared[:5]) + (f" (and {len(shared) - 5} more)" if len(shared) > 5 else "")
        )
    embedded = [
        {"name": str(p["name"]), "log_sha256": p["log_sha256"], "signature": p["signature"], "log": p["log"]}
        for p in pods
    ]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "canonical_form": completion_log.CANONICAL_FORM,
        "pods": embedded,
        "summary": summarize(embedded),
        "signer": dict(signer),
        "claims": CLAIMS,
    }
