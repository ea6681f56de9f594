#!/usr/bin/env python3
"""The simulator's shell work without SSH: capture the command lines a whole
runbook run sends to the sim, then replay them on an in-process cluster with
any checkout's sim, per command template, printing each template's CPU and
comparing the outputs of two checkouts. Seconds where bench/sim_cpu.py takes
minutes; it leaves out the SSH side and the pair steps' servers and clients
(they need their peer at the same time).

    python bench/sim_replay.py capture --nodes 48 --out /tmp/cmds.jsonl
    python bench/sim_replay.py replay --root /tmp/main-copy --capture /tmp/cmds.jsonl --dump /tmp/a.json
    python bench/sim_replay.py replay --root . --capture /tmp/cmds.jsonl --dump /tmp/b.json
    python bench/sim_replay.py replay --root . --capture /tmp/cmds.jsonl --reps 6   # least of 6 rounds
    python bench/sim_replay.py compare /tmp/a.json /tmp/b.json

--root is a directory holding a checkout's runbook/ package (as sim_cpu.py's
--baseline). Outputs are compared with clocks, the SM's activity count and
systemd's invocation ids masked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

# The sim with its run_line wrapped: each exec request's (node, line, stdin) appended to CAPTURE_OUT.
CAPTURING_SIM = """
import json, os, sys
sys.path.insert(0, os.environ["CAPTURE_ROOT"])
from runbook.sim import session
from runbook.sim.main import run_sim
log = open(os.environ["CAPTURE_OUT"], "w")
plain = session.run_line
async def run_line(machine, src, stdin="", shell=None, out=None, err=None):
    log.write(json.dumps([machine.name, src, stdin]) + "\\n")
    log.flush()
    return await plain(machine, src, stdin, shell=shell, out=out, err=err)
session.run_line = run_line
sys.exit(run_sim(sys.argv[1:]))
"""
TEMPLATE = re.compile(r"gpu\d+|\d{8}-\d{6}-[0-9a-f]{4}|mlx5_\d+|\b\d{4,5}\b")
MASK = re.compile(
    r"\d\d:\d\d:\d\d|activity count \d+|\b1[6-9]\d{8}(\.\d+)?\b|\d+\.\d\d 0\.00|invocation ID: [0-9a-f]{32}"
)


def capture(nodes: int, out: Path) -> int:
    sys.path.insert(0, str(BENCH))  # (these import this checkout's runbook: not in a replay of another)
    from full_runbook import argv_all
    from lab import Lab

    work = Path(tempfile.mkdtemp(prefix="sim-replay-"))
    script = work / "capturing_sim.py"
    script.write_text(CAPTURING_SIM)
    os.environ.update(
        BENCH_SIM_CMD=shlex.join([sys.executable, str(script)]), CAPTURE_ROOT=str(REPO), CAPTURE_OUT=str(out)
    )
    lab = Lab.start(nodes, work, time_scale=0)
    try:
        r = subprocess.run(argv_all(lab, work / "state"), cwd=str(REPO), stdout=subprocess.DEVNULL)
    finally:
        lab.stop()
    print(f"captured {sum(1 for _ in out.open())} command lines (run exit {r.returncode}) in {out}")
    return 0


def templates(path: Path) -> dict[str, list]:
    """Command lines by template (hosts, run ids, devices and ports masked), the pair
    steps' servers and clients and their cleanups left out."""
    groups: dict[str, list] = {}
    for line in path.open():
        node, src, stdin = json.loads(line)
        if ("ib_write_bw -d" in src and "for d in" not in src) or (
            src.startswith("fuser -k -n tcp") and "for d" not in src
        ):
            continue
        body = src.split('" -c ', 1)[1] if src.startswith("_rbS=") else src  # a batch: by its first step
        groups.setdefault(TEMPLATE.sub("#", body)[:70], []).append((node, src, stdin))
    return groups


def replay(root: Path, path: Path, dump: Path | None, reps: int = 1) -> int:
    if "runbook" in sys.modules:
        raise SystemExit("runbook is imported already: the replay would not run --root's sim")
    sys.path.insert(0, str(root.resolve()))
    import runbook
    from runbook.sim.cluster import Cluster
    from runbook.sim.design import load_design
    from runbook.sim.machine import Machine
    from runbook.sim.session import run_line

    print(f"the sim of {Path(runbook.__file__).parent.parent}")
    groups = templates(path)
    names = {node for items in groups.values() for node, _, _ in items}
    cluster = Cluster.build(load_design(), sum(1 for n in names if n.startswith("gpu")))
    cluster.time_scale = 0
    machines: dict = {}
    for name, state in cluster.nodes.items():
        machines[name] = Machine(cluster, state, peers=machines.get)

    async def run() -> dict:
        outputs: dict = {}
        least: dict = {}  # each template's smallest CPU over the rounds
        for m in machines.values():
            await run_line(m, "true")
        for _ in range(reps):
            for key, items in groups.items():
                per_host: dict[str, list] = {}
                for node, src, stdin in items:
                    per_host.setdefault(node, []).append((src, stdin))
                done: dict[str, list] = {}

                async def host(node: str, lines: list) -> None:
                    done[node] = [await run_line(machines[node], src, stdin) for src, stdin in lines]

                t0 = time.process_time()
                await asyncio.gather(*(host(n, lines) for n, lines in per_host.items()))
                least[key] = min(least.get(key, float("inf")), time.process_time() - t0)
                outputs.setdefault(key, [done[n] for n in per_host])  # the first round's
        for key, items in groups.items():
            cpu = least[key]
            print(
                f"{1000 * cpu:8.1f} ms {len(items):5d} lines {1000 * cpu / len(items):7.3f} ms each  {key!r}"
            )
        print(
            f"total {sum(least.values()):.3f} s of CPU"
            + (f" (each template's least of {reps} rounds)" if reps > 1 else "")
        )
        return outputs

    outputs = asyncio.run(run())
    if dump:
        dump.write_text(json.dumps(outputs))
    return 0


def compare(a: Path, b: Path) -> int:
    first, second = json.loads(a.read_text()), json.loads(b.read_text())
    differ = [
        k
        for k in first.keys() | second.keys()
        if MASK.sub("#", json.dumps(first.get(k))) != MASK.sub("#", json.dumps(second.get(k)))
    ]
    for k in differ:
        print(f"differs: {k!r}")
    print(f"{len(first.keys() | second.keys())} templates compared, {len(differ)} differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--nodes", type=int, default=48)
    c.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("replay")
    r.add_argument("--root", type=Path, default=REPO)
    r.add_argument("--capture", type=Path, required=True)
    r.add_argument("--dump", type=Path)
    r.add_argument(
        "--reps", type=int, default=1, help="rounds; each template's least CPU is shown (default 1)"
    )
    k = sub.add_parser("compare")
    k.add_argument("a", type=Path)
    k.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.what == "capture":
        return capture(args.nodes, args.out)
    if args.what == "replay":
        return replay(args.root, args.capture, args.dump, args.reps)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
