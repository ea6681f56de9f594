#!/usr/bin/env python3
"""runbook, warm: one Session (store + transport + engine, what `runbook run`
and the TUI use), a first step that opens the connections, then --rounds
timed runs of the measured step on the open connections (`again`, so every
host is re-verified; the median round is reported). The whole stack is in
the timed part: templating, SSH, parser, criteria, fleet check, durable store.

  python bench/runbook_warm.py --steps steps --inventory LAB/inventory.yaml \
      --state DIR --step ofed-version [--first STEP] [--rounds 1] [--profile FILE]

Prints one JSON object on stdout (ok = hosts assessed pass or fail).
"""

from __future__ import annotations

import time

T0, C0 = time.perf_counter(), time.process_time()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402

from runbook.definition.targets import targets  # noqa: E402
from runbook.workspace.project import load_project  # noqa: E402
from runbook.workspace.session import Session  # noqa: E402

T_IMPORTED, C_IMPORTED = time.perf_counter(), time.process_time()


class Phase:
    def __init__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()

    def done(self) -> dict:
        return {
            "wall": round(time.perf_counter() - self.w0, 4),
            "cpu": round(time.process_time() - self.c0, 4),
        }


def breakdown_timers() -> dict[str, float]:
    """Sum the CPU of the synchronous calls made during the timed round: store
    appends, parse, judge (the rest is the transport, the engine, asyncio)."""
    from runbook.engine import hostrun
    from runbook.store.store import Store

    sums = {"store_append_many": 0.0, "parse_output": 0.0, "judge_host": 0.0}

    def wrap(owner, name):
        orig = getattr(owner, name)

        def timed(*a, **kw):
            c = time.thread_time()  # appends run in a worker thread: count that thread only
            try:
                return orig(*a, **kw)
            finally:
                sums[name if name != "append_many" else "store_append_many"] += time.thread_time() - c

        setattr(owner, name, timed)

    wrap(Store, "append_many")
    wrap(hostrun, "parse_output")
    wrap(hostrun, "judge_host")
    return sums


async def measure(a) -> dict:
    phases = {}
    ph = Phase()
    project = load_project(a.steps, a.inventory)
    session = Session.open(project.runbook, project.inventory, a.state, operator="bench", new=True)
    phases["load_and_open"] = ph.done()
    try:
        step = session.steps([a.step])
        first = session.steps([a.first or a.step])
        ph = Phase()
        await session.execute(first, "verify", again=True)
        phases["connect_and_first"] = ph.done()
        prof = cProfile.Profile(time.process_time) if a.profile else None
        rounds = []
        sums = breakdown_timers() if a.breakdown else None
        for _ in range(max(1, a.rounds)):
            ph = Phase()
            if prof:
                prof.enable()
            await session.execute(step, "verify", again=True)
            if prof:
                prof.disable()
            rounds.append(ph.done())
            if sums is not None:
                rounds[-1]["of_which_cpu"] = {k: round(v, 4) for k, v in sums.items()}
                for k in sums:
                    sums[k] = 0.0
        if prof:
            prof.dump_stats(a.profile)
        rounds.sort(key=lambda p: p["wall"])
        phases["warm"] = rounds[len(rounds) // 2]
        hosts = targets(step[0], project.inventory)
        statuses: dict[str, int] = {}
        for h in hosts:
            st = session.state.status(a.step, h).value
            statuses[st] = statuses.get(st, 0) + 1
    finally:
        await session.close()
    return {
        "client": "runbook-warm",
        "n": len(hosts),
        "ok": statuses.get("pass", 0) + statuses.get("fail", 0),
        "statuses": statuses,
        "phases": phases,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", default="steps")
    ap.add_argument("--inventory", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--step", default="ofed-version")
    ap.add_argument("--first", help="step run first to open the connections (default: --step)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", help="write a cProfile (CPU time) of the timed rounds here")
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="also report the CPU of store appends, parsing and judging in the timed round",
    )
    a = ap.parse_args()
    doc = asyncio.run(measure(a))
    doc["startup"] = {"wall": round(T_IMPORTED - T0, 4), "cpu": round(C_IMPORTED - C0, 4)}
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
