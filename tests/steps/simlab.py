"""The shipped runbook run by the real engine, over SSH, against in-process
simulated labs (runbook.sim.lab.Lab on loopback). Each scenario starts a lab,
runs steps like `runbook run` does (Session: store, transport, engine), records
what happened, and stops the lab; the tests then assert on the records.

The labs are built from inventory/seed-cluster.yaml (the design the runbook is
written for), not from the simulator's bundled copy."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
from pathlib import Path
from typing import Any

import yaml

from runbook.definition.loader import load_runbook
from runbook.definition.model import Step
from runbook.inventory.load import load_inventory
from runbook.run.events import HostFinished
from runbook.sim.lab import Lab
from runbook.workspace.session import Session

from .helpers import INVENTORY, STEPS

_SUBNETS = itertools.count(random.randint(0, 200))


def _base() -> str:
    n = next(_SUBNETS)
    return f"127.{201 + n // 250}.{n % 250 + 1}.0"


async def _confirm(step, action, hosts, commands) -> bool:
    return True


class LabRun:
    """One lab plus one runbook session on it."""

    def __init__(self, lab: Lab, session: Session):
        self.lab = lab
        self.session = session
        self.runbook = session.runbook
        self.events: list = []

    @classmethod
    async def start(
        cls,
        directory: Path,
        nodes: int,
        faults: dict[str, list] | None = None,
        slow_seconds: float = 1.0,
        sm_on: str = "hosts",
    ) -> LabRun:
        directory.mkdir(parents=True, exist_ok=True)
        scenario = None
        if faults:
            scenario = directory / "scenario.yaml"
            scenario.write_text(yaml.safe_dump({"faults": faults}))
        lab = await Lab.start(
            directory / "lab",
            nodes=nodes,
            scenario=scenario,
            design=INVENTORY,
            base_address=_base(),
            port=0,
            reboot_seconds=0.2,
            slow_seconds=slow_seconds,
            save_state=False,
            sm_on=sm_on,
        )
        session = Session.open(
            load_runbook(STEPS),
            load_inventory(lab.inventory),
            directory / "state",
            operator="test",
            reboot_timeout=30,
        )
        return cls(lab, session)

    def step(self, step_id: str, timeout: float | None = None) -> Step:
        step = self.runbook.step(step_id)
        if timeout is not None:
            step = dataclasses.replace(step, verify=dataclasses.replace(step.verify, timeout=timeout))
        return step

    async def run(
        self,
        step_ids: list[str] | None,
        action: str = "verify",
        hosts: list[str] | None = None,
        again: bool = False,
        steps: list[Step] | None = None,
    ) -> None:
        steps = steps if steps is not None else self.session.steps(step_ids)
        await self.session.execute(
            steps, action, hosts=hosts, again=again, confirm=_confirm, on_events=self.events.extend
        )

    def finished(self, step_id: str, action: str, host: str):
        """The last HostFinished event of that step/action/host (stdout, reason, status)."""
        found = [
            e
            for e in self.events
            if isinstance(e, HostFinished) and (e.step_id, e.action, e.host) == (step_id, action, host)
        ]
        return found[-1] if found else None

    def table(self) -> dict[str, dict[str, tuple[str, str]]]:
        """step -> host -> (status, reason) for every recorded outcome."""
        out: dict[str, dict[str, tuple[str, str]]] = {}
        for step_id, host in self.session.state.outcomes:
            out.setdefault(step_id, {})[host] = (
                self.session.state.status(step_id, host).value,
                self.session.state.reason(step_id, host),
            )
        return out

    def node(self, name: str):
        return self.lab.cluster.nodes[name]

    async def stop(self) -> None:
        try:
            await self.session.close()
        finally:
            await self.lab.stop()


def run_scenarios(directory: Path, scenarios: dict[str, Any]) -> dict[str, Any]:
    """Run every scenario coroutine function (name -> async fn(directory)) at once
    in one event loop; returns name -> its result."""

    async def main():
        names = list(scenarios)
        results = await asyncio.gather(*(scenarios[n](directory / n) for n in names))
        return dict(zip(names, results))

    return asyncio.run(main())
