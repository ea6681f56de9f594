"""Build store snapshots the way the store will hand them to the exporter.

The journal is made of the real event dataclasses (runbook.run.events),
chained with the real hash rule, and each result is the store's view of the
HostFinished event behind it. Step hashes come from runbook.definition.model.Step, as the
loader computes them. If the store's snapshot shape changes, change it here
(and in runbook/export/completion_log.py, the one mapping on the export side).
"""

from __future__ import annotations

import hashlib
from typing import Any

from runbook.definition.model import Step
from runbook.run import events as ev
from runbook.store.canonical import GENESIS, journal_entry_hash

MLX_IB = """Device #1:
----------

Device type:    ConnectX7
Name:           MCX75310AAS-NEA_Ax
Device:         /dev/mst/mt4129_pciconf0

Configurations:                              Next Boot
        LINK_TYPE_P1                        IB(1)
"""
MLX_ETH = MLX_IB.replace("IB(1)", "ETH(2)")


class SnapshotBuilder:
    def __init__(self, site: str = "seed-dc", operator: str = "alice", t0: float = 1732900000.0):
        self.t = t0
        self.run = {
            "run_id": "run-20241129-0001",
            "site": site,
            "operator": operator,
            "tool_version": "0.1.0",
            "inventory_sha256": "ab" * 32,
            "runbook_sha256": "cd" * 32,
            "started": None,
            "ended": None,
        }
        self.hosts: dict[str, dict] = {}
        self.steps: list[dict] = []
        self.results: list[dict] = []
        self.decisions: list[dict] = []
        self.pending: list[dict] = []
        self.host_keys: dict[str, dict] = {}
        self.events: list[dict] = []
        self.record(
            ev.RunStarted(
                self.run["run_id"],
                site,
                operator,
                "0.1.0",
                self.run["inventory_sha256"],
                self.run["runbook_sha256"],
                time=self.tick(),
            )
        )
        self.run["started"] = self.events[0]["time"]

    def tick(self, dt: float = 0.5) -> float:
        self.t += dt  # half-second steps: some times are whole numbers, some are not
        return self.t

    def record(self, event: ev.Event) -> dict:
        d = event.to_dict()
        self.events.append(d)
        return d

    def host(self, name: str, **vars: Any) -> SnapshotBuilder:
        self.hosts[name] = {"ansible_host": f"127.0.1.{len(self.hosts) + 1}", **vars}
        fingerprint = "SHA256:" + hashlib.sha256(name.encode()).hexdigest()[:43]
        self.host_keys[name] = {"fingerprint": fingerprint, "how": "known_hosts", "time": self.tick(0.25)}
        self.record(
            ev.HostKeyRecorded(
                name, self.host_keys[name]["fingerprint"], "known_hosts", time=self.host_keys[name]["time"]
            )
        )
        return self

    def step(
        self,
        step_id: str,
        phase: str = "nic-mode",
        title: str = "",
        run: str = "true",
        why: str = "Because the design says so.",
        expect: list | None = None,
    ) -> SnapshotBuilder:
        definition = {
            "id": step_id,
            "title": title or step_id,
            "why": why,
            "hosts": "compute",
            "verify": {"run": run, "expect": expect or [{"exit": 0}], "timeout": 30.0},
        }
        sha = Step(
            step_id, definition["title"], phase, phase, why, "compute", None, definition=definition
        ).sha256
        self.steps.append(
            {
                "id": step_id,
                "phase": phase,
                "title": definition["title"],
                "why": why,
                "sha256": sha,
                "definition": definition,
            }
        )
        return self

    def result(
        self,
        step_id: str,
        host: str,
        status: str = "pass",
        *,
        action: str = "verify",
        stdout: str = "ok\n",
        stderr: str = "",
        reason: str = "",
        exit_status: int = 0,
        before: dict | None = None,
        attempt: int = 1,
        command: str = "",
    ) -> dict:
        command = command or f"{step_id} --check"
        started = self.tick()
        self.record(ev.HostStarted(step_id, action, host, command, attempt, time=started))
        fin = self.record(
            ev.HostFinished(
                step_id,
                action,
                host,
                status,
                reason,
                command,
                exit_status,
                stdout,
                stderr,
                started,
                self.tick(),
                attempt,
                None,
                before,
            )
        )
        res = {
            "step_id": step_id,
            "action": action,
            "host": host,
            "status": status,
            "reason": reason,
            "exit_status": exit_status,
            "command": command,
            "stdout": stdout,
            "stderr": stderr,
            "output_sha256": hashlib.sha256(stdout.encode()).hexdigest(),
            "started": started,
            "ended": fin["ended"],
            "attempts": attempt,
            "before": before,
        }
        self.results.append(res)
        return res

    def decide(
        self,
        kind: str,
        step_id: str,
        hosts: str,
        reason: str,
        *,
        operator: str = "alice",
        expires: float | None = None,
    ) -> dict:
        d = self.record(
            ev.OperatorDecision(kind, step_id, hosts, operator, reason, expires, time=self.tick())
        )
        dec = {k: d[k] for k in ("kind", "step_id", "hosts", "operator", "reason", "time", "expires")}
        self.decisions.append(dec)
        return dec

    def pending_action(self, step_id: str, host: str, action: str = "reboot", state: str = "owed") -> dict:
        d = self.record(ev.PendingActionChanged(step_id, host, action, state, time=self.tick()))
        p = {k: d[k] for k in ("step_id", "host", "action", "state", "time")}
        self.pending.append(p)
        return p

    def finish(self, status: str = "fail") -> SnapshotBuilder:
        self.run["ended"] = self.record(ev.RunFinished(status, time=self.tick()))["time"]
        return self

    def build(self) -> dict:
        journal, prev = [], GENESIS
        for seq, event in enumerate(self.events):
            h = journal_entry_hash(seq, prev, event)
            journal.append({"seq": seq, "prev": prev, "hash": h, "event": event})
            prev = h
        return {
            "run": dict(self.run),
            "inventory": {
                "sources": ["inventory/seed-cluster.yaml"],
                "sha256": self.run["inventory_sha256"],
                "hosts": self.hosts,
            },
            "steps": self.steps,
            "results": self.results,
            "decisions": self.decisions,
            "pending_actions": self.pending,
            "host_keys": self.host_keys,
            "journal": journal,
            "head": prev,
        }


