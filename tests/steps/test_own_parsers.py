"""The parsers written for the runbook's own scripts (sha256sum, ip addr, the
IRQ listing, per-device loops of mlxconfig and ib_write_bw)."""

from __future__ import annotations

import pytest

from runbook import parsers
from runbook.parsers import ParseError

from .helpers import fixture

D1 = "a" * 64
D2 = "b" * 64


def test_sha256sum_text_and_binary_mode():
    rec = parsers.parse("sha256sum", f"{D1}  /etc/chrony.conf\n{D2} */etc/sysctl.d/90-gpu.conf\n")
    assert rec["files"] == {"/etc/chrony.conf": D1, "/etc/sysctl.d/90-gpu.conf": D2}
    assert rec["count"] == 2


@pytest.mark.parametrize("text", ["", "sha256sum: /etc/x: No such file or directory\n", "abc  /etc/x\n"])
def test_sha256sum_refuses_what_it_cannot_read(text):
    with pytest.raises(ParseError):
        parsers.parse("sha256sum", text)


IP_ADDR = """\
7: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP group default qlen 256
    link/infiniband 00:00:10:87:fe:80:00:00:00:00:00:00:b8:59:9f:03:10:00:01:04 brd 00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff
    altname ibp24s0
    inet 10.20.1.1/16 brd 10.20.255.255 scope global noprefixroute ib4
       valid_lft forever preferred_lft forever
    inet6 fe80::ba59:9f03:1000:104/64 scope link
       valid_lft forever preferred_lft forever
"""


def test_ip_addr_reads_an_ipoib_interface():
    rec = parsers.parse("ip-addr", IP_ADDR)
    ib4 = rec["interfaces"]["ib4"]
    assert ib4["up"] and ib4["lower_up"] and ib4["state"] == "UP"
    assert ib4["link_type"] == "infiniband" and ib4["mtu"] == 2044
    assert ib4["inet"] == ["10.20.1.1/16"] and ib4["inet6"] == ["fe80::ba59:9f03:1000:104/64"]


def test_ip_addr_child_interface_and_garbage():
    rec = parsers.parse("ip-addr", "8: ib4.8200@ib4: <BROADCAST,MULTICAST> mtu 2044 state DOWN\n")
    assert rec["interfaces"]["ib4.8200"]["parent"] == "ib4"
    assert rec["interfaces"]["ib4.8200"]["up"] is False
    with pytest.raises(ParseError):
        parsers.parse("ip-addr", 'Device "ib4" does not exist.\n')


IRQS = """\
mlx5_0 numa_node 0 local_cpulist 0-31,64-95
mlx5_0 irq 120 0-31,64-95
mlx5_0 irq 121 5
mlx5_9 numa_node  local_cpulist 
"""


def test_irq_listing_keyed_by_device_with_restore_words():
    rec = parsers.parse("irq-affinity", IRQS)
    d = rec["devices"]["mlx5_0"]
    assert d["numa_node"] == 0 and d["local_cpus"][:2] == [0, 1] and len(d["local_cpus"]) == 64
    assert d["irqs"] == {"120": "0-31,64-95", "121": "5"} and d["irq_cpus"]["121"] == [5]
    assert rec["devices"]["mlx5_9"]["local_cpus"] == []  # sysfs files missing: kept, empty
    assert rec["restore"] == ["120=0-31,64-95", "121=5"]


def test_irq_listing_refuses_foreign_text():
    with pytest.raises(ParseError):
        parsers.parse("irq-affinity", "cat: /sys/class/infiniband/mlx5_0/device/numa_node: No such file\n")


def _mlx_block(dev: str, param: str, default: str, current: str, nxt: str) -> str:
    return f"""
Device #1:
----------

Device type:        ConnectX7
Name:               MCX75310AAS-NEA_Ax
Description:        NVIDIA ConnectX-7 HHHL Adapter Card; 400GbE / NDR IB (default mode)
Device:             {dev}

Configurations:                                          Default         Current         Next Boot
        {param:<44}{default:<16}{current:<16}{nxt}
"""


def test_mlxconfig_per_device_merges_blocks_and_gives_restore_words():
    text = (
        _mlx_block("mlx5_0", "LINK_TYPE_P1", "ETH(2)", "IB(1)", "IB(1)")
        + _mlx_block("mlx5_3", "LINK_TYPE_P1", "ETH(2)", "ETH(2)", "IB(1)")
        + _mlx_block("mlx5_6", "LINK_TYPE_P1", "ETH(2)", "IB(1)", "IB(1)")
        + _mlx_block("mlx5_6", "LINK_TYPE_P2", "ETH(2)", "ETH(2)", "ETH(2)")
    )
    rec = parsers.parse("mlxconfig-per-device", text)
    assert rec["by_device"]["mlx5_3"] == {"LINK_TYPE_P1": "ETH(2)"}  # Current, the value in force
    assert rec["by_device"]["mlx5_6"] == {"LINK_TYPE_P1": "IB(1)", "LINK_TYPE_P2": "ETH(2)"}
    assert rec["restore"] == [
        "mlx5_0:LINK_TYPE_P1=1",
        "mlx5_3:LINK_TYPE_P1=2",
        "mlx5_6:LINK_TYPE_P1=1",
        "mlx5_6:LINK_TYPE_P2=2",
    ]


def test_mlxconfig_per_device_on_the_real_full_query():
    rec = parsers.parse("mlxconfig-per-device", fixture("mlxconfig/CX5-MCX555A-full-query"))
    assert rec["by_device"]["/dev/mst/mt4119_pciconf0"]["LINK_TYPE_P1"] == "IB(1)"
    assert rec["restore"] == ["/dev/mst/mt4119_pciconf0:LINK_TYPE_P1=1"]


def test_mlxconfig_per_device_needs_the_device_line():
    text = fixture("mlxconfig/CX6Lx-mlxconfig-e-query")  # a fragment without "Device:"
    with pytest.raises(ParseError):
        parsers.parse("mlxconfig-per-device", text)


def test_ib_write_bw_per_device_on_real_output_twice():
    one = fixture("ib_write_bw/DGX-Spark")
    rec = parsers.parse("ib_write_bw-per-device", one + one.replace("rocep1s0f0", "rocep1s0f1"))
    assert [r["device"] for r in rec["runs"]] == ["rocep1s0f0", "rocep1s0f1"]
    assert rec["by_device"] == {"rocep1s0f0": 111.61, "rocep1s0f1": 111.61}


def test_ib_write_bw_per_device_keeps_a_run_without_result():
    one = fixture("ib_write_bw/DGX-Spark")
    cut = one.replace("rocep1s0f0", "mlx5_1")
    cut = cut[: cut.index(" #bytes")]  # header printed, the test never finished
    rec = parsers.parse("ib_write_bw-per-device", one + cut)
    assert rec["by_device"]["mlx5_1"] is None and rec["runs"][1]["error"]
    with pytest.raises(ParseError):
        parsers.parse("ib_write_bw-per-device", "Couldn't connect to localhost:18515\n")
