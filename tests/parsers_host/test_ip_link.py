"""ip-link on every real `ip -d link show` / `ip addr show` IPoIB capture."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture

DIRECTORY = "ip-link-ipoib"
EXPECTED = {
    "ip-d-link-show-mlx5_ib0.8001-child-netlink-created-pkey-0x8001-mode-datagram-state-DOWN-noop.txt": {
        "names": ["mlx5_ib0.8001"],
        ("interfaces", "mlx5_ib0.8001", "parent"): "mlx5_ib0",
        ("interfaces", "mlx5_ib0.8001", "mtu"): 4092,
        ("interfaces", "mlx5_ib0.8001", "state"): "DOWN",
        ("interfaces", "mlx5_ib0.8001", "up"): False,
        ("interfaces", "mlx5_ib0.8001", "qdisc"): "noop",
        ("interfaces", "mlx5_ib0.8001", "ipoib"): {
            "pkey": "0x8001",
            "pkey_int": 0x8001,
            "full_member": True,
            "mode": "datagram",
            "umcast": "0000",
        },
        ("interfaces", "mlx5_ib0.8001", "broadcast_pkey"): "0x8001",
        ("interfaces", "mlx5_ib0.8001", "port_guid"): "0x248a070300a31964",
        ("interfaces", "mlx5_ib0.8001", "details", "numtxqueues"): 1,
        ("interfaces", "mlx5_ib0.8001", "details", "maxmtu"): 65520,
    },
    "ip-d-link-show-mlx5_ib0-parent-patched-kernel-ipoib-pkey-0xffff-mode-datagram-UP-mtu2044.txt": {
        "names": ["mlx5_ib0"],
        "interfaces.mlx5_ib0.parent": None,
        "interfaces.mlx5_ib0.mtu": 2044,
        "interfaces.mlx5_ib0.up": True,
        "interfaces.mlx5_ib0.state": "UP",
        "interfaces.mlx5_ib0.ipoib.pkey": "0xffff",
        "interfaces.mlx5_ib0.ipoib.mode": "datagram",
        "interfaces.mlx5_ib0.broadcast_pkey": "0xffff",
        "interfaces.mlx5_ib0.details.numrxqueues": 32,
        "interfaces.mlx5_ib0.details.addrgenmode": "none",
        "interfaces.mlx5_ib0.link_mode": "DEFAULT",
    },
    "ip-addr-show-ib0-RHEL-docs-mtu65520-connected-altname-ibp7s0-ibs2-dynamic-inet.txt": {
        "names": ["ib0"],
        "interfaces.ib0.mtu": 65520,
        "interfaces.ib0.ipoib": None,
        "interfaces.ib0.altnames": ["ibp7s0", "ibs2"],
        "interfaces.ib0.inet": ["172.31.0.181/24"],
        "interfaces.ib0.inet6": ["fe80::f652:1403:7b:e1b1/64"],
        "interfaces.ib0.link_type": "infiniband",
        "interfaces.ib0.port_guid": "0xf4521403007be1b1",
        "interfaces.ib0.broadcast_pkey": "0xffff",
        "interfaces.ib0.qdisc": "fq_codel",
        "interfaces.ib0.qlen": 256,
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("ip-link", DIRECTORY, name, EXPECTED[name])


def test_connected_mode_limited_member_child():
    text = (
        "9: ib4.0200@ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP mode DEFAULT group default qlen 256\n"
        "    link/infiniband 00:00:10:49:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:4e:11:20 brd "
        "00:ff:ff:ff:ff:12:40:1b:02:00:00:00:00:00:00:00:ff:ff:ff:ff promiscuity 0\n"
        "    ipoib pkey  0x0200 mode  connected umcast  0000 addrgenmode eui64\n"
    )
    iface = parse("ip-link", text)["interfaces"]["ib4.0200"]
    assert iface["ipoib"]["mode"] == "connected" and iface["ipoib"]["full_member"] is False
    assert iface["broadcast_pkey"] == "0x0200" and iface["parent"] == "ib4"


def test_garbage_is_refused():
    with pytest.raises(ParseError, match="ip link"):
        parse("ip-link", 'Device "ib9" does not exist.\n')
