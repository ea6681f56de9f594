"""NIC evidence keyed by PCI address. `mlx5_N` follows probe order: when one card
dies the others are renumbered, so a step that names NICs by device blames the
wrong card. These parsers read a tool's output preceded by `ibdev2netdev -v`
(whose lines start with the PCI address: "0000:18:00.0 mlx5_0 (MT4129 - ...)
... port 1 (ACTIVE) ==> ib0 (Up)") and add the map from PCI address to device
name, so a criterion finds each designed card by its slot.

Every parser here adds to the inner tool's record:
  pci_map: {"0000:18:00.0": "mlx5_0"}    (addresses in full 0000:bb:dd.f form)
  pci_ports: the ibdev2netdev records (ibdev, pci, fw, port_state, netdev, ...)
An output with no ibdev2netdev -v line at all is refused: the verify asked for
it, and without it no device can be tied to its slot.

  ibstat-by-pci          ibdev2netdev -v; ibstat
  sysfs-pkeys-by-pci     ibdev2netdev -v; grep -H . /sys/class/infiniband/*/ports/1/pkeys/*
  sysfs-numa-node-by-pci ibdev2netdev -v; grep -H . /sys/class/infiniband/*/device/numa_node
  sysfs-link-layer-by-pci ibdev2netdev -v; grep -H . /sys/class/infiniband/*/ports/1/link_layer
  nvidia-smi-topo-by-pci ibdev2netdev -v; nvidia-smi topo -m
  rail-links-by-pci      ibdev2netdev -v; ibstat; iblinkinfo | grep -F "$(ibstat -p)"
      adds ca_links: [{guid, lid, port, state, phys_state, width, speed,
      remote_lid, remote_port, remote}] - the iblinkinfo lines of this node's
      own ports (found by GUID, whatever the node description says).
"""

from __future__ import annotations

import re

from . import ibstat as ibstat_parser
from . import nvidia_smi_topo, rdma_netdev, sysfs_infiniband
from ._hosttext import lines_of
from .base import ParseError, Parser, Record

_PCI_LINE = re.compile(r"^\s*[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\s+\S+\s.*==>")
_CA_LINK = re.compile(
    r"^\s*(?P<guid>0x[0-9a-fA-F]{16})\s+(?P<lid>\d+)\s+(?P<port>\d+)\[\s*\d*\s*\]\s+"
    r"==\(\s*(?:(?P<width>\d+X)\s+(?P<speed>[\d.]+ Gbps)\s+)?(?P<state>\w+)/\s*(?P<phys>\w+)\s*\)==>\s*"
    r"(?P<rlid>\d+)\s+(?P<rport>\d+)\[\s*\d*\s*\]\s+\"(?P<remote>[^\"]*)\""
)


def pci_address(value: str) -> str:
    """'18:00.0' / '0000:18:00.0' / '0000:18:00.0 ' -> '0000:18:00.0' (lower case)."""
    v = str(value).strip().lower()
    return v if v.count(":") == 2 else "0000:" + v


def _split(text: str, tool: str) -> tuple[Record, list[str]]:
    mapped, rest = [], []
    for line in lines_of(text):
        (mapped if _PCI_LINE.match(line) else rest).append(line)
    if not mapped:
        raise ParseError(
            f'{tool}: no `ibdev2netdev -v` line ("0000:18:00.0 mlx5_0 (...) ... port 1 (ACTIVE) '
            '==> ib0 (Up)"): cannot tie the devices to their PCI slots'
        )
    ports = rdma_netdev.parse_ibdev2netdev("\n".join(mapped))["ports"]
    pci_map = {pci_address(p["pci"]): p["ibdev"] for p in ports if p["pci"]}
    return {"pci_map": pci_map, "pci_ports": ports}, rest


def _with_map(tool: str, inner):
    def parse(text: str) -> Record:
        extra, rest = _split(text, tool)
        if not any(x.strip() for x in rest):
            raise ParseError(
                f"{tool}: only the `ibdev2netdev -v` part is there; the tool's own output is missing"
            )
        return {**inner("\n".join(rest)), **extra}

    return parse


def parse_rail_links(text: str) -> Record:
    extra, rest = _split(text, "rail-links-by-pci")
    links, stat = [], []
    for line in rest:
        m = _CA_LINK.match(line)
        if m:
            links.append(
                {
                    "guid": m["guid"].lower(),
                    "lid": int(m["lid"]),
                    "port": int(m["port"]),
                    "state": m["state"],
                    "phys_state": m["phys"],
                    "width": m["width"],
                    "speed": m["speed"],
                    "remote_lid": int(m["rlid"]),
                    "remote_port": int(m["rport"]),
                    "remote": m["remote"],
                }
            )
        else:
            stat.append(line)
    if not any(x.strip() for x in stat):
        raise ParseError("rail-links-by-pci: the `ibstat` part is missing (it gives each device's port GUID)")
    return {**ibstat_parser.parse_ibstat("\n".join(stat)), **extra, "ca_links": links}


def parse_ibstat_by_pci(text: str) -> Record:
    """Adds `firmware`: "MT4123 20.39.1002, MT4129 28.39.1002" - each CA type
    with its firmware versions, one string a fleet-wide `consistent:` compares."""
    record = _with_map("ibstat-by-pci", ibstat_parser.parse_ibstat)(text)
    seen = sorted({f"{ca.get('type')} {ca.get('firmware_version')}" for ca in record["by_name"].values()})
    return {**record, "firmware": ", ".join(seen)}


PARSERS = [
    Parser(
        name="ibstat-by-pci",
        reads="ibdev2netdev -v; ibstat",
        func=parse_ibstat_by_pci,
        description="ibstat with each CA keyed by its PCI address (from ibdev2netdev -v); firmware summary",
    ),
    Parser(
        name="sysfs-pkeys-by-pci",
        reads="ibdev2netdev -v; grep -H . /sys/class/infiniband/*/ports/1/pkeys/*",
        func=_with_map("sysfs-pkeys-by-pci", sysfs_infiniband.parse_pkeys),
        description="P_Key tables from sysfs, keyed by the NIC's PCI address",
    ),
    Parser(
        name="nvidia-smi-topo-by-pci",
        reads="ibdev2netdev -v; nvidia-smi topo -m",
        func=_with_map("nvidia-smi-topo-by-pci", nvidia_smi_topo.parse_topo),
        description="nvidia-smi topo -m with the NICs named by PCI address",
    ),
    Parser(
        name="sysfs-link-layer-by-pci",
        reads="ibdev2netdev -v; grep -H . /sys/class/infiniband/*/ports/1/link_layer",
        func=_with_map("sysfs-link-layer-by-pci", sysfs_infiniband.parse_link_layer),
        description="port link layer (InfiniBand/Ethernet) from sysfs, keyed by PCI address",
    ),
    Parser(
        name="sysfs-numa-node-by-pci",
        reads="ibdev2netdev -v; grep -H . /sys/class/infiniband/*/device/numa_node",
        func=_with_map("sysfs-numa-node-by-pci", sysfs_infiniband.parse_numa_node),
        description="each NIC's NUMA node from sysfs, keyed by PCI address",
    ),
    Parser(
        name="rail-links-by-pci",
        reads='ibdev2netdev -v; ibstat; iblinkinfo | grep -F "$(ibstat -p)"',
        func=parse_rail_links,
        description="each local IB port's switch and switch port, matched by port GUID, keyed by PCI address",
    ),
]
