"""What the store knows beyond the run state (run/state.py): the record of
every result per step x action x host (command as run, timings, output
hashes, seq, the outputs kept inline) -- what export and the output views
read. Built from the journal entries in order, kept current as entries are
appended; when a run is opened from its progress database it is built on
first use. Statuses are the rulebook's (run/rules.py), never decided here.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..run import rules
from .journal import OUTPUTS

# A result: the latest HostStarted/HostFinished of one (step, action, host).
RESULT_FIELDS = (
    "step_id",
    "action",
    "host",
    "status",
    "reason",
    "exit_status",
    "command",
    "started",
    "ended",
    "attempts",
    "runs",
    "output_sha256",
    "stderr_sha256",
    "before",
    "record",
    "step_sha256",
    "inventory_sha256",
    "seq",
)


class RunIndex:
    def __init__(self) -> None:
        self.run: dict[str, Any] = {}  # the RunStarted event
        self.by_action: dict[tuple[str, str, str], dict[str, Any]] = {}  # (step, action, host)
        self.latest: dict[tuple[str, str], dict[str, Any]] = {}  # (step, host): same dicts
        self.inline: dict[tuple[str, str, str], dict[str, str]] = {}  # outputs kept in the journal
        self.step_sha: dict[str, str] = {}  # step -> sha256 of its latest StepStarted
        self.step_inventory: dict[str, str] = {}  # step -> inventory sha256 (if StepStarted says)
        self.runs: Counter[tuple[str, str, str]] = Counter()
        self.seq = 0

    # --- feeding -------------------------------------------------------
    def add(self, entry: dict[str, Any]) -> None:
        ev, seq = entry["event"], entry["seq"]
        self.seq = seq
        handler = getattr(self, "_on_" + str(ev.get("type")), None)
        if handler:
            handler(ev, seq)

    def _on_RunStarted(self, ev: dict, seq: int) -> None:
        if not self.run:
            self.run = ev

    def _on_RunInterrupted(self, ev: dict, seq: int) -> None:
        self.mark_interrupted()

    def mark_interrupted(self) -> None:
        """Commands still running belong to a process that is gone."""
        for r in self.by_action.values():
            if r["status"] == "running":
                r["status"] = "interrupted"
                r["reason"] = rules.INTERRUPTED_REASON

    def _on_StepStarted(self, ev: dict, seq: int) -> None:
        step = ev["step_id"]
        if ev.get("step_sha256"):
            self.step_sha[step] = ev["step_sha256"]
        if ev.get("inventory_sha256"):  # not in the event today; honoured if it is added
            self.step_inventory[step] = ev["inventory_sha256"]

    def _result(self, ev: dict, seq: int) -> dict[str, Any]:
        step = ev["step_id"]
        return {
            "step_id": step,
            "action": ev["action"],
            "host": ev["host"],
            "seq": seq,
            "step_sha256": self.step_sha.get(step, ""),
            "inventory_sha256": self.step_inventory.get(step, self.run.get("inventory_sha256", "")),
        }

    def _store(self, r: dict[str, Any]) -> None:
        key = (r["step_id"], r["action"], r["host"])
        self.by_action[key] = r
        self.latest[(r["step_id"], r["host"])] = r

    def _on_HostStarted(self, ev: dict, seq: int) -> None:
        key = (ev["step_id"], ev["action"], ev["host"])
        self.runs[key] += 1
        r = self._result(ev, seq)
        r.update(
            status="running",
            reason="",
            exit_status=None,
            command=ev.get("command", ""),
            started=ev.get("time"),
            ended=None,
            attempts=ev.get("attempt", 1),
            runs=self.runs[key],
            output_sha256=None,
            stderr_sha256=None,
            before=None,
            record=None,
        )
        self.inline.pop(key, None)
        self._store(r)

    def _on_HostFinished(self, ev: dict, seq: int) -> None:
        key = (ev["step_id"], ev["action"], ev["host"])
        running = self.by_action.get(key)
        if not (running and running["status"] == "running"):
            self.runs[key] += 1  # finished without a start (e.g. unreachable host)
        r = self._result(ev, seq)
        r.update(
            status=str(ev["status"]),
            reason=ev.get("reason", ""),
            exit_status=ev.get("exit_status"),
            command=ev.get("command", ""),
            started=ev.get("started"),
            ended=ev.get("ended"),
            attempts=ev.get("attempt", 1),
            runs=self.runs[key],
            output_sha256=ev.get("stdout_sha256"),
            stderr_sha256=ev.get("stderr_sha256"),
            before=ev.get("before"),
            record=ev.get("record"),
        )
        self.inline[key] = {name: ev[name] for name in OUTPUTS if name in ev}
        self._store(r)

    # --- reading -------------------------------------------------------
