"""`pairs:`: server/client tests between two nodes.

For each test: start the server side, wait until it prints its `ready` banner
(read from its live output; no sleeps), run the client (verify.run, parsed and
judged), then collect the server's side. A NIC (and the GPU next to it) is in
one test at a time, at most `concurrency` tests run at once, and with
`cross_leaf` at most that many go up from one leaf and come down into one
(leaves.py).

A slow pair fails both ends at first; then each end of a slow pair is tested
again against a partner that was fast, on the same NIC. An end slow again is
the culprit: its link (host NIC ↔ leaf) when it is slow on one rail, the host
when on several. An end fast with another partner is cleared."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from ...criteria.paths import select
from ...criteria.verdict import Verdict
from ...definition.model import Action, Status
from ...definition.template import TemplateError
from .common import Ctx, HostOutcome
from .leaves import LeafLoad, leaf_finder
from .plans import PairTest, end_label, plan, retest

Outcome = tuple[HostOutcome, HostOutcome | None]  # client result, server result


def _nics(ctx: Ctx):
    def of(host: str) -> list[dict[str, Any]]:
        v = ctx.vars(host).get("compute_nics") or []
        return [n for n in v if isinstance(n, dict)]

    return of


def _peer(ctx: Ctx, host: str) -> dict[str, Any]:
    h = ctx.engine.inventory.hosts[host]
    return {**ctx.vars(host), "name": host, "address": h.address}


class LeftServers:
    """The servers a killed run may have left listening, stopped by their ports
    (`cleanup`): on each host once, for all the ports it serves on in the step,
    just before its first server of the step starts. Not all hosts first: that
    was a round trip to every server host (500 of 1,000 nodes) before any test
    could start."""

    def __init__(self, ctx: Ctx, tests: list[PairTest]):
        self.ctx = ctx
        self.nics: dict[str, dict[tuple, dict[str, Any]]] = {}
        for t in tests:
            self.nics.setdefault(t.server, {})[t.server_nic] = t.snic
        self.done: dict[str, asyncio.Future] = {}

    async def stop_before(self, t: PairTest) -> None:
        """Once per host: its ports' left servers stopped (a retest's partner,
        not planned as a server, has its own test's port)."""
        job = self.done.get(t.server)
        if job is None:
            nics = self.nics.get(t.server) or {t.server_nic: t.snic}
            job = self.done[t.server] = asyncio.ensure_future(cleanup(self.ctx, t.server, *nics.values()))
        await asyncio.shield(job)  # a cancelled test leaves it to the others waiting on it

    def cancel(self) -> None:
        for job in self.done.values():
            job.cancel()


async def run_test(ctx: Ctx, t: PairTest, left: LeftServers | None = None) -> Outcome:
    spec, verify = ctx.step.pairs, ctx.step.verify
    banner = re.compile(spec.ready)
    ready = asyncio.Event()

    def on_line(_stream: str, line: str) -> None:
        if banner.search(line):
            ready.set()

    port = port_of(t.snic)
    server_vars = {
        "peer": _peer(ctx, t.client),
        "nic": t.snic,
        "peer_nic": t.cnic,
        "rail": t.snic.get("rail"),
        "port": port,
    }
    client_vars = {
        "peer": _peer(ctx, t.server),
        "nic": t.cnic,
        "peer_nic": t.snic,
        "rail": t.cnic.get("rail"),
        "port": port,
    }
    server_action = Action(run=spec.server, timeout=verify.timeout + spec.ready_timeout)
    for h, tmpl, extra in ((t.server, spec.server, server_vars), (t.client, verify.run, client_vars)):
        ctx.running_as(h, tmpl, h, extra)
    if left is not None:
        await left.stop_before(t)
    server = asyncio.create_task(
        ctx.run(t.server, spec.server, server_vars, action=server_action, on_line=on_line)
    )
    waiter = asyncio.create_task(ready.wait())
    stopped = False  # we ended the server's session: the server may still run on its node
    try:
        await asyncio.wait({server, waiter}, timeout=spec.ready_timeout, return_when=asyncio.FIRST_COMPLETED)
        if not ready.is_set():
            stopped = not server.done()
            srv = await _stop(server)
            why = (
                (srv.verdict.reason or (srv.stderr.strip().splitlines() or ["exited"])[-1])
                if srv
                else f"no `{spec.ready}` within {spec.ready_timeout:.0f}s"
            )
            blank = HostOutcome(
                t.client,
                "",
                Verdict(Status.UNKNOWN, f"server {t.server} did not listen: {why}"),
                assessed=False,
            )
            return blank, srv
        client = await ctx.run(t.client, verify.run, client_vars)
        if server.done() and not server.cancelled() and server.exception() is None and not client.assessed:
            # perftest prints its banner before it binds its port (write_bw.c, then
            # establish_connection): a server that failed after the banner explains the client
            srv = server.result()
            why = srv.verdict.reason or (srv.stderr.strip().splitlines() or ["exited"])[-1]
            client.verdict = Verdict(Status.UNKNOWN, f"{client.verdict.reason}; server {t.server}: {why}")
            return client, srv
        # A client that timed out or could not run leaves no partner for the server:
        # end it now, not after the grace a finished test gets to print its side.
        grace = 10 if client.assessed and client.exit_status == 0 else 0
        try:
            srv = await asyncio.wait_for(asyncio.shield(server), timeout=grace) if grace else None
        except TimeoutError:
            srv = None
        if srv is None:
            stopped = not server.done()
            srv = await _stop(server)
        return client, srv
    except asyncio.CancelledError:
        stopped = stopped or not server.done()
        if not server.done():
            server.cancel()
        raise
    finally:
        waiter.cancel()
        if not server.done():
            stopped = True
            server.cancel()
        if stopped:  # the server must not stay behind on the node (stop, timeout, kill)
            await asyncio.shield(cleanup(ctx, t.server, t.snic))


