"""`launch:`: one job (mpirun over a host file) run from a launcher host over
the step's hosts; below the threshold, split until the slow hosts are named
(split.py). Every host gets its own verdict: slow, cleared, or unknown.

No job stays behind (launchjob.py): each runs under a marker on its launcher;
a job cut short by a timeout or a lost connection is ended at once, a stop
(Ctrl-C, `x`) ends the running jobs before the hosts are recorded interrupted,
and a run first ends what a killed run of the step left on the launchers."""

from __future__ import annotations

import asyncio
from typing import Any

from ...definition.kinds import launch_variables
from ...definition.model import Status
from ...run.events import HostFinished
from . import launchjob
from .common import Ctx, HostOutcome
from .peers import folded, peers_of
from .split import isolate


async def run_launch(ctx: Ctx, hosts: list[str]) -> None:
    spec, verify = ctx.step.launch, ctx.step.verify
    launchers = ctx.select(spec.launcher)
    tried: list[str] = []
    members = list(hosts)
    swept = await _sweep(ctx, launchers)  # what a killed run of this step left behind
    if len(members) == 1:  # resume of one host: run it with a host that already passed
        done = [h for h in ctx.partners() if h not in members]
        members += done[:1]

    judged = set(hosts)

    async def probe(group: list[str]) -> tuple[Status, Any]:
        extra = launch_variables(group, ctx.vars)  # launch_ranks: one rank per GPU of its nodes
        if launchers:  # the job as its launcher runs it
            ctx.running_as_one_job([h for h in group if h in judged], verify.run, launchers[0], extra)
        while launchers:
            launcher = launchers[0]
            res = await _job(ctx, launcher, group, extra, judge_vars={**ctx.vars(launcher), **extra})
            if res.assessed:
                return res.verdict.status, (res, group)
            if res.extra.get("started_remote"):
                # the job ran and was cut short (timeout, dropped connection): running it
                # again from another launcher would cost another whole timeout
                return Status.UNKNOWN, (res, group)
            tried.append(res.verdict.reason)
            launchers.pop(0)  # unreachable: the next launcher takes over
        return Status.UNKNOWN, (None, group)

    # hosts that already passed (a resumed run): partners for a single suspect
    done = [h for h in ctx.partners() if h not in members]
    out = await isolate(members, probe, split=spec.split, max_parallel=spec.max_parallel, cleared=done)
    took = f"; launcher taken over after: {'; '.join(tried)}" if tried else ""
    left = f"; first ended what an earlier run left: {'; '.join(swept)}" if swept else ""
    took += left
    whole_ok = out.whole is not None and out.whole[0] == Status.PASS
    nobody_named = not out.slow and not out.unknown
    jobs = _jobs(out)  # the same for every host: folded once per step, not per host
    for h in hosts:
        if h in out.slow:
            res, group = out.slow[h]
            if not spec.split:
                ctx.finish(
                    h,
                    Status.FAIL,
                    f"{_summary(res)} (job over {len(group)} hosts, not split){took}",
                    res,
                    via=res.host,
                    peer=peers_of(group, h),
                    record=_record(res, group, out, jobs),
                    tests=[dict(j) for j in jobs],
                )
                continue
            ctx.finish(
                h,
                Status.FAIL,
                f"slow: {_summary(res)} with {peers_of(group, h)} (the others run at the "
                f"threshold without it; named in round {_round(out, group)}/{out.rounds}){took}",
                res,
                via=res.host,
                peer=peers_of(group, h),
                record=_record(res, group, out, jobs),
                tests=[dict(j) for j in jobs],
            )
        elif h in out.fine and (whole_ok or not nobody_named):
            res, group = out.fine[h]
            ctx.finish(
                h,
                Status.PASS,
                f"at the threshold in a job over {len(group)} host(s){took}",
                res,
                via=res.host,
                peer=peers_of(group, h),
                record=_record(res, group, out, jobs),
                tests=[dict(j) for j in jobs],
            )
        elif h in out.fine:  # every part at the threshold, the whole below it
            res, group = out.whole[1]
            ctx.finish(
                h,
                Status.FAIL,
                f"below the threshold over {len(group)} hosts, yet every smaller group "
                f"is at it: the fabric between them (spines), not one host ({_summary(res)}){took}",
                res,
                via=res.host,
                peer=_fold(group),
                record=_record(res, group, out, jobs),
                tests=[dict(j) for j in jobs],
            )
        else:
            ev = out.unknown.get(h)
            res = ev[0] if ev else None
            why = res.verdict.reason if res is not None else "not settled within the rounds allowed"
            if not launchers:
                why = "no launcher could run the job: " + "; ".join(tried)
            ctx.finish(h, Status.UNKNOWN, why + left, res, via=res.host if res else "")


