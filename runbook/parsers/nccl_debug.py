"""NCCL_DEBUG=INFO lines (from any NCCL program: nccl-tests, PyTorch, ...).

Record:
  nccl_version:   "2.27.6+cuda13.0" (the first "NCCL version" seen; null if none)
  nccl_versions:  every distinct version seen (two means mixed installs across ranks)
  hosts:          the host names in the line prefixes "host:pid:tid [dev] NCCL INFO"
  net:            "IB" | "Socket" | ... from "Using network IB" (null if not shown)
  ib_devices:     [{index, device, port, link_layer ("IB" | "RoCE")}] from
                  "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>"
  relaxed_ordering: "[RO]" on that line (bool; null if the line is absent)
  oob:            {interface, address} of that line | null
  bootstrap:      [{interface, address}] from "Bootstrap: Using enp9s0np0:10.99.0.2<0>"
  env:            {VAR: value} from "VAR set by environment to value" (e.g. NCCL_SOCKET_IFNAME)
  channels:       [{host, channel, from_rank, to_rank, direction ("send" | "receive" | null),
                    transport ("NET/IB/5/GDRDMA", "P2P/IPC", "SHM/direct/direct"), kind
                    ("NET" | "P2P" | "SHM" | "COLLNET" ...), net ("IB", "Socket", null),
                    net_device (int | null), gdrdma (bool)}]
  transports:     the distinct transports without device numbers ("NET/IB/GDRDMA", "P2P/IPC")
  net_channels:   how many channels go through the network
  gdrdma:         True when every network channel says GDRDMA, False when some does not
                  (or, without channel lines, when NCCL said "GPU Direct RDMA Disabled" for
                  the HCAs and never "Enabled"), null when the text cannot tell
  gdr_disabled:   [{index, device}] from "GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
  gdr_enabled:    [{index, device}] from "GPU Direct RDMA Enabled for HCA 0 'mlx5_0'"
  net_plugin_found: False for "No plugin found" / "Could not find: libnccl-net.so",
                  null when not said
  warnings:       the text of every "NCCL WARN" line
  rank_labels:    "srun" | "mpirun" | null, as for nccl-tests
Other lines (nccl-tests tables, MPI noise) are ignored; text without a single
"NCCL INFO" / "NCCL WARN" line is not NCCL_DEBUG output.
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of, strip_rank_label
from .base import Parser, Record

_LINE = re.compile(
    r"^(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>[^\]]*)\]\s+NCCL\s+"
    r"(?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$"
)
_VERSION = re.compile(r"NCCL version (\S+)")
_CHANNEL = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/\d+)?\s*:\s*(?P<src>\d+)(?:\[\w+\])?\s*->\s*(?P<dst>\d+)(?:\[\w+\])?"
    r"(?:\s*\[(?P<dir>send|receive)\])?\s+via\s+(?P<via>\S+)"
)
_IB_USING = re.compile(r"^NET/IB\s*:\s*Using\s+(?P<devs>.*?)\s*;\s*OOB\s+(?P<oob>\S+)")
_IB_DEV = re.compile(r"\[(?P<i>\d+)\](?P<dev>[\w.-]+):(?P<port>\d+)/(?P<ll>\w+)")
_ADDR = re.compile(r"^(?P<ifname>[^:\s]+):(?P<addr>.+?)(?:<\d+>)?$")
_GDR = re.compile(
    r"GPU Direct RDMA (?P<state>Enabled|Disabled) for (?:GPU \S+ / )?HCA (?P<i>\d+) '(?P<dev>[^']+)'"
)
_ENV = re.compile(r"^(?P<var>[A-Z][A-Z0-9_]+) set by environment to (?P<value>.*?)\.?$")


def _addr(text: str) -> Record:
    m = _ADDR.match(text)
    return {"interface": m["ifname"], "address": m["addr"]} if m else {"interface": text, "address": None}


def _channel(host: str, m: re.Match) -> Record:
    parts = m["via"].split("/")
    kind = parts[0]
    net = parts[1] if kind == "NET" and len(parts) > 1 else None
    device = None
    if kind == "NET" and len(parts) > 2:
        d = re.match(r"\d+", parts[2])
        device = int(d.group(0)) if d else None
    return {
        "host": host,
        "channel": int(m["ch"]),
        "from_rank": int(m["src"]),
        "to_rank": int(m["dst"]),
        "direction": m["dir"],
        "transport": m["via"],
        "kind": kind,
        "net": net,
        "net_device": device,
        "gdrdma": "GDRDMA" in parts,
    }


def parse_nccl_debug(text: str) -> Record:
    record: Record = {
        "nccl_version": None,
        "nccl_versions": [],
        "hosts": [],
        "net": None,
        "ib_devices": [],
        "relaxed_ordering": None,
        "oob": None,
        "bootstrap": [],
        "env": {},
        "channels": [],
        "gdr_disabled": [],
        "gdr_enabled": [],
        "net_plugin_found": None,
        "warnings": [],
    }
    labels: set[str] = set()
    nccl_lines = 0
    for raw in lines_of(text):
        line, label = strip_rank_label(raw.strip())
        if label:
            labels.add(label)
        line = line.strip()
        m = _LINE.match(line)
        if not m:
            v = _VERSION.match(line)  # NCCL 2.5 printed a bare "NCCL version ..." line
            if v and v.group(1) not in record["nccl_versions"]:
                record["nccl_versions"].append(v.group(1))
            continue
        nccl_lines += 1
        host, msg = m["host"], m["msg"].strip()
        if host not in record["hosts"]:
            record["hosts"].append(host)
        if m["level"] == "WARN":
            record["warnings"].append(msg)
            continue
        if (v := _VERSION.match(msg)) and v.group(1) not in record["nccl_versions"]:
            record["nccl_versions"].append(v.group(1))
        elif c := _CHANNEL.match(msg):
            record["channels"].append(_channel(host, c))
        elif u := _IB_USING.match(msg):
            record["ib_devices"] = [
                {"index": int(d["i"]), "device": d["dev"], "port": int(d["port"]), "link_layer": d["ll"]}
                for d in _IB_DEV.finditer(u["devs"])
            ]
            record["relaxed_ordering"] = "[RO]" in u["devs"]
            record["oob"] = _addr(u["oob"])
        elif msg.startswith("Using network "):
            record["net"] = msg.split()[2]
        elif msg.startswith("Bootstrap: Using ") or msg.startswith("Bootstrap : Using "):
            found = _addr(msg.split("Using", 1)[1].strip().split()[0])
            if found not in record["bootstrap"]:
                record["bootstrap"].append(found)
        elif g := _GDR.search(msg):
            key = "gdr_enabled" if g["state"] == "Enabled" else "gdr_disabled"
            entry = {"index": int(g["i"]), "device": g["dev"]}
            if entry not in record[key]:
                record[key].append(entry)
        elif e := _ENV.match(msg):
            record["env"][e["var"]] = e["value"]
        elif "No plugin found" in msg or "Could not find: libnccl-net" in msg:
            record["net_plugin_found"] = False
    if nccl_lines == 0:
        fail("NCCL_DEBUG=INFO lines like 'host:pid:tid [0] NCCL INFO ...'", text)
    net_channels = [c for c in record["channels"] if c["kind"] == "NET"]
    transports = []
    for c in record["channels"]:
        name = "/".join(p for p in c["transport"].split("/") if not re.match(r"\d", p))
        if name not in transports:
            transports.append(name)
    record.update(
        {
            "nccl_version": record["nccl_versions"][0] if record["nccl_versions"] else None,
            "transports": transports,
            "net_channels": len(net_channels),
            "gdrdma": (
                all(c["gdrdma"] for c in net_channels)
                if net_channels
                else False
                if record["gdr_disabled"] and not record["gdr_enabled"]
                else None
            ),
            "rank_labels": "mpirun" if "mpirun" in labels else ("srun" if labels else None),
        }
    )
    return record


PARSERS = [
    Parser(
        name="nccl-debug",
        reads="any NCCL program run with NCCL_DEBUG=INFO",
        func=parse_nccl_debug,
        description="NCCL_DEBUG=INFO: NCCL version, NET/IB devices, transport per channel, "
        "GDRDMA or not, bootstrap interface",
    )
]
