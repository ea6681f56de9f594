"""Client CPU of the whole shipped runbook (verify only), baseline vs change,
paired: `runbook run --all --new-run --json` from two checkouts, alternating,
against one running lab. CPU = user + sys of the `runbook run` process from
getrusage(RUSAGE_CHILDREN) around it (the lab is another process group, its CPU
is not in it). Also checks that both give the same verdicts (and reasons, with
numbers masked).

    python bench/client_cpu.py --base ../runbook-main --pairs 3 --nodes 48 \
        -o bench/results/client-cpu-48.json
    python bench/client_cpu.py --inventory LAB/inventory.yaml ...   # a lab already running
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def run_once(checkout: Path, inventory: Path, state: Path) -> dict:
    argv = [sys.executable, "-m", "runbook", "run", "--steps", str(REPO / "steps")]
    argv += ["--inventory", str(inventory), "--state", str(state), "--all", "--new-run", "--json"]
    env = dict(os.environ, PYTHONPATH=str(checkout))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    commands = 0
    journal = next(state.glob("*/journal.jsonl"), None) if state.exists() else None
    if journal:  # host-commands: the HostFinished events of the run
        commands = journal.read_text().count('"type":"HostFinished"')
    return {
        "cpu": round(cpu, 3),
        "wall": round(wall, 2),
        "rc": p.returncode,
        "doc": doc,
        "commands": commands,
    }


_NUM = re.compile(r"\d+(\.\d+)?")


def verdicts(doc: dict) -> tuple[dict, dict]:
    status, reasons = {}, {}
    for s in doc.get("steps", []):
        status[s["id"]] = s["status"]
        for h, v in s.get("hosts", {}).items():
            status[(s["id"], h)] = v["status"]
            reasons[(s["id"], h)] = _NUM.sub("#", v.get("reason", ""))
    return status, reasons


def _said(doc: dict, key) -> str:
    for s in doc.get("steps", []):
        if isinstance(key, tuple) and s["id"] == key[0] and key[1] in s.get("hosts", {}):
            v = s["hosts"][key[1]]
            return f"{key}: {v['status']}: {v.get('reason', '')[:200]}"
        if s["id"] == key:
            return f"{key}: {s['status']}"
    return f"{key}: absent"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the baseline checkout (a worktree of main)")
    ap.add_argument("--change", type=Path, default=REPO, help="the changed checkout (default: this one)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=48, help="size of the lab started (without --inventory)")
    ap.add_argument("--inventory", type=Path, help="a running lab's inventory (else a lab is started)")
    ap.add_argument("-o", "--out", type=Path)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="client-cpu-"))
    lab = None
    if a.inventory is None:
        sys.path.insert(0, str(HERE))
        from lab import Lab

        lab = Lab.start(a.nodes, work, lifetime=3600)
        a.inventory = lab.inventory
    runs: dict[str, list[dict]] = {"base": [], "change": []}
    mismatches = []
    try:
        for i in range(a.pairs):
            order = ["base", "change"] if i % 2 == 0 else ["change", "base"]
            docs = {}
            for which in order:
                checkout = a.base if which == "base" else a.change
                state = work / f"state-{which}-{i}"
                r = run_once(checkout, a.inventory, state)
                shutil.rmtree(state, ignore_errors=True)
                docs[which] = r.pop("doc")
                runs[which].append(r)
                print(
                    f"pair {i} {which:6}: cpu {r['cpu']:.2f}s wall {r['wall']:.1f}s rc {r['rc']} "
                    f"host-commands {r['commands']}",
                    flush=True,
                )
            sb, rb = verdicts(docs["base"])
            sc, rc = verdicts(docs["change"])
            if sb != sc or rb != rc:
                diff = sorted(str(k) for k in set(sb) | set(sc) if sb.get(k) != sc.get(k))
                diff += sorted(str(k) for k in set(rb) | set(rc) if rb.get(k) != rc.get(k))
                # what each side said there (reasons unmasked): load or a real difference?
                said = {
                    which: [
                        _said(docs[which], k) for k in sorted(set(sb) | set(sc)) if sb.get(k) != sc.get(k)
                    ][:10]
                    for which in ("base", "change")
                }
                mismatches.append({"pair": i, "differ": diff[:20], "said": said})
                print(f"pair {i}: {json.dumps(said)[:600]}", flush=True)
                print(f"pair {i}: verdicts differ: {diff[:5]}", flush=True)
    finally:
        if lab:
            lab.stop()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(r["cpu"] for r in v) for k, v in runs.items()}
    out = {
        "nodes": a.nodes if lab else None,
        "inventory": str(a.inventory),
        "pairs": a.pairs,
        "median_cpu": med,
        "median_wall": {k: statistics.median(r["wall"] for r in v) for k, v in runs.items()},
        "host_commands": runs["change"][-1]["commands"],
        "cpu_per_command_ms": {k: round(1000 * med[k] / max(1, runs[k][-1]["commands"]), 2) for k in runs},
        "change_vs_base": round(med["change"] / med["base"] - 1, 3),
        "verdict_mismatches": mismatches,
        "runs": runs,
        "loadavg": os.getloadavg(),
    }
    print(
        json.dumps({k: out[k] for k in ("median_cpu", "median_wall", "cpu_per_command_ms", "change_vs_base")})
    )
    print("verdicts identical" if not mismatches else f"VERDICTS DIFFER in {len(mismatches)} pair(s)")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
