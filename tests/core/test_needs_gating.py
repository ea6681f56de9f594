"""`needs` gating (run/rules.py blocked_reason): one memo shared by the hosts of
a gating pass gives the same reasons as each host judged alone, and each
prerequisite's hosts are selected and judged once per pass, not once per host."""

from dataclasses import dataclass

from runbook.definition.model import Group, Host, Inventory, Status
from runbook.run import rules


@dataclass
class Step:
    id: str
    hosts: str
    needs: tuple[str, ...] = ()


class Runbook:
    def __init__(self, *steps: Step):
        self.steps = {s.id: s for s in steps}

    def step(self, step_id: str) -> Step:
        return self.steps[step_id]


def inventory() -> Inventory:
    compute = [f"gpu{i:02d}" for i in range(1, 9)]
    sm = ["sm1", "sm2"]
    return Inventory(
        hosts={h: Host(h) for h in compute + sm},
        groups={
            "all": Group("all", children=["compute", "sm"]),
            "compute": Group("compute", hosts=compute),
            "sm": Group("sm", hosts=sm),
        },
    )


def test_a_shared_memo_gives_each_host_the_reason_it_gets_alone():
    inv = inventory()
    link = Step("link", "compute")
    subnet = Step("subnet", "sm")
    version = Step("version", "compute", needs=("link", "subnet", "gone"))
    book = Runbook(link, subnet, version)
    results = {
        ("link", "gpu03"): Status.FAIL,
        ("link", "gpu05"): Status.UNKNOWN,
        ("subnet", "sm2"): Status.FAIL,
    }
    calls: list[tuple[str, str]] = []

    def status_of(step_id: str, host: str) -> Status:
        calls.append((step_id, host))
        return results.get((step_id, host), Status.PASS)

    hosts = list(inv.hosts)[:8]
    alone = {h: rules.blocked_reason(version, h, book, inv, status_of) for h in hosts}
    calls.clear()
    memo: dict = {}
    shared = {h: rules.blocked_reason(version, h, book, inv, status_of, memo) for h in hosts}
    assert shared == alone
    assert alone["gpu01"] == "needs subnet, not yet passed on sm2"
    assert alone["gpu03"] == "needs link, which is fail on this host"
    assert alone["gpu05"] == "needs link, which is unknown on this host"
    # the SM nodes were judged once for the whole pass, not once per compute host
    assert calls.count(("subnet", "sm2")) == 1