BASE_PORT = 18515  # perftest's default TCP port; one port per rail so a node's servers do not collide


def port_of(nic: dict[str, Any]) -> int:
    return BASE_PORT + int(nic.get("rail") or 0)


async def cleanup(ctx: Ctx, host: str, *nics: dict[str, Any]) -> None:
    """Stop the servers left on `host`'s ports for `nics` (by the step's `cleanup:`,
    filled in for each), in one command: best effort, nothing judged."""
    spec = ctx.step.pairs
    if not spec.cleanup:
        return
    lines = []
    for nic in nics:
        try:
            lines.append(ctx.render(spec.cleanup, host, {"nic": nic, "port": port_of(nic)}))
        except TemplateError:  # the test itself reports it when its command is built
            continue
    if not lines:
        return
    try:
        await asyncio.wait_for(ctx.engine.transport.run(host, "\n".join(lines), timeout=30.0), 35)
    except (TimeoutError, OSError):
        pass


async def _stop(task: asyncio.Task) -> HostOutcome | None:
    if task.done():
        return None if task.cancelled() else task.result()
    task.cancel()
    try:
        return await task
    except asyncio.CancelledError:
        return None


async def schedule(
    ctx: Ctx, tests: list[PairTest], concurrency: int, leaves: LeafLoad, left: LeftServers | None = None
) -> dict[PairTest, Outcome]:
    """Run the tests, each NIC in one test at a time, at most `concurrency` at once
    and at most `leaves`' limit crossing out of or into one leaf."""
    pending = [t for t in dict.fromkeys(tests) if len(set(t.ends())) == 2]  # a NIC never tests itself
    busy: set[tuple[str, str]] = set()
    running: dict[asyncio.Task, PairTest] = {}
    results: dict[PairTest, Outcome] = {}
    try:
        while pending or running:
            for t in list(pending):
                if len(running) >= concurrency:
                    break
                ends = set(t.ends())
                if ends & busy or len(ends) < 2 or not leaves.fits(t):
                    continue
                busy |= ends
                leaves.take(t)
                pending.remove(t)
                running[asyncio.create_task(run_test(ctx, t, left))] = t
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                t = running.pop(task)
                busy -= set(t.ends())
                leaves.give_back(t)
                results[t] = task.result()
    except asyncio.CancelledError:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        if left is not None:  # every test is over: a cleanup still running is no one's
            left.cancel()
    return results


async def run_pairs(ctx: Ctx, hosts: list[str]) -> None:
    spec = ctx.step.pairs
    nics = _nics(ctx)
    all_hosts = ctx.partners()
    # Resume: only the tests with a host still to do; their partners may be done hosts.
    wanted = set(hosts)
    tests = [t for t in plan(spec.plan, all_hosts, nics, spec.pairs) if {t.client, t.server} & wanted]
    # A run killed mid-test may have left servers listening: each host's are stopped
    # by their ports before its first server starts, one command per host for all
    # its server ports (500 commands, not 2,000, on 1,000 nodes of 4 rails).
    left = LeftServers(ctx, tests)
    leaves = LeafLoad(spec.cross_leaf, leaf_finder(ctx.vars))
    results = await schedule(ctx, tests, spec.concurrency, leaves, left)

    slow = {t: o for t, o in results.items() if o[0].assessed and o[0].verdict.status == Status.FAIL}
    fast_ends = {
        (h, d) for t, o in results.items() if o[0].verdict.status == Status.PASS for h, d in t.ends()
    }
    # Tie-break: every end of a slow pair against a fast partner on the same rail.
    second: dict[tuple[str, str], PairTest] = {}
    for t in slow:
        for (host, dev), nic in zip(t.ends(), (t.cnic, t.snic)):
            if (host, dev) in fast_ends or (host, dev) in second:
                continue
            other = t.server if host == t.client else t.client
            partner = _partner(ctx, nics, host, nic, other, fast_ends, second, all_hosts)
            if partner:
                second[(host, dev)] = retest((host, nic), t, *partner)
    again = await schedule(ctx, list(second.values()), spec.concurrency, leaves, left) if second else {}
    _judge(ctx, hosts, results, slow, second, again, fast_ends)


