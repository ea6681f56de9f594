"""A fixed run, as events: the deterministic state the unit and snapshot tests
stand on (fixed times, fixed run id, nothing that changes between runs)."""

from __future__ import annotations

from pathlib import Path

from runbook.run.events import (
    Event,
    HostFinished,
    HostStarted,
    OperatorDecision,
    PendingActionChanged,
    RunStarted,
    StepFinished,
    StepStarted,
)
from runbook.workspace.project import Project, load_project

DATA = Path(__file__).parent / "data"
T0 = 1_700_000_000.0
FAILING_LINK = ("gpu07", "gpu31")
UNREACHABLE = "gpu12"
INTERRUPTED = ("gpu40", "gpu41", "gpu42")


def fixed_project() -> Project:
    return load_project(DATA / "steps", DATA / "inventory.yaml")


def fixed_events(project: Project) -> list[Event]:
    """ssh-reachable passed everywhere but gpu12 (unknown); ofed-version passed;
    link-type-ib: fails on gpu07 and gpu31 (ETH), a reboot owed on gpu07 from an
    earlier apply, and three hosts interrupted mid-verify."""
    rb, inv = project.runbook, project.inventory
    hosts = list(inv.hosts)
    compute = [h for h in hosts if h.startswith("gpu")]
    evs: list[Event] = [RunStarted("run-0001", "test-hall", "alice", "0.1.0", inv.sha256, rb.sha256, time=T0)]

    def verify(step_id: str, targets: list[str], verdict) -> None:
        step = rb.step(step_id)
        evs.append(StepStarted(step_id, "verify", tuple(targets), step.sha256, time=T0 + 1))
        for h in targets:
            status, reason, out = verdict(h)
            cmd = f"{step_id}-command on {h}"
            evs.append(HostStarted(step_id, "verify", h, cmd, time=T0 + 2))
            if status is None:
                continue  # still running when the process died
            evs.append(
                HostFinished(
                    step_id,
                    "verify",
                    h,
                    status,
                    reason,
                    command=cmd,
                    exit_status=None if status == "unknown" else 0,
                    stdout=out,
                    started=T0 + 2,
                    ended=T0 + 3,
                )
            )
        evs.append(StepFinished(step_id, "verify", "fail", {}, time=T0 + 4))

    verify(
        "ssh-reachable",
        hosts,
        lambda h: (
            ("unknown", "unreachable: connection refused", "")
            if h == UNREACHABLE
            else ("pass", "", " 10:00:00 up 3 days, load average: 0.10")
        ),
    )
    verify(
        "ofed-version",
        [h for h in hosts if h != UNREACHABLE],
        lambda h: ("pass", "", "MLNX_OFED_LINUX-23.10-1.1.9.0"),
    )

    def link(h: str):
        if h in INTERRUPTED:
            return None, "", ""
        if h in FAILING_LINK:
            return "fail", "LINK_TYPE_P1: expected 'IB(1)', found 'ETH(2)'", "LINK_TYPE_P1    ETH(2)"
        return "pass", "", "LINK_TYPE_P1    IB(1)"

    verify("link-type-ib", [h for h in compute if h != UNREACHABLE], link)
    evs.append(
        PendingActionChanged("link-type-ib", "gpu07", "reboot", "owed", "changed at boot", time=T0 + 5)
    )
    evs.append(
        OperatorDecision("note", "cabling-walked", "gpu[01-04]", "alice", "walked rack 1", time=T0 + 6)
    )
    return evs
