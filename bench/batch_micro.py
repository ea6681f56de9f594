#!/usr/bin/env python3
"""The transport alone: N read-only commands per host, one channel each
(`Transport.run`) against all in one channel (`Transport.run_many`,
runbook/transport/batched.py), alternating, on a running lab (its own
process). Prints the client's CPU (this process) and the lab's CPU per
host-command. The commands are the first pipelined segment of the shipped
runbook's verifies (their parses warm in the sim after the first round).

    python bench/batch_micro.py [--nodes 8] [--rounds 3] [--reps 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from lab import COMPLIANT, Lab  # noqa: E402
from measure import ServerCPU  # noqa: E402

from runbook.definition.loader import load_runbook  # noqa: E402
from runbook.engine.hostrun import command_for  # noqa: E402
from runbook.inventory.load import host_vars, load_inventory  # noqa: E402
from runbook.transport.hostkeys import HostKeyPolicy  # noqa: E402
from runbook.transport.transport import Transport  # noqa: E402

STEPS = [
    "hostname-matches",
    "clock-sync",
    "os-kernel-consistent",
    "dimm-population",
    "gpu-inventory",
    "pcie-link-gpu",
]


async def measure(lab: Lab, server: ServerCPU, rounds: int, reps: int) -> dict:
    rb = load_runbook(HERE.parent / "steps")
    inv = load_inventory(lab.inventory)
    hosts = [h for h in inv.hosts if h.startswith("gpu")]
    t = Transport(inv.hosts, policy=HostKeyPolicy([lab.known_hosts]), ssh_config=[])
    cmds = {h: [(command_for(rb.step(s).verify, host_vars(inv, h)), 30) for s in STEPS] for h in hosts}
    for h in hosts:
        await t.run(h, "true", timeout=10)

    async def alone(h):
        for c, timeout in cmds[h]:
            await t.run(h, c, timeout=timeout)

    async def together(h):
        await t.run_many(h, cmds[h], on_start=lambda i: None, on_result=lambda i, r: None)

    out: dict[str, list] = {"alone": [], "together": []}
    try:
        for _ in range(rounds):
            for name, f in (("alone", alone), ("together", together)):
                lab0, cpu0 = server.total(), time.process_time()
                for _ in range(reps):
                    await asyncio.gather(*(f(h) for h in hosts))
                n = reps * len(hosts) * len(STEPS)
                out[name].append(
                    {
                        "client_ms": (time.process_time() - cpu0) / n * 1e3,
                        "lab_ms": (server.total() - lab0) / n * 1e3,
                    }
                )
                print(
                    f"{name:8} client {out[name][-1]['client_ms']:.3f} ms, lab {out[name][-1]['lab_ms']:.3f} ms per host-command"
                )
    finally:
        await t.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    lab = Lab.start(
        a.nodes, Path(tempfile.mkdtemp(prefix="batch-micro-")), lifetime=600, scenario=COMPLIANT, time_scale=0
    )
    try:
        out = asyncio.run(measure(lab, ServerCPU(lab.pids()), a.rounds, a.reps))
    finally:
        lab.stop()
    for name, rows in out.items():
        print(
            f"median {name:8} client {statistics.median(r['client_ms'] for r in rows):.3f} ms, "
            f"lab {statistics.median(r['lab_ms'] for r in rows):.3f} ms per host-command"
        )


if __name__ == "__main__":
    main()