def small_snapshot() -> dict:
    """4 hosts, 3 steps: a pass, a fixed failure with rollback data, an unknown, a waiver."""
    b = SnapshotBuilder()
    for h in ("gpu01", "gpu02", "gpu03", "gpu07"):
        b.host(h, gpus=8)
    b.step("ofed-version", "software", "OFED version", "ofed_info -s")
    b.step(
        "link-type-ib",
        "nic-mode",
        "ConnectX ports in InfiniBand mode",
        "mlxconfig -d /dev/mst/mt4129_pciconf0 q LINK_TYPE_P1",
    )
    b.step("nccl-baseline", "fabric", "NCCL all_reduce baseline", "all_reduce_perf -b 8 -e 8G")
    for h in ("gpu01", "gpu02", "gpu03", "gpu07"):
        b.result("ofed-version", h, stdout="MLNX_OFED_LINUX-23.10-1.1.9.0:\n")
    for h in ("gpu01", "gpu02", "gpu03"):
        b.result("link-type-ib", h, stdout=MLX_IB)
    b.result(
        "link-type-ib",
        "gpu07",
        "fail",
        stdout=MLX_ETH,
        exit_status=0,
        reason="LINK_TYPE_P1: expected IB(1), found ETH(2)",
    )
    # recorded as the engine records a successful apply (run/rules.py apply_outcome)
    b.result(
        "link-type-ib",
        "gpu07",
        "pending",
        action="apply",
        stdout="Applying... Done!\n",
        reason="applied; reboot owed; re-verify pending",
        before={"LINK_TYPE_P1": "ETH(2)"},
    )
    b.pending_action("link-type-ib", "gpu07")
    b.result("nccl-baseline", "gpu01", stdout="# Avg bus bandwidth    : 18.9\n")
    b.result(
        "nccl-baseline",
        "gpu02",
        "unknown",
        stdout="",
        stderr="timeout after 600 s\n",
        reason="timeout after 600 s",
        exit_status=None,
    )
    b.result(
        "nccl-baseline",
        "gpu03",
        "fail",
        stdout="# Avg bus bandwidth    : 12.1\n",
        reason="busbw: expected 18.5 (-10%), found 12.1",
    )
    b.decide(
        "waive",
        "nccl-baseline",
        "gpu03",
        "Customer accepts: rail 3 cable on order (RMA 4411)",
        expires=b.t + 86400 * 30,
    )
    b.decide("note", "link-type-ib", "", "gpu07 reboot scheduled for the maintenance window")
    return b.finish("unknown").build()


def fleet_snapshot(n_hosts: int = 50, n_steps: int = 10) -> dict:
    """A realistic size: n_hosts x n_steps verify results with a few failures."""
    b = SnapshotBuilder()
    hosts = [f"gpu{i:02d}" for i in range(1, n_hosts + 1)]
    for h in hosts:
        b.host(h, gpus=8, rails=4)
    for s in range(n_steps):
        b.step(f"step-{s:02d}", f"phase-{s // 3}", f"Step {s}", f"check-{s} --all")
    for s in range(n_steps):
        for i, h in enumerate(hosts):
            if (i * 7 + s) % 37 == 0:
                b.result(
                    f"step-{s:02d}",
                    h,
                    "fail",
                    stdout=MLX_ETH * 4,
                    exit_status=1,
                    reason="LINK_TYPE_P1: expected IB(1), found ETH(2)",
                )
            else:
                b.result(f"step-{s:02d}", h, stdout=MLX_IB * 4)
    return b.finish("fail").build()
