"""`launch:`: one job (mpirun over a host file) run from a launcher host over
the step's hosts; below the threshold, split until the slow hosts are named
(split.py). Every host gets its own verdict: slow, cleared, or unknown."""

from __future__ import annotations

from typing import Any

from ClusterShell.NodeSet import NodeSet

from ...definition.kinds import launch_variables
from ...definition.model import Status
from .common import Ctx, HostOutcome
from .split import isolate


async def run_launch(ctx: Ctx, hosts: list[str]) -> None:
    spec, verify = ctx.step.launch, ctx.step.verify
    launchers = ctx.select(spec.launcher)
    tried: list[str] = []
    members = list(hosts)
    if len(members) == 1:  # resume of one host: run it with a host that already passed
        done = [h for h in ctx.partners() if h not in members]
        members += done[:1]

    async def probe(group: list[str]) -> tuple[Status, Any]:
        extra = launch_variables(group, ctx.vars)  # launch_ranks: one rank per GPU of its nodes
        for h in group:
            if h in hosts and launchers:
                ctx.running_as(h, verify.run, launchers[0], extra)  # the job as its launcher runs it
        while launchers:
            launcher = launchers[0]
            res = await ctx.run(launcher, verify.run, extra, judge_vars={**ctx.vars(launcher), **extra})
            if res.assessed:
                return res.verdict.status, (res, group)
            tried.append(res.verdict.reason)
            launchers.pop(0)  # unreachable: the next launcher takes over
        return Status.UNKNOWN, (None, group)

    # hosts that already passed (a resumed run): partners for a single suspect
    done = [h for h in ctx.partners() if h not in members]
    out = await isolate(members, probe, split=spec.split, max_parallel=spec.max_parallel, cleared=done)
    took = f"; launcher taken over after: {'; '.join(tried)}" if tried else ""
    whole_ok = out.whole is not None and out.whole[0] == Status.PASS
    nobody_named = not out.slow and not out.unknown
    for h in hosts:
        if h in out.slow:
            res, group = out.slow[h]
            others = [g for g in group if g != h]
            if not spec.split:
                ctx.finish(
                    h,
                    Status.FAIL,
                    f"{_summary(res)} (job over {len(group)} hosts, not split){took}",
                    res,
                    via=res.host,
                    peer=_fold(others),
                    record=_record(res, group, out),
                    tests=_jobs(out),
                )
                continue
            ctx.finish(
                h,
                Status.FAIL,
                f"slow: {_summary(res)} with {_fold(others)} (the others run at the "
                f"threshold without it; named in round {_round(out, group)}/{out.rounds}){took}",
                res,
                via=res.host,
                peer=_fold(others),
                record=_record(res, group, out),
                tests=_jobs(out),
            )
        elif h in out.fine and (whole_ok or not nobody_named):
            res, group = out.fine[h]
            ctx.finish(
                h,
                Status.PASS,
                f"at the threshold in a job over {len(group)} host(s){took}",
                res,
                via=res.host,
                peer=_fold([g for g in group if g != h]),
                record=_record(res, group, out),
                tests=_jobs(out),
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
                record=_record(res, group, out),
                tests=_jobs(out),
            )
        else:
            ev = out.unknown.get(h)
            res = ev[0] if ev else None
            why = res.verdict.reason if res is not None else "not settled within the rounds allowed"
            if not launchers:
                why = "no launcher could run the job: " + "; ".join(tried)
            ctx.finish(h, Status.UNKNOWN, why, res, via=res.host if res else "")


def _summary(res: HostOutcome | None) -> str:
    return res.verdict.reason if res is not None and res.verdict.reason else "below the threshold"


def _fold(hosts: list[str]) -> str:
    return str(NodeSet.fromlist(hosts)) if hosts else ""


def _round(out, group) -> int:
    return next((r for r, g, _s in reversed(out.jobs) if list(g) == list(group)), out.rounds)


def _jobs(out) -> list[dict]:
    """Every job of the split, kept in the journal (HostFinished.tests)."""
    return [{"round": r, "hosts": _fold(list(g)), "status": s} for r, g, s in out.jobs]


def _record(res: HostOutcome | None, group: list[str], out) -> dict:
    return {
        "job": _fold(group),
        "result": res.record if res is not None else None,
        "rounds": out.rounds,
        "jobs": _jobs(out),
    }
