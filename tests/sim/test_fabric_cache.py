"""The master SM and the PKey tables are kept between reads (sim/fabric.py) and
must follow every change of what decides them."""

from __future__ import annotations

import pytest

from runbook.sim import partitions
from runbook.sim.cluster import Cluster


def fresh_master(fab):
    running = fab.sm_ports()
    return sorted(running, key=lambda s: (-s.priority, s.guid))[0] if running else None


def fresh_pkeys(fab, node, nic):
    st = fab.status(node, nic)
    if st.layer != "InfiniBand":
        return []
    master = fresh_master(fab)
    if st.state != "Active" or master is None:
        return [0xFFFF]
    text = master.partitions
    return partitions.pkey_table(
        partitions.parse(text) if text is not None else None, nic.guid, master.node is node
    )


def check(cluster):
    fab = cluster.fabric
    expected = fresh_master(fab)
    got = fab.master()
    assert (got and (got.name, got.lid, got.partitions)) == (
        expected and (expected.name, expected.lid, expected.partitions)
    )
    for node in cluster.nodes.values():
        for nic in node.nics:
            assert fab.pkeys(node, nic) == fresh_pkeys(fab, node, nic), (node.name, nic.dev)


def _sm_changes(cluster):
    sm01, sm02 = cluster.nodes["sm01"], cluster.nodes["sm02"]
    conf = "/etc/opensm/partitions.conf"
    gpu01 = cluster.nodes["gpu01"]
    g = f"0x{gpu01.nics[0].guid:016x}"
    return [
        lambda: None,
        lambda: setattr(sm01.opensm, "running", False),  # fail-over to sm02
        lambda: sm02.files.__setitem__(
            conf, f"Default=0x7fff, ipoib : ALL=full;\nstorage=0x0002 : {g}=full;\n"
        ),
        lambda: setattr(sm01.opensm, "running", True),
        lambda: setattr(sm02.opensm, "priority", 15),
        lambda: setattr(sm02.nics[0], "phys_up", False),
        lambda: sm01.files.pop(conf, None),  # no partitions.conf: the default table
        lambda: setattr(gpu01.nics[0], "phys_up", False),
    ]


@pytest.mark.parametrize("upto", [1, 2, 3, 4, 5, 6, 7, 8])
def test_master_and_pkeys_follow_every_change(design, upto):
    cluster = Cluster.build(design, 3)
    check(cluster)
    for change in _sm_changes(cluster)[:upto]:
        change()
        check(cluster)
