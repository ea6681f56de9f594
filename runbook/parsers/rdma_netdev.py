"""Which RDMA port is which network interface: `rdma link` (iproute2) and
`ibdev2netdev [-v]` (MLNX_OFED / DOCA)."""

from __future__ import annotations

import re

from ._ib_common import bad_line, not_recognised, numbered
from .base import Parser, Record

# --- rdma link -----------------------------------------------------------------
# "link mlx5_4/1 lid 8 ... state ACTIVE ..." (older iproute2: "1/1: mlx5_4/1: state ...")
_LINK = re.compile(r"^(?:link\s+|\d+/\d+:\s+)(\S+?)/(\d+):?\s*(.*)$")
_INT_KEYS = {"lid", "sm_lid", "lmc"}


def parse_rdma_link(text: str) -> Record:
    links = []
    for lineno, line in numbered(text):
        if not line.strip():
            continue
        m = _LINK.match(line.strip())
        if not m:
            if not links:
                raise not_recognised("rdma-link", "'link DEV/PORT ... state ...' lines", text)
            raise bad_line("rdma-link", lineno, "'link DEV/PORT key value ...'", line)
        link = {
            "dev": m.group(1),
            "port": int(m.group(2)),
            "state": None,
            "physical_state": None,
            "lid": None,
            "sm_lid": None,
            "lmc": None,
            "subnet_prefix": None,
            "netdev": None,
        }
        words = m.group(3).split()
        for key, value in zip(words[0::2], words[1::2]):
            link[key] = int(value) if key in _INT_KEYS and value.isdigit() else value
        if len(words) % 2:
            raise bad_line("rdma-link", lineno, "key/value pairs after the port", line)
        links.append(link)
    if not links:
        raise not_recognised("rdma-link", "'link DEV/PORT ... state ...' lines", text)
    return {"links": links}


# --- ibdev2netdev --------------------------------------------------------------
# plain: "mlx5_0 port 1 ==> ibp26s0 (Down)"
# -v:    "0000:3b:00.0 mlx5_0 (MT4117 - MCX4121A-ACAT) CX4121A ... fw 14.30.1004 port 1 (ACTIVE) ==> ens1f0 (Up)"
_LINE = re.compile(
    r"^(?:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+)?(?P<ibdev>\S+)\s+"
    r"(?:(?P<details>.*?)\s+fw\s+(?P<fw>\S+)\s+)?port\s+(?P<port>\d+)\s+"
    r"(?:\(\s*(?P<port_state>\w+)\s*\)\s+)?==>\s+(?P<netdev>\S+)\s+\((?P<state>\w+)\)\s*(?:#.*)?$"
)


def parse_ibdev2netdev(text: str) -> Record:
    ports = []
    for lineno, line in numbered(text):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if not m:
            if not ports:
                raise not_recognised("ibdev2netdev", "'mlx5_0 port 1 ==> ib0 (Up)' lines", text)
            raise bad_line("ibdev2netdev", lineno, "'IBDEV port N ==> NETDEV (Up|Down)'", line)
        ports.append(
            {
                "ibdev": m["ibdev"],
                "port": int(m["port"]),
                "netdev": m["netdev"],
                "state": m["state"],
                "pci": m["pci"],
                "fw": m["fw"],
                "port_state": m["port_state"],
                "details": m["details"],
            }
        )
    if not ports:
        raise not_recognised("ibdev2netdev", "'mlx5_0 port 1 ==> ib0 (Up)' lines", text)
    return {"ports": ports}


PARSERS = [
    Parser(
        name="rdma-link",
        reads="rdma link [show]",
        func=parse_rdma_link,
        description="rdma link show: per RDMA link state, physical state, netdev",
    ),
    Parser(
        name="ibdev2netdev",
        reads="ibdev2netdev [-v]",
        func=parse_ibdev2netdev,
        description="RDMA device port -> netdev mapping with link state",
    ),
]
