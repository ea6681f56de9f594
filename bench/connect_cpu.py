#!/usr/bin/env python3
"""Client CPU per SSH connection: each connection's options built on the loop
(runbook/transport/direct_connect.py) against asyncssh.connect, which builds
them in a worker thread. One process, one lab; rounds alternate between the
two (the order flipped every round), each round a new Transport that connects
to every node and runs `true` once. Medians over --rounds of each.

    python bench/connect_cpu.py [--nodes 48] [--rounds 20] [-o OUT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from lab import Lab  # noqa: E402


async def _round(inventory, known_hosts: Path) -> tuple[float, float]:
    from runbook.transport import HostKeyPolicy, Transport

    t = Transport(inventory.hosts, policy=HostKeyPolicy([known_hosts]))
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        results = await asyncio.gather(*(t.run(h, "true", timeout=60) for h in inventory.hosts))
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        await t.close()
    bad = [r for r in results if r.exit_status != 0]
    if bad:
        raise RuntimeError(f"{len(bad)} hosts failed, e.g. {bad[0].unknown_reason}")
    return cpu, wall


async def _measure(lab: Lab, rounds: int) -> dict:
    from runbook.inventory.load import load_inventory
    from runbook.transport import direct_connect

    inventory = load_inventory(lab.inventory)
    runs: dict[str, list[tuple[float, float]]] = {"on the loop": [], "worker thread": []}
    direct = direct_connect.AVAILABLE
    await _round(inventory, lab.known_hosts)  # warm-up: imports, the sim's first sessions
    try:
        for i in range(rounds):
            for mode in ("on the loop", "worker thread")[:: 1 if i % 2 else -1]:
                direct_connect.AVAILABLE = direct and mode == "on the loop"
                runs[mode].append(await _round(inventory, lab.known_hosts))
    finally:
        direct_connect.AVAILABLE = direct
    n = len(inventory.hosts)
    return {
        "hosts": n,
        "rounds": rounds,
        "direct_available": direct,
        **{
            mode: {
                "cpu_ms": round(1e3 * statistics.median(c for c, _ in r), 1),
                "wall_ms": round(1e3 * statistics.median(w for _, w in r), 1),
                "cpu_us_per_connection": round(1e6 * statistics.median(c for c, _ in r) / n, 1),
            }
            for mode, r in runs.items()
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("-o", "--out", type=Path)
    a = ap.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="connect-cpu-") as tmp,
        Lab.start(a.nodes, Path(tmp), lifetime=900) as lab,
    ):
        result = asyncio.run(_measure(lab, a.rounds))
    result["command"] = "python bench/connect_cpu.py " + " ".join(sys.argv[1:])
    print(json.dumps(result, indent=2))
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
