"""False verdicts from load: the whole shipped runbook, verify only
(`runbook run --all --new-run --json`, as full_runbook.py), on a compliant
simulated lab that drops connections mid-command (`runbook sim
--drop-commands D --drop-every K`: every K-th command loses its connection
until D have), once with the verify retries off (`--verify-retries 0`) and
once with the default, each on a fresh lab with the same drops. A compliant
lab has no fault: every `unknown` is a false verdict from the drops (or from
the load itself). One run per mode and N (a shared 2-core machine).
`--modes no-drops` adds the same run on a lab that cuts nothing (what the
retries cost against a clean run).

    python bench/load_faults.py --ns 48,384 -o bench/results/load-faults
    python bench/load_faults.py --ns 48,384 --modes no-drops -o bench/results/load-faults-clean
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from full_runbook import TIMEOUT, argv_all, verdict_counts
from lab import Lab
from measure import ServerCPU, last_json, publish, run_measured

MODES = {"retries-off": ["--verify-retries", "0"], "retries-on": [], "no-drops": []}


def unknown_reasons(doc: dict) -> dict[str, int]:
    """Unknown hosts per reason (the retry notes in parentheses left out)."""
    out: dict[str, int] = {}
    for s in doc.get("steps", []):
        for h in s.get("hosts", {}).values():
            if h.get("status") == "unknown":
                why = re.sub(r" \(after attempt .*\)$", "", h.get("reason") or "?")
                why = re.sub(r"\d+(\.\d+)?s\b", "Ns", why)
                out[why] = out.get(why, 0) + 1
    return out


def one(n: int, mode: str, extra: list[str], drops: int, every: int, work: Path, log=print) -> dict:
    if mode == "no-drops":
        drops = 0
    cut = ["--drop-commands", str(drops), "--drop-every", str(every)] if drops else []
    lab = Lab.start(n, work, extra=cut, tag=f"-{mode}")
    try:
        state = work / f"state-{n}-{mode}"
        r = run_measured(argv_all(lab, state) + extra, server=ServerCPU(lab.pids()), timeout=TIMEOUT)
    finally:
        lab.stop()
    doc = last_json(r.stdout)
    hosts, steps = verdict_counts(doc)
    said = re.search(r"dropped (\d+) commands", lab.log.read_text(errors="replace"))
    rec = {
        "n": n,
        "mode": mode,
        "drops_asked": drops,
        "drop_every": every,
        "dropped": int(said.group(1)) if said else 0,  # what the sim says it really cut
        "process": r.record(),
        "host_verdicts": hosts,
        "unknown": hosts.get("unknown", 0),
        "blocked": hosts.get("blocked", 0),
        "unknown_reasons": unknown_reasons(doc),
        "steps": len(doc.get("steps", [])),
    }
    if not doc:
        rec["stderr_tail"] = r.stderr[-1500:]
    shutil.rmtree(state, ignore_errors=True)
    log(
        f"N={n} {mode}: wall {r.wall:.1f}s cpu {r.cpu:.1f}s dropped {rec['dropped']} "
        f"unknown {rec['unknown']} blocked {rec['blocked']} rc {r.rc} {rec['unknown_reasons']}"
    )
    return rec


def markdown(runs: list[dict], argv: list[str]) -> str:
    lines = [
        "# Verify retries under dropped connections (bench/load_faults.py)",
        "",
        f"`{' '.join(argv)}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, one run each, "
        "a compliant lab (no fault): every unknown is false.",
        "",
        "| N | mode | commands cut (every K-th) | unknown | blocked | wall s | CPU s | unknown reasons |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        why = "; ".join(f"{k}: {v}" for k, v in sorted(r["unknown_reasons"].items())) or "-"
        lines.append(
            f"| {r['n']} | {r['mode']} | {r['dropped']} (K={r['drop_every']}) | {r['unknown']} | "
            f"{r['blocked']} | {r['process']['wall']:.1f} | {r['process']['cpu']:.1f} | {why} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="48,384", help="comma-separated node counts")
    ap.add_argument("--drops-per-node", type=float, default=1.5, help="D = this x N commands cut")
    ap.add_argument("--drop-every", type=int, default=20, help="K: every K-th command is cut")
    ap.add_argument(
        "--modes", default="retries-off,retries-on", help=f"comma-separated, of {', '.join(MODES)}"
    )
    ap.add_argument("-o", "--out", help="write OUT.json and OUT.md")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        for n in (int(x) for x in args.ns.split(",")):
            drops = max(1, round(args.drops_per_node * n))
            for mode in args.modes.split(","):
                runs.append(one(n, mode, MODES[mode], drops, args.drop_every, Path(tmp)))
    md = markdown(runs, ["python", "bench/load_faults.py", *sys.argv[1:]])
    publish(md, runs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
