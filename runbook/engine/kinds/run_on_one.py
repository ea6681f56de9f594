"""`run_on: one`: one host runs the command for a group; the record's items
(links, ports) are judged one by one and each verdict goes to the hosts the
item names. If the runner cannot be reached, the next candidate takes over."""

from __future__ import annotations

from typing import Any

from ...criteria.host import judge_host
from ...criteria.paths import select
from ...definition.model import Action, Status
from .common import Ctx, HostOutcome


def _item_hosts(item: Any, fields: tuple[str, ...]) -> list[str]:
    found = []
    for f in fields:
        for v in select(item, f):
            if isinstance(v, str) and v:
                word = v.split()[0]  # a node description "gpu07 mlx5_2" names gpu07
                found.append(word)
                if "." in word:  # rdma-ndd's "%h %d" is the FQDN on most sites: gpu07.dc.example mlx5_2
                    found.append(word.split(".")[0])  # only names of the judged hosts are kept
    return found


def _name(item: Any, fields: str) -> str:
    parts = []
    for f in (x.strip() for x in fields.split(",") if x.strip()):
        for v in select(item, f):
            parts.append(f"port {v}" if f == "port" else str(v))
    return " ".join(parts)


def judge_items(ctx: Ctx, record: Any, hosts: list[str]) -> dict[str, list[tuple[str, Status, str]]]:
    """host -> [(item name, status, reason)] for every item attributed to a host of `hosts`."""
    spec, verify = ctx.step.run_on, ctx.step.verify
    per_item = Action(
        run=verify.run,
        parse=verify.parse or "record",
        expect=tuple(c for c in verify.expect if c.kind != "exit"),
    )
    wanted = set(hosts)
    out: dict[str, list[tuple[str, Status, str]]] = {}
    items = select(record, spec.items)
    if len(items) == 1 and isinstance(items[0], list):
        items = items[0]
    for i, item in enumerate(items):
        name = _name(item, spec.item_name) or f"{spec.items}[{i}]"
        for h in dict.fromkeys(_item_hosts(item, spec.item_hosts)):
            if h not in wanted:
                continue
            v = judge_host(per_item, 0, "", ctx.vars(h), item, None)
            out.setdefault(h, []).append((str(name), v.status, v.reason))
    return out


async def run_on_one(ctx: Ctx, hosts: list[str]) -> None:
    spec, verify = ctx.step.run_on, ctx.step.verify
    # run_from naming only groups the inventory declares empty (no SM node where the
    # SM runs on a switch: lint allows nothing else to select no host): the step's hosts run it
    candidates = (ctx.select(spec.run_from) if spec.run_from else []) or list(
        ctx.engine._all_targets(ctx.step)
    )
    if candidates:  # the command as the first runner runs it
        ctx.running_as_one_job(hosts, verify.run, candidates[0])
    tried: list[str] = []
    res: HostOutcome | None = None
    # The whole output is judged on its exit status and parse only; the criteria are per item.
    whole = Action(
        run=verify.run,
        parse=verify.parse,
        expect=tuple(c for c in verify.expect if c.kind == "exit"),
        timeout=verify.timeout,
    )
    for runner in candidates:
        r = await ctx.run(runner, verify.run, action=whole)
        if r.assessed:
            res = r
            break
        tried.append(r.verdict.reason)  # unreachable: the next candidate takes over
    if res is None:
        for h in hosts:
            ctx.finish(h, Status.UNKNOWN, "no host could run it: " + "; ".join(tried or ["no candidate"]))
        return
    via = res.host
    taken = f" (taken over by {via}: {'; '.join(tried)})" if tried else ""
    if not spec.items and res.record is not None:  # each host judged on the whole record
        for h in hosts:
            v = judge_host(verify, res.exit_status, res.stdout, ctx.vars(h), res.record, None)
            ctx.finish(h, v.status, (v.reason or f"as designed, seen by {via}") + taken, res, via=via)
        return
    if res.record is None or not select(res.record, spec.items):
        why = res.verdict.reason or "no record parsed from the output"
        status = Status.FAIL if res.verdict.status == Status.FAIL else Status.UNKNOWN
        for h in hosts:
            ctx.finish(h, status, f"on {via}: {why}{taken}", res, via=via)
        return
    judged = judge_items(ctx, res.record, hosts)
    covered = _covered(res.record, spec.covered) if spec.unseen == "pass" else None
    for h in hosts:
        items = judged.get(h)
        if not items and covered is not None and covered >= len(ctx.engine._all_targets(ctx.step)):
            ctx.finish(
                h,
                Status.PASS,
                f"nothing reported for it by {via} ({spec.covered} = {covered}){taken}",
                res,
                via=via,
                record={"items": []},
            )
            continue
        if not items:
            why = (
                f"not seen in {via}'s output"
                if covered is None
                else f"{spec.covered} = {covered}: fewer nodes checked than the hosts judged"
            )
            ctx.finish(h, Status.UNKNOWN, why + taken, res, via=via, record={})
            continue
        bad = [(n, s, r) for n, s, r in items if s != Status.PASS]
        record = {"items": [{"name": n, "status": s.value, "reason": r} for n, s, r in items]}
        if not bad:
            ctx.finish(
                h,
                Status.PASS,
                f"{len(items)} seen by {via}, all as expected{taken}",
                res,
                via=via,
                record=record,
            )
            continue
        status = Status.FAIL if any(s == Status.FAIL for _n, s, _r in bad) else Status.UNKNOWN
        links = ", ".join(n for n, _s, _r in bad)
        reason = "; ".join(f"{n}: {r}" for n, _s, r in bad[:4]) + (
            f"; … {len(bad) - 4} more" if len(bad) > 4 else ""
        )
        ctx.finish(h, status, reason + taken, res, via=via, link=links, record=record)


def _covered(record: Any, path: str) -> int | None:
    found = [v for v in select(record, path) if isinstance(v, int) and not isinstance(v, bool)]
    return found[0] if found else None