async def _job(ctx: Ctx, launcher: str, group: list[str], extra, judge_vars) -> HostOutcome:
    """One job on `launcher`, under its marker; ended there if it was cut short."""
    directory = launchjob.job_dir(ctx.engine.run_id, ctx.step.id, group)
    try:
        res = await ctx.run(
            launcher,
            ctx.step.verify.run,
            extra,
            judge_vars=judge_vars,
            wrap=lambda command: launchjob.wrap(command, directory, group),
        )
    except asyncio.CancelledError:
        # a stop: end the job before the hosts are recorded (the runner records
        # the rest interrupted once this returns); shielded from a second cancel
        said = await asyncio.shield(_stop(ctx, launcher, launchjob.stop_command(directory)))
        _interrupted(ctx, group, launcher, said)
        raise
    if not res.assessed and res.extra.get("started_remote"):
        # timed out or the connection dropped: the job may run on; end it now
        said = await asyncio.shield(_stop(ctx, launcher, launchjob.stop_command(directory)))
        res.verdict.reason += f"; {said}"
        res.record = {"cleanup": said}
    return res


async def _stop(ctx: Ctx, launcher: str, text: str) -> str:
    """Run a stop command on the launcher: one line saying what it did."""
    try:
        res = await asyncio.wait_for(
            ctx.engine.transport.run(launcher, text, timeout=launchjob.STOP_TIMEOUT),
            launchjob.STOP_TIMEOUT + 5,
        )
    except Exception as exc:  # unreachable: the job stays, and the reason says so
        return f"the job on {launcher} could not be ended: {exc or 'no answer'}"
    if res.unknown_reason:
        return f"the job on {launcher} could not be ended: {res.unknown_reason}"
    lines = launchjob.ended(res.stdout)
    if lines:
        return f"{launcher}: " + "; ".join(line.removeprefix("runbook: ") for line in lines)
    return f"{launcher}: " + ((res.stdout.strip().splitlines() or ["?"])[-1]).removeprefix("runbook: ")


async def _sweep(ctx: Ctx, launchers: list[str]) -> list[str]:
    """End the jobs of this run's step still on any launcher candidate (a run killed
    mid-job leaves them: nothing stopped them). Returns what was ended."""
    text = launchjob.stop_step_command(ctx.engine.run_id, ctx.step.id)
    said = await asyncio.gather(*(_stop(ctx, h, text) for h in launchers))
    return [s for s in said if launchjob.ENDED.removeprefix("runbook: ") in s]


def _interrupted(ctx: Ctx, group: list[str], launcher: str, said: str) -> None:
    """The job's hosts, interrupted, with what the stop did on the launcher (the
    journal's record of the clean-up; engine/detached.py does the same for
    detached jobs)."""
    for h in group:
        started = ctx.engine._in_flight.get((ctx.step.id, h))
        if started is None or h not in ctx.open:
            continue
        ctx.open.discard(h)
        ctx.engine._emit(
            HostFinished(
                ctx.step.id,
                "verify",
                h,
                Status.INTERRUPTED.value,
                f"interrupted: the run was stopped; {said}",
                command=started.command,
                started=started.time,
                via=launcher if launcher != h else "",
            )
        )


def _summary(res: HostOutcome | None) -> str:
    return res.verdict.reason if res is not None and res.verdict.reason else "below the threshold"


def _fold(hosts) -> str:
    return folded(tuple(hosts)) if hosts else ""


def _round(out, group) -> int:
    return next((r for r, g, _s in reversed(out.jobs) if list(g) == list(group)), out.rounds)


def _jobs(out) -> list[dict]:
    """Every job of the split, kept in the journal (HostFinished.tests)."""
    return [{"round": r, "hosts": _fold(list(g)), "status": s} for r, g, s in out.jobs]


def _record(res: HostOutcome | None, group: list[str], out, jobs: list[dict]) -> dict:
    return {
        "job": _fold(group),
        "result": res.record if res is not None else None,
        "rounds": out.rounds,
        "jobs": [dict(j) for j in jobs],  # each host's record its own (the folds are shared)
    }
