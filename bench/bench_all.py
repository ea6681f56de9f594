#!/usr/bin/env python3
"""The whole benchmark (what bench/run.sh runs): for each N a simulated lab is
started, the fan-out matrix and the whole-runbook run are measured on it (and
the crash-resume trials on the smallest one), then the lab is stopped; the
store and UI benchmarks of their owners are called; results go to
bench/results/latest.json and latest.md.

  python bench/bench_all.py [--quick] [--only fanout,full,crash,store,tui]
                            [--ns 48,384] [--reps 3] [--tag NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import crash_resume  # noqa: E402
import external  # noqa: E402
import fanout  # noqa: E402
import full_runbook  # noqa: E402
import report  # noqa: E402
from lab import Lab  # noqa: E402

PROFILES = {
    # quick: ansible once and only at N=48 (one run at 384 alone takes ~25 s here)
    # The whole runbook only at 48 in quick mode: at 384 it takes minutes (see README).
    "quick": {
        "ns": [48, 384],
        "reps": {48: 3, 384: 2},
        "full_reps": 1,
        "full_ns": [48],
        "crash_trials": 10,
        "crash_nodes": 8,
        "no_ansible_above": 100,
        "ansible_once_above": 0,
    },
    "full": {
        "ns": [48, 384, 1000],
        "reps": {48: 5, 384: 3, 1000: 3},
        "full_reps": 1,
        "full_ns": [48, 384],
        "crash_trials": 30,
        "crash_nodes": 16,
        "no_ansible_above": 100000,
        "ansible_once_above": 100,
    },
}
SECTIONS = ("fanout", "full", "crash", "store", "tui")


def versions() -> str:
    out = [f"Python {platform.python_version()}"]
    for p in ("asyncssh", "cryptography", "ClusterShell", "ansible-core", "tinydb"):
        try:
            out.append(f"{p} {version(p)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def machine() -> str:
    import psutil

    return f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB, {platform.platform()}"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="N=48 and 384, fewer repetitions (~3 min)")
    ap.add_argument("--only", help=f"comma-separated sections of {','.join(SECTIONS)}")
    ap.add_argument("--ns", help="comma-separated node counts (default: the profile's)")
    ap.add_argument(
        "--full-ns", help="comma-separated node counts for the whole runbook (default: the profile's)"
    )
    ap.add_argument("--reps", type=int, help="fan-out repetitions for every N")
    ap.add_argument("--crash-trials", type=int)
    ap.add_argument("--tag", help="also keep the results as results/TAG.{json,md}")
    ap.add_argument(
        "--time-scale",
        type=float,
        default=None,
        help="the labs' `runbook sim --time-scale` (0: the long tests without their modelled waits)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (labs, states)")
    ap.add_argument(
        "--cold-state",
        choices=("fresh", "kept"),
        default="fresh",
        help="runbook-cold: a new --state per run (fresh, the default) or one kept across its runs",
    )
    ap.add_argument("--clients", help=f"fan-out clients only these (of {','.join(fanout.CLIENTS)})")
    ap.add_argument(
        "--baseline-tree",
        help="also time `runbook run` from this tree (e.g. a `git archive` of main) as "
        f"{fanout.BASELINE_CLIENT}, in the same repetitions: before/after side by side",
    )
    a = ap.parse_args()
    prof = dict(PROFILES["quick" if a.quick else "full"])
    if a.full_ns:
        prof["full_ns"] = [int(x) for x in a.full_ns.split(",")]
    only = set(a.only.split(",")) if a.only else set(SECTIONS)
    ns = [int(x) for x in a.ns.split(",")] if a.ns else prof["ns"]
    trials = a.crash_trials if a.crash_trials is not None else prof["crash_trials"]
    work = Path(tempfile.mkdtemp(prefix="runbook-bench-"))
    t0 = time.time()
    res: dict = {
        "meta": {
            "mode": "quick" if a.quick else "full",
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "machine": machine(),
            "versions": versions(),
            "ns": ns,
            "time_scale": a.time_scale,
            "baseline_tree": a.baseline_tree,
            "cold_state": a.cold_state,
            "command": "python bench/bench_all.py " + " ".join(sys.argv[1:]),
        },
        "fanout": {},
        "full": {},
        "errors": {},
        "fanout_notes": fanout.NOTES,
    }
    log(f"work directory {work}")
    try:
        for n in ns:
            if not only & {"fanout", "full"}:
                break
            try:
                with Lab.start(n, work, time_scale=a.time_scale) as lab:
                    log(f"lab N={n} up in {lab.startup_s}s (pids {lab.pids()})")
                    if "fanout" in only:
                        fanout.KEEP_STATE = a.cold_state == "kept"
                        wanted = a.clients.split(",") if a.clients else fanout.CLIENTS
                        clients = [c for c in wanted if not (c == "ansible" and n > prof["no_ansible_above"])]
                        if a.baseline_tree:
                            fanout.TREES[fanout.BASELINE_CLIENT] = Path(a.baseline_tree).resolve()
                            clients.insert(1, fanout.BASELINE_CLIENT)
                        reps = a.reps or prof["reps"].get(n, 3)
                        res["fanout"][str(n)] = fanout.run(
                            lab,
                            reps,
                            work / f"fanout{n}",
                            clients=clients,
                            log=log,
                            ansible_once_above=prof["ansible_once_above"],
                        )
                    if "full" in only and n in prof["full_ns"]:
                        res["full"][str(n)] = full_runbook.run(lab, prof["full_reps"], work / "full", log=log)
            except Exception as exc:
                res["errors"][f"N={n}"] = f"{type(exc).__name__}: {exc}"
                log(traceback.format_exc())
        if "crash" in only:
            try:
                # `runbook run --all` dozens of times: a small lab with a few faults
                # (bench/crash_scenario.yaml), so the verdicts compared are not all "pass"
                with Lab.start(prof["crash_nodes"], work, scenario=HERE / "crash_scenario.yaml") as lab:
                    res["crash"] = crash_resume.run(lab, trials, work / "crash", log=log)
            except Exception as exc:
                res["errors"]["crash"] = f"{type(exc).__name__}: {exc}"
                log(traceback.format_exc())
        if "store" in only:
            log("store benchmark (bench/store_bench.py)")
            res["store"] = external.store(work / "store", a.quick)
        if "tui" in only:
            log("UI latency (bench/tui_latency.py)")
            res["tui"] = external.tui(work / "tui", a.quick)
    finally:
        res["meta"]["elapsed_s"] = round(time.time() - t0, 1)
        out = HERE / "results"
        out.mkdir(exist_ok=True)
        names = ["latest"] + ([a.tag] if a.tag else [])
        page = report.render(res)
        for name in names:
            (out / f"{name}.json").write_text(json.dumps(res, indent=1) + "\n")
            (out / f"{name}.md").write_text(page)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        log(f"done in {res['meta']['elapsed_s']}s: bench/results/{names[-1]}.md and .json")
    sys.stdout.write(page)
    return 0 if not res["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
