"""A job's peers folded for each of its hosts (runbook/engine/kinds/peers.py)
must be what NodeSet itself folds: the group less the host, for every host of
many groups (padding mixed, gaps, suffixes, several patterns, one host)."""

from __future__ import annotations

import random

from ClusterShell.NodeSet import NodeSet

from runbook.engine.kinds import peers
from runbook.engine.kinds.peers import peers_of


def _nodeset_answer(group: list[str], host: str) -> str:
    return str(NodeSet.fromlist([h for h in group if h != host]))


def _groups(rng: random.Random):
    yield ["gpu0001"]
    yield ["gpu01", "gpu02"]
    yield [f"gpu{i:04d}" for i in range(1, 1001)]  # the 1,000-node job
    yield ["n8", "n9", "n10", "n11"]  # unpadded across a digit boundary
    yield ["n08", "n09", "n10", "n100", "n7"]  # padded next to unpadded
    yield ["gpu1", "gpu01", "gpu001", "gpu2"]  # the same numbers, three paddings
    yield ["gpu01.seed-dc.internal", "gpu02.seed-dc.internal", "gpu04.seed-dc.internal"]
    yield ["rack1node01", "rack1node02", "rack1node03", "rack2node01"]  # two dimensions
    yield ["gpu01", "gpu02", "sm01", "sm02"]  # two patterns
    yield ["login", "gpu01", "gpu02"]  # a name without digits
    for _ in range(60):
        pad = rng.choice([0, 2, 3, 4])
        nums = rng.sample(range(0, 300), rng.randint(1, 40))
        prefix = rng.choice(["gpu", "node-", "c", "r1n"])
        suffix = rng.choice(["", ".ib", "-a"])
        yield [f"{prefix}{n:0{pad}d}{suffix}" for n in nums]


def test_peers_are_what_nodeset_folds_for_every_host_of_every_group():
    rng = random.Random(18)
    checked = 0
    for group in _groups(rng):
        # NodeSet's answer costs ~20 ms a host at 1,000: there, the ends and a sample
        hosts = group if len(group) <= 100 else group[:3] + rng.sample(group, 30) + group[-3:]
        for host in hosts:
            assert peers_of(group, host) == _nodeset_answer(group, host), (group, host)
            checked += 1
        assert peers_of(group, "not-in-the-group") == str(NodeSet.fromlist(group))
    assert checked > 800


def test_a_one_pattern_group_takes_the_fast_path():
    # the fast path really runs for the common shape (not everything through NodeSet)
    group = [f"gpu{i:04d}" for i in range(1, 1001)]
    assert peers._ranges(tuple(group)) == ("gpu", "", [("0001", "1000", 4)])
    assert peers_of(group, "gpu0500") == "gpu[0001-0499,0501-1000]"
    assert peers._ranges(("gpu01", "sm01")) is None  # two patterns: NodeSet's own answer