def _partner(ctx, nics, host, nic, other, fast_ends, second, all_hosts):
    """A fast end on the same rail (or any fast end), not `host`, `other` or already a partner."""
    used = {h for t in second.values() for h in (t.client, t.server)}
    rail = nic.get("rail")
    for h in all_hosts:
        if h in (host, other) or h in used:
            continue
        for n in nics(h) or [{}]:
            if (h, str(n.get("dev", ""))) in fast_ends and n.get("rail") == rail:
                return h, n
    return None


def measured(ctx: Ctx, t: PairTest, out: Outcome, retested: bool) -> dict[str, Any]:
    """One test as the journal keeps it (HostFinished.tests): both ends, the value
    the step's first `path:` criterion reads from the client's record, the verdict."""
    client = out[0]
    path = next((c.path for c in ctx.step.verify.expect if c.kind == "path" and c.path), None)
    found = select(client.record, path) if path and client.record is not None else []
    value = found[0] if found and isinstance(found[0], (int, float)) else None
    return {
        "client": t.client,
        "client_dev": str(t.cnic.get("dev", "")),
        "client_rail": t.cnic.get("rail"),
        "server": t.server,
        "server_dev": str(t.snic.get("dev", "")),
        "server_rail": t.snic.get("rail"),
        "path": path or "",
        "value": value,
        "status": client.verdict.status.value if client.assessed else Status.UNKNOWN.value,
        "reason": client.verdict.reason,
        "retest": retested,
    }


def _judge(ctx: Ctx, hosts, results, slow, second, again, fast_ends) -> None:
    tests: dict[str, list[dict[str, Any]]] = {}
    for done, retested in ((results, False), (again, True)):
        for t, out in done.items():
            m = measured(ctx, t, out, retested)
            for h in dict.fromkeys((t.client, t.server)):
                tests.setdefault(h, []).append(m)
    culprits: dict[str, list[str]] = {}  # host -> labels of its slow ends
    cleared: set[tuple[str, str]] = set(fast_ends)
    evidence: dict[str, tuple[HostOutcome, str, str]] = {}
    for (host, dev), t in second.items():
        out = again.get(t)
        if out is None:
            continue
        nic = t.cnic if host == t.client else t.snic
        if out[0].assessed and out[0].verdict.status == Status.FAIL:
            culprits.setdefault(host, []).append(end_label(host, nic))
            partner = t.server if host == t.client else t.client
            evidence[host] = (out[0], partner, out[0].verdict.reason)
        elif out[0].verdict.status == Status.PASS:
            cleared.add((host, dev))
    per_host: dict[str, list[tuple[Status, str, HostOutcome, str, str]]] = {}
    for t, (client, _srv) in list(results.items()) + list(again.items()):
        for host, dev in t.ends():
            peer = t.server if host == t.client else t.client
            st = client.verdict.status
            if st == Status.PASS:
                item = (Status.PASS, f"{t.label}: {client.verdict.reason or 'as expected'}", client, peer, "")
            elif not client.assessed or st == Status.UNKNOWN:
                item = (Status.UNKNOWN, f"{t.label}: {client.verdict.reason}", client, peer, "")
            elif (host, dev) in cleared and host not in culprits:
                item = (
                    Status.PASS,
                    f"{t.label} slow, but this end is fast with another partner",
                    client,
                    peer,
                    "",
                )
            elif host in culprits:  # tested again and slow again: judged below as a culprit
                continue
            else:
                why = (
                    "the second test did not settle it"
                    if (host, dev) in second
                    else "no fast partner to break the tie"
                )
                item = (Status.FAIL, f"{t.label}: {client.verdict.reason} ({why})", client, peer, t.label)
            per_host.setdefault(host, []).append(item)
    for host in hosts:
        if host in culprits:
            ends = culprits[host]
            rails = {e for e in ends}
            what = (
                f"the host {host} (slow on {', '.join(sorted(rails))})"
                if len(rails) > 1
                else f"the link {ends[0]}"
            )
            res, partner, reason = evidence[host]
            ctx.finish(
                host,
                Status.FAIL,
                f"{what}: slow with two different partners ({reason})",
                res,
                peer=partner,
                link=", ".join(ends),
                tests=tests.get(host, ()),
            )
            continue
        items = per_host.get(host, [])
        if not items:
            ctx.finish(host, Status.UNKNOWN, "in no test (no partner on its rails)")
            continue
        for status in (Status.FAIL, Status.UNKNOWN, Status.PASS):
            chosen = [i for i in items if i[0] == status]
            if chosen:
                _s, reason, res, peer, link = chosen[0]
                more = f" (+{len(chosen) - 1} more)" if len(chosen) > 1 else ""
                if status == Status.PASS:
                    tie = [i for i in chosen if "fast with another partner" in i[1]]
                    _s, reason, res, peer, link = tie[0] if tie else chosen[0]
                    reason = reason if tie else f"{len(items)} test(s) as expected"
                    more = ""
                ctx.finish(host, status, reason + more, res, peer=peer, link=link, tests=tests.get(host, ()))
                break
