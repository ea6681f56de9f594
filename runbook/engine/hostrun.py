"""One host, one action: template the command, run it, parse, judge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..criteria.host import judge_host, parse_output
from ..criteria.verdict import Verdict
from ..definition.model import Action, Status
from ..definition.template import TemplateError, render_command
from . import become, detached


@dataclass
class HostOutcome:
    """What running a step on one host came to: the command as run, its output and verdict."""

    host: str
    command: str
    verdict: Verdict
    exit_status: int | None = None
    stdout: str = ""
    stderr: str = ""
    started: float = 0.0
    ended: float = 0.0
    attempts: int = 1
    record: Any = None
    assessed: bool = True  # False when the host could not be assessed (unknown before judging)
    extra: dict = field(default_factory=dict)  # a step kind's own facts (engine/kinds/): partner, link


def command_for(action: Action, variables: dict[str, Any], before: dict | None = None) -> str:
    values = dict(variables)
    if before is not None:
        values["before"] = before
    return become.wrap(render_command(action.run, values), variables)  # sudo -n where the inventory says so


async def run_on_host(
    transport,
    host: str,
    action: Action,
    variables: dict[str, Any],
    *,
    before: dict | None = None,
    on_start: Callable[[str], None] | None = None,
    on_line: Callable[[str, str], None] | None = None,
    detach_key: tuple[str, str, str, bool] | None = None,
    retries: int = 0,
) -> HostOutcome:
    try:
        command = command_for(action, variables, before)
    except TemplateError as exc:
        return HostOutcome(
            host, action.run, Verdict(Status.UNKNOWN, f"cannot build the command: {exc}"), assessed=False
        )
    if on_start:
        on_start(command)
    sent = command
    if action.detach and detach_key:
        # The wrapper itself runs through become (not only the job): it starts a system
        # unit as root, and a later stop can end a root job (engine/detached.py).
        values = dict(variables, **({"before": before} if before is not None else {}))
        sent = become.wrap(detached.wrap(render_command(action.run, values), *detach_key), variables)
    # retries: the engine passes them for read-only verifies only (runner.py VERIFY_RETRIES);
    # a detached job is never started twice
    more = {"retries": retries} if retries and not action.detach else {}
    res = await transport.run(host, sent, timeout=action.timeout, on_line=on_line, **more)
    return judge_result(host, command, action, variables, res)


def judge_result(host: str, command: str, action: Action, variables: dict[str, Any], res) -> HostOutcome:
    """One command's CommandResult (transport/result.py) parsed and judged."""
    common = dict(
        exit_status=res.exit_status,
        stdout=res.stdout,
        stderr=res.stderr,
        started=res.started,
        ended=res.ended,
        attempts=res.attempts,
    )
    if res.unknown_reason:
        return HostOutcome(
            host, command, Verdict(Status.UNKNOWN, res.unknown_reason), assessed=False, **common
        )
    record, problem = (
        parse_output(action.parse, res.stdout) if res.exit_status == 0 or action.parse else (None, None)
    )
    try:
        verdict = judge_host(action, res.exit_status, res.stdout, variables, record, problem)
    except Exception as exc:  # one host's odd value must not stop the run
        verdict = Verdict(Status.UNKNOWN, f"could not judge the output: {type(exc).__name__}: {exc}")
    if verdict.status == Status.FAIL and res.stderr.strip() and res.exit_status not in (0, None):
        verdict.reason += f" — stderr: {res.stderr.strip().splitlines()[-1][:160]}"
    return HostOutcome(host, command, verdict, record=record, **common)
