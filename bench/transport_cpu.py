"""Client CPU per command of runbook's SSH transport alone (no engine, no
store), baseline vs change, paired: connections to --hosts sim nodes opened
first, then --rounds rounds of one verify command on every host at once; the
CPU of the rounds (process_time of the client process) per command.

With --sim-without-ignore a second lab runs whose server connections send no
padding SSH_MSG_IGNORE before each packet (asyncssh sends one; OpenSSH's sshd
does not): what those packets cost the client. Measurement only, the sim itself
is not changed (bench/sim_without_ignore.py wraps it).

    python bench/transport_cpu.py --base /tmp/main-tree --pairs 3 --sim-without-ignore \
        -o bench/results/client3-transport-cpu.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
COMMAND = "ofed_info -s"


async def _child(inventory: Path, hosts: int, rounds: int) -> dict:
    from runbook.inventory.load import load_inventory
    from runbook.transport import HostKeyPolicy, Transport

    inv = load_inventory(inventory)
    chosen = {n: inv.hosts[n] for n in list(inv.hosts)[:hosts]}
    t = Transport(chosen, policy=HostKeyPolicy([inventory.parent / "known_hosts"]))
    try:
        await asyncio.gather(*(t.run(h, COMMAND, timeout=30) for h in chosen))  # connect
        c0 = time.process_time()
        statuses = set()
        for _ in range(rounds):
            rs = await asyncio.gather(*(t.run(h, COMMAND, timeout=30) for h in chosen))
            statuses |= {r.exit_status for r in rs}
        cpu = time.process_time() - c0
    finally:
        await t.close()
    return {
        "us_per_command": round(1e6 * cpu / (rounds * len(chosen)), 1),
        "exit": sorted(map(str, statuses)),
    }


def run_child(tree: Path, inventory: Path, hosts: int, rounds: int) -> dict:
    argv = [sys.executable, str(HERE / "transport_cpu.py"), "--child", str(inventory)]
    argv += ["--hosts", str(hosts), "--rounds", str(rounds)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, help="the baseline tree (e.g. `git archive main`)")
    ap.add_argument("--change", type=Path, default=REPO)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=32, help="lab size (also the hosts used)")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--sim-without-ignore", action="store_true")
    ap.add_argument("-o", "--out", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--hosts", type=int, default=32, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(asyncio.run(_child(a.child, a.hosts, a.rounds))))
        return
    if a.base is None:
        ap.error("--base is required")
    sys.path.insert(0, str(HERE))
    from lab import Lab

    work = Path(tempfile.mkdtemp(prefix="transport-cpu-"))
    labs = {"sim": Lab.start(a.nodes, work, lifetime=1800, tag="-sim")}
    try:
        if a.sim_without_ignore:
            os.environ["BENCH_SIM_CMD"] = f"{sys.executable} {HERE / 'sim_without_ignore.py'}"
            labs["sim-without-ignore"] = Lab.start(a.nodes, work, lifetime=1800, tag="-noignore")
        runs: dict[str, list[float]] = {}
        for i in range(a.pairs):
            for lab_name, lab in labs.items():
                order = ("base", "change") if i % 2 == 0 else ("change", "base")
                for which in order:
                    tree = a.base if which == "base" else a.change
                    r = run_child(tree, lab.inventory, a.nodes, a.rounds)
                    runs.setdefault(f"{which} / {lab_name}", []).append(r["us_per_command"])
                    print(
                        f"pair {i} {which:6} {lab_name:18} {r['us_per_command']:7.1f} us/command {r['exit']}"
                    )
    finally:
        for lab in labs.values():
            lab.stop()
    out = {
        "nodes": a.nodes,
        "rounds": a.rounds,
        "command": COMMAND,
        "median_us_per_command": {k: statistics.median(v) for k, v in runs.items()},
        "runs": runs,
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out["median_us_per_command"]))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
