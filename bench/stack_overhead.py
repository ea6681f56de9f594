#!/usr/bin/env python3
"""Our stack's cost per host with the network taken away: a Session whose
transport answers instantly, the real engine, criteria, state and durable
store. Verifies one step N times on every host of an inventory and prints
CPU per step and per host, with the store and with it replaced by a no-op
(so the store's share is the difference).

  python bench/stack_overhead.py --inventory LAB/inventory.yaml [--step ofed-version] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from runbook.transport.result import CommandResult
from runbook.workspace.project import load_project
from runbook.workspace.session import Session


class InstantTransport:
    """Answers every command at once with a fixed output (default: ofed_info -s)."""

    def __init__(self, stdout: str):
        self.stdout = stdout

    async def run(self, host, command, *, timeout, on_line=None, retries=0):
        now = time.time()
        return CommandResult(
            host=host,
            command=command,
            exit_status=0,
            stdout=self.stdout,
            stderr="",
            started=now,
            ended=now,
            unknown_reason=None,
            started_remote=True,
            attempts=1,
        )

    async def close(self):
        pass


async def measure(args) -> None:
    project = load_project(args.steps, args.inventory)
    session = Session.open(
        project.runbook, project.inventory, tempfile.mkdtemp(prefix="overhead-"), operator="bench", new=True
    )
    session.engine.transport = session.transport = InstantTransport(args.stdout)
    steps = session.steps([args.step])
    hosts = len(project.inventory.hosts)
    for label in ("with the durable store", "store replaced by a no-op"):
        if label.startswith("store replaced"):
            session.store.append_many = lambda events: None
        await session.execute(steps, "verify", again=True)  # warm-up
        c0 = time.process_time()
        for _ in range(args.rounds):
            await session.execute(steps, "verify", again=True)
        cpu = (time.process_time() - c0) / args.rounds
        print(
            f"{label:28} {cpu * 1000:7.1f} ms CPU per step   {cpu / hosts * 1e6:6.0f} us per host ({hosts} hosts)"
        )
    session.close_store()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inventory", required=True)
    p.add_argument("--steps", default="steps")
    p.add_argument("--step", default="ofed-version")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--stdout", default="MLNX_OFED_LINUX-23.10-1.1.9.0:\n")
    asyncio.run(measure(p.parse_args()))


if __name__ == "__main__":
    main()
