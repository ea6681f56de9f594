"""The automatic split names the slow hosts within ⌈log2 N⌉ + 2 rounds."""

import asyncio
import math

import pytest

from runbook.definition.model import Status
from runbook.engine.kinds.split import bound, isolate


def slow_probe(slow: set[str], calls: list[list[str]]):
    async def probe(group):
        calls.append(list(group))
        await asyncio.sleep(0)
        return (Status.FAIL if slow & set(group) else Status.PASS), ("evidence", tuple(group))

    return probe


@pytest.mark.parametrize("n", [4, 5, 7, 8, 13, 33, 48, 64, 100])
def test_one_slow_host_named_within_the_bound_wherever_it_is(n):
    hosts = [f"gpu{i:03d}" for i in range(1, n + 1)]
    for culprit in {hosts[0], hosts[n // 2], hosts[-1]}:
        calls: list[list[str]] = []
        out = asyncio.run(isolate(hosts, slow_probe({culprit}, calls)))
        assert set(out.slow) == {culprit}
        assert set(out.fine) == set(hosts) - {culprit}
        assert not out.unknown
        assert out.rounds <= math.ceil(math.log2(n)) + 2 == bound(n)
        # every job of a round shares no host with another job of that round
        for r in range(1, out.rounds + 1):
            members = [h for rr, g, _s in out.jobs if rr == r for h in g]
            assert len(members) == len(set(members)), (r, out.jobs)


def test_a_compliant_job_runs_once():
    calls: list[list[str]] = []
    hosts = [f"n{i}" for i in range(16)]
    out = asyncio.run(isolate(hosts, slow_probe(set(), calls)))
    assert calls == [hosts] and out.rounds == 1 and set(out.fine) == set(hosts)


def test_two_slow_hosts_in_different_halves_both_named():
    hosts = [f"n{i:02d}" for i in range(32)]
    out = asyncio.run(isolate(hosts, slow_probe({"n03", "n29"}, [])))
    assert set(out.slow) == {"n03", "n29"} and not out.unknown


def test_rounds_are_bounded_even_when_nothing_ever_passes():
    hosts = [f"n{i}" for i in range(16)]
    out = asyncio.run(isolate(hosts, slow_probe(set(hosts), [])))
    assert out.rounds <= bound(16)
    assert not out.fine and not out.slow and set(out.unknown) == set(hosts)


def test_without_split_the_job_verdict_goes_to_every_host():
    hosts = ["a", "b", "c"]
    out = asyncio.run(isolate(hosts, slow_probe({"b"}, []), split=False))
    assert set(out.slow) == set(hosts) and out.rounds == 1


def test_parallel_jobs_are_bounded():
    running, peak = [0], [0]

    async def probe(group):
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return (Status.FAIL if {"n05", "n21", "n40", "n60"} & set(group) else Status.PASS), None

    asyncio.run(isolate([f"n{i:02d}" for i in range(64)], probe, max_parallel=3))
    assert peak[0] == 3


def test_two_hosts_cannot_name_the_slow_one_and_say_so():
    # Neither runs with a third, cleared host: both stay unknown, none is blamed.
    out = asyncio.run(isolate(["a", "b"], slow_probe({"a"}, [])))
    assert not out.slow and not out.fine and set(out.unknown) == {"a", "b"}


def test_hosts_cleared_before_serve_as_partners():
    # a resumed run over the hosts still to do: two suspects, no good host among them
    out = asyncio.run(isolate(["a", "b"], slow_probe({"a"}, []), cleared=["z"]))
    assert set(out.slow) == {"a"} and set(out.fine) == {"b"}
    assert ("a", "z") in [tuple(g) for _r, g, _s in out.jobs]
