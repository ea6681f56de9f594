"""Verify steps of one host that are ready together, in one SSH round trip.

A pipelined host (scheduler.py) that reaches several plain verify steps whose
`needs` are all met runs their commands in one exec channel
(`Transport.run_many`, transport/batched.py) instead of one channel each: a
channel costs the client and the node more than most verify commands do
(bench/README.md, "Goal 1, branch batch"). Each step still gets its own
HostStarted (when its command starts), its own result (output, exit status,
timeout, times) and its own verdict, judged as `run_on_host` judges
(hostrun.py): the journal, the state and a resume see what separate channels
would have given. Never an apply or rollback, never a step kind, a detached
job or an `exclusive` step: most are not in a pipelined segment at all, and an
`exclusive: node` one, which is, has its host to itself (`batchable`).

RUNBOOK_BATCH_VERIFY=0 (or `Engine(batch_verifies=False)`) runs one channel
per step, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..criteria.verdict import Verdict
from ..definition.model import Status, Step
from ..definition.template import TemplateError
from ..run.events import HostStarted
from .hostrun import HostOutcome, command_for, judge_result

ENV = "RUNBOOK_BATCH_VERIFY"
# Commands per channel at most: a long script's last result waits for all the
# others; past a few the channel's cost is shared thinly enough anyway.
MAX_BATCH = 16


def batching_enabled(environ=os.environ) -> bool:
    return environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def batchable(step: Step) -> bool:
    """A plain read-only verify of one host: what may share a channel."""
    v = step.verify
    return step.kind == "each" and not step.exclusive and not step.manual and v is not None and not v.detach


def can_batch(engine, host: str) -> bool:
    return engine.batch_verifies and hasattr(engine.transport, "run_many")


async def verify_together(
    engine, host: str, steps: list[Step], post: Callable[[Step, HostOutcome], None]
) -> None:
    """Verify `steps` (each ready, each batchable) on `host`; `post` takes each
    step's outcome as soon as it is in, in the steps' order."""
    variables = engine._vars[host]
    todo: list[tuple[Step, str]] = []
    for step in steps:
        try:
            todo.append((step, command_for(step.verify, variables)))
        except TemplateError as exc:  # as run_on_host: unknown, nothing started
            why = Verdict(Status.UNKNOWN, f"cannot build the command: {exc}")
            post(step, HostOutcome(host, step.verify.run, why, assessed=False))
    if not todo:
        return

    def on_start(i: int) -> None:
        step, command = todo[i]
        engine._emit(HostStarted(step.id, "verify", host, command))

    def on_result(i: int, res) -> None:
        step, command = todo[i]
        post(step, judge_result(host, command, step.verify, variables, res))

    await engine.transport.run_many(
        host,
        [(command, step.verify.timeout) for step, command in todo],
        on_start=on_start,
        on_result=on_result,
        on_line_for=lambda i: engine._line_sink(todo[i][0], "verify", host),
        retries=engine.verify_retries,
    )
