#!/usr/bin/env python3
"""No false verdicts from load: the whole shipped runbook, verify only
(`runbook run --all --new-run --json`, as full_runbook.py), on a lab with the
demo's field faults (runbook/sim/scenarios/default.yaml), at several sizes.
The faults sit on the same nodes at every size, so a correct run finds the
same things on them at 1,000 nodes as at 48 and nothing anywhere else.

Per N it reports:
- the faulted hosts caught (some step not `pass` on them) out of those injected;
- `unknown` on a host without a fault: a false verdict from load (must be 0);
- `blocked` on a host without a fault whose reason names a faulted host (a
  prerequisite failed there, e.g. the SM node's partitions): a consequence;
- any other non-pass on a host without a fault, listed (a fault may reach a
  neighbour: a pair partner, a fleet comparison; each is shown to be judged);
- whether the verdicts on the faulted hosts equal those of the smallest N
  (step × host × status).

    python bench/demo_faults.py --ns 48,1000 -o bench/results/demo-faults
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml
from full_runbook import TIMEOUT, argv_all, verdict_counts
from lab import DEMO, Lab
from measure import ServerCPU, last_json, publish, run_measured
from step_breakdown import breakdown, run_dir

from runbook.sim.naming import compute_names


def faulted_hosts(scenario: Path) -> set[str]:
    doc = yaml.safe_load(scenario.read_text()) or {}
    return set((doc.get("faults") or {}).keys())


_NUMBERED = re.compile(r"([A-Za-z_-]+?)0*(\d+)")  # as runbook/sim/scenario.py places a fault


def lab_names(faulted: set[str], n: int) -> dict[str, str]:
    """Lab host name -> the scenario's name for it: the sim places `gpu07` on the
    7th compute node, which a 1,000-node lab calls gpu0007 (runbook/sim/naming.py)."""
    computes = compute_names(n)
    out = {}
    for name in faulted:
        m = _NUMBERED.fullmatch(name)
        if m and m.group(1) == "gpu" and int(m.group(2)) <= n:
            out[computes[int(m.group(2)) - 1]] = name
        else:
            out[name] = name  # sm02 and the switches keep their names at every size
    return out


def footprint(doc: dict) -> dict[tuple[str, str], tuple[str, str]]:
    """(step, host) -> (status, reason) for every host verdict that is not pass."""
    out = {}
    for s in doc.get("steps", []):
        for host, h in (s.get("hosts") or {}).items():
            if h["status"] not in ("pass", "pending"):
                out[(s["id"], host)] = (h["status"], h.get("reason") or "")
    return out


def _held_by(status: str, reason: str, faulted: set[str]) -> bool:
    """Blocked because a prerequisite failed on a faulted host (the reason names it)."""
    return status == "blocked" and any(re.search(rf"\b{re.escape(h)}\b", reason) for h in faulted)


def one(n: int, work: Path, scenario_faulted: set[str], log=print) -> dict:
    alias = lab_names(scenario_faulted, n)
    lab = Lab.start(n, work, scenario=DEMO, lifetime=TIMEOUT + 300, timeout=600)
    try:
        state = work / f"state-{n}"
        r = run_measured(argv_all(lab, state), server=ServerCPU(lab.pids()), timeout=TIMEOUT)
        steps = breakdown(run_dir(state, None) / "journal.jsonl") if state.exists() else None
    finally:
        lab.stop()
    doc = last_json(r.stdout)
    hosts, _ = verdict_counts(doc)
    # every host name as the scenario spells it, so verdicts compare across sizes
    fp = {(s, alias.get(h, h)): v for (s, h), v in footprint(doc).items()}
    faulted = scenario_faulted
    named = set(alias) | faulted  # a reason names the lab's host (blocked: needs ... on gpu0021)
    elsewhere = {k: v for k, v in fp.items() if k[1] not in faulted}
    rec = {
        "n": n,
        "process": r.record(),
        "host_verdicts": hosts,
        "caught": sorted({h for (_, h) in fp if h in faulted}),
        "false_unknown": sorted(
            f"{s}:{h}: {why}" for (s, h), (st, why) in elsewhere.items() if st == "unknown"
        ),
        "held_by_fault": sorted(
            f"{s}:{h}: {why}" for (s, h), (st, why) in elsewhere.items() if _held_by(st, why, named)
        ),
        "other_elsewhere": sorted(
            f"{s}:{h}: {st}: {why}"
            for (s, h), (st, why) in elsewhere.items()
            if st != "unknown" and not _held_by(st, why, named)
        ),
        "on_faulted": sorted(f"{s}:{h}:{st}" for (s, h), (st, _) in fp.items() if h in faulted),
        "breakdown": steps,
    }
    if not doc:
        rec["stderr_tail"] = r.stderr[-1500:]
    shutil.rmtree(state, ignore_errors=True)
    log(
        f"N={n}: wall {r.wall:.1f}s cpu {r.cpu:.1f}s sim cpu {r.server_cpu:.1f}s rc {r.rc} "
        f"caught {len(rec['caught'])}/{len(faulted)} false unknown {len(rec['false_unknown'])} "
        f"held by a fault {len(rec['held_by_fault'])} other non-pass elsewhere {len(rec['other_elsewhere'])}"
    )
    return rec


def markdown(runs: list[dict], faulted: set[str], argv: list[str]) -> str:
    base = runs[0]
    L = [
        "# The demo's faults at every size (bench/demo_faults.py)",
        "",
        f"`{' '.join(argv)}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, one run per N, "
        f"faults of runbook/sim/scenarios/default.yaml on {', '.join(sorted(faulted))}.",
        "",
        f"| N | wall s | CPU s | sim CPU s | exit | faulted hosts caught | false unknown | "
        f"blocked by a faulted host | other non-pass elsewhere | verdicts on the faulted hosts = N={base['n']} |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        p = r["process"]
        same = "yes" if r["on_faulted"] == base["on_faulted"] else "NO"
        L.append(
            f"| {r['n']} | {p['wall']:.1f} | {p['cpu']:.1f} | {p['server_cpu']:.1f} | {p['rc']} | "
            f"{len(r['caught'])}/{len(faulted)} | {len(r['false_unknown'])} | {len(r['held_by_fault'])} | "
            f"{len(r['other_elsewhere'])} | {same} |"
        )
    for r in runs:
        for title, key in (
            ("false unknown", "false_unknown"),
            ("other non-pass elsewhere", "other_elsewhere"),
        ):
            if r[key]:
                L += ["", f"N={r['n']}, {title} (first 20):", ""] + [f"- {x}" for x in r[key][:20]]
        if r["on_faulted"] != base["on_faulted"]:
            a, b = set(base["on_faulted"]), set(r["on_faulted"])
            L += ["", f"N={r['n']} differs from N={base['n']} on the faulted hosts:", ""]
            L += [f"- only at N={base['n']}: {x}" for x in sorted(a - b)[:20]]
            L += [f"- only at N={r['n']}: {x}" for x in sorted(b - a)[:20]]
    return "\n".join(L) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="48,1000", help="comma-separated node counts, smallest first")
    ap.add_argument("-o", "--out", help="write OUT.json and OUT.md")
    args = ap.parse_args()
    faulted = faulted_hosts(DEMO)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        for n in sorted(int(x) for x in args.ns.split(",")):
            runs.append(one(n, Path(tmp), faulted))
    md = markdown(runs, faulted, ["python", "bench/demo_faults.py", *sys.argv[1:]])
    publish(md, runs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
