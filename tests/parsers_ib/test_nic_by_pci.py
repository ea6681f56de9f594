"""The *-by-pci parsers: a tool's real output preceded by `ibdev2netdev -v`
lines, read into the tool's own record plus the PCI address -> device map.

The `ibdev2netdev -v` lines below follow the layout MLNX_OFED prints (PCI
address, device, "(MTxxxx - part) description fw X port N (STATE) ==> netdev
(Up|Down)", a down port as "(DOWN )"); no real -v capture is in the fixture
corpus, the tool outputs they precede are the real fixtures."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import text

V_LINES = (
    "0000:41:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter Card fw 28.43.2026 "
    "port 1 (ACTIVE) ==> ibp65s0 (Up)\n"
    "0000:54:00.0 mlx5_1 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter Card fw 28.43.2026 "
    "port 1 (DOWN ) ==> ibp84s0 (Down)\n"
)


def test_ibdev2netdev_v_reads_a_down_port_with_its_padding():
    ports = parse("ibdev2netdev", V_LINES)["ports"]
    assert [(p["pci"], p["ibdev"], p["port_state"], p["fw"]) for p in ports] == [
        ("0000:41:00.0", "mlx5_0", "ACTIVE", "28.43.2026"),
        ("0000:54:00.0", "mlx5_1", "DOWN", "28.43.2026"),
    ]


def test_ibstat_by_pci_on_the_real_h20_output():
    real = text("ibstat", "H20-node-CX7-MT4129-NDR400-IB-Active-lid50-49-SMlid1-first-2-CAs-only.txt")
    record = parse("ibstat-by-pci", V_LINES + real)
    assert record["pci_map"] == {"0000:41:00.0": "mlx5_0", "0000:54:00.0": "mlx5_1"}
    assert record["by_name"]["mlx5_1"]["ports"]["1"]["base_lid"] == 49
    assert record["firmware"] == "MT4129 28.43.2026"
    assert parse("ibstat", real)["by_name"] == record["by_name"]  # the tool's own record, unchanged


def test_sysfs_pkeys_by_pci_on_the_real_azure_transcript():
    real = text("sysfs-infiniband-pkeys", "Azure-HPC-VM-mlx5_0-pkeys0-0x800b-pkeys1-0x7fff-with-commands.txt")
    record = parse("sysfs-pkeys-by-pci", V_LINES.splitlines(keepends=True)[0] + real)
    assert record["pci_map"] == {"0000:41:00.0": "mlx5_0"}
    assert record["by_device"] == {"mlx5_0": {"1": ["0x800b", "0x7fff"]}}


def test_rail_links_reads_the_real_iblinkinfo_ca_lines():
    links = text(
        "iblinkinfo", "MQM8700-HDR-switch-4xEDR-HCAs-SHARP-aggregation-node-CA-and-Switch-headers-elided.txt"
    )
    own = "\n".join(x for x in links.splitlines() if x.startswith("      0x"))  # what `grep -F GUIDS` keeps
    real_stat = text("ibstat", "H20-node-CX7-MT4129-NDR400-IB-Active-lid50-49-SMlid1-first-2-CAs-only.txt")
    record = parse("rail-links-by-pci", V_LINES + real_stat + own + "\n")
    first = record["ca_links"][0]
    assert first == {
        "guid": "0xb88303ffff7f61c4",
        "lid": 6,
        "port": 1,
        "state": "Active",
        "phys_state": "LinkUp",
        "width": "4X",
        "speed": "25.78125 Gbps",
        "remote_lid": 3,
        "remote_port": 3,
        "remote": "MF0;ibswitch254:MQM8700/U1",
    }
    assert len(record["ca_links"]) == len(own.splitlines())
    assert set(record["by_name"]) == {"mlx5_0", "mlx5_1"}


@pytest.mark.parametrize(
    "parser",
    [
        "ibstat-by-pci",
        "sysfs-pkeys-by-pci",
        "rail-links-by-pci",
        "sysfs-numa-node-by-pci",
        "sysfs-link-layer-by-pci",
        "nvidia-smi-topo-by-pci",
    ],
)
def test_without_the_pci_lines_or_the_tool_output_it_refuses(parser):
    real = text("ibstat", "H20-node-CX7-MT4129-NDR400-IB-Active-lid50-49-SMlid1-first-2-CAs-only.txt")
    with pytest.raises(ParseError, match="ibdev2netdev -v"):
        parse(parser, real)
    with pytest.raises(ParseError):
        parse(parser, V_LINES)
