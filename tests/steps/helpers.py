"""Shared by the tests of the shipped runbook: the real outputs, the seed
inventory's vars, the shipped steps, and a way to judge one step's verify on
an output exactly as the engine does (parse, per-host verdict, fleet verdict)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from runbook import parsers
from runbook.criteria.fleet import judge_fleet
from runbook.criteria.host import judge_host, parse_output
from runbook.definition.loader import load_runbook
from runbook.definition.model import Runbook
from runbook.inventory.load import host_vars, load_inventory
from tests.fixtures_path import configured

REPO = Path(__file__).resolve().parents[2]
# $RUNBOOK_FIXTURES, else the shared corpus beside the checkout (as tests/parsers_host does)
FIXTURES = configured()
STEPS = REPO / "steps"
INVENTORY = REPO / "inventory" / "seed-cluster.yaml"


def fixture(name: str) -> str:
    """A real output by directory/file-prefix, e.g. 'ibstat/H20'."""
    folder, prefix = name.split("/", 1)
    found = sorted((FIXTURES / folder).glob(prefix + "*"))
    assert len(found) == 1, f"fixture {name!r}: {found}"
    return found[0].read_text()


def parse_fixture(parser: str, name: str) -> Any:
    return parsers.parse(parser, fixture(name))


@cache
def runbook() -> Runbook:
    return load_runbook(STEPS)


@cache
def inventory():
    return load_inventory(INVENTORY)


def seed_vars(host: str = "gpu01") -> dict[str, Any]:
    return host_vars(inventory(), host)


def judge(step_id: str, outputs: dict[str, str], exit_status: int = 0) -> dict[str, Any]:
    """Judge a shipped step's verify on host -> stdout, like the engine: parse,
    per-host verdict, then the fleet checks. Returns host -> Verdict."""
    step = runbook().step(step_id)
    action = step.verify
    verdicts, records = {}, {}
    variables = {h: seed_vars(h) for h in outputs}
    for host, out in outputs.items():
        record, problem = parse_output(action.parse, out)
        records[host] = record
        verdicts[host] = judge_host(action, exit_status, out, variables[host], record, problem)
    return judge_fleet(action, verdicts, records, dict(outputs), variables)
