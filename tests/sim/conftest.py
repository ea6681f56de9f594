"""Fixtures for the simulated lab.

- `machine_of(nodes=2, scenario=None)`: a cluster without any networking, for
  fast format/shell tests: returns a function name -> Machine.
- `make_lab(nodes=4, scenario=None, **kw)`: an in-process Lab on free loopback
  addresses (a random 127.x.y.0 per test session, a new /24 per lab), stopped
  at teardown. `scenario` may be a dict ({"gpu01": ["link_type_eth"]}) or a path.
- `sim_process(...)`: `python -m runbook.sim` as a child process, waited for
  through DIR/ready and killed by pid at teardown.
"""

from __future__ import annotations

import itertools
import random

import asyncssh
import pytest
import yaml

from runbook.sim import scenario as scenarios
from runbook.sim.cluster import Cluster
from runbook.sim.design import load_design
from runbook.sim.lab import Lab
from runbook.sim.machine import Machine
from runbook.sim.procs import SimProcess
from runbook.sim.session import run_line

_FIRST = random.randint(100, 240)
_SUBNETS = itertools.count(random.randint(1, 50) * 4)


def next_base() -> str:
    n = next(_SUBNETS)
    return f"127.{_FIRST + n // 250}.{n % 250 + 1}.0"


def connect_node(lab: Lab, name: str, **kw):
    """asyncssh.connect to one lab node as runbook's transport would: the lab's client
    key, its known_hosts checked (`kw`: more options). Awaitable, and an async
    context manager."""
    node = lab.node(name)
    return asyncssh.connect(
        node.address,
        node.port,
        username="root",
        client_keys=[str(lab.client_key)],
        known_hosts=str(lab.known_hosts),
        **kw,
    )


def _scenario_file(tmp_path, scenario):
    if scenario is None or not isinstance(scenario, dict):
        return scenario
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"faults": scenario}))
    return path


@pytest.fixture(scope="session")
def design():
    return load_design()


@pytest.fixture
def machine_of(design, tmp_path):
    def build(nodes: int = 2, scenario=None):
        cluster = Cluster.build(design, nodes)
        if scenario is not None:
            scenarios.apply(cluster, _scenario_file(tmp_path, scenario))
        machines: dict[str, Machine] = {}
        for name, state in cluster.nodes.items():
            machines[name] = Machine(cluster, state, peers=machines.get)
        return machines.__getitem__

    return build


@pytest.fixture
def sh():
    """await sh(machine, "cmd") -> (stdout, stderr, status)"""

    async def run(machine, command: str, stdin: str = ""):
        return await run_line(machine, command, stdin)

    return run


@pytest.fixture
async def make_lab(tmp_path):
    labs: list[Lab] = []

    async def start(nodes: int = 4, scenario=None, **kw) -> Lab:
        kw.setdefault("reboot_seconds", 0.2)
        kw.setdefault("slow_seconds", 1.0)
        kw.setdefault("save_state", False)
        directory = kw.pop("directory", tmp_path / f"lab{len(labs)}")
        lab = await Lab.start(
            directory,
            nodes=nodes,
            scenario=_scenario_file(tmp_path, scenario),
            base_address=kw.pop("base_address", next_base()),
            port=0,
            **kw,
        )
        labs.append(lab)
        return lab

    yield start
    for lab in labs:
        await lab.stop()


@pytest.fixture
def sim_process(tmp_path):
    procs: list[SimProcess] = []

    def start(nodes: int = 4, scenario=None, **kw) -> SimProcess:
        proc = SimProcess(
            kw.pop("directory", tmp_path / f"proc{len(procs)}"),
            nodes=nodes,
            scenario=_scenario_file(tmp_path, scenario),
            base_address=next_base(),
            **kw,
        )
        procs.append(proc)
        return proc.start()

    yield start
    for proc in procs:
        proc.stop()
