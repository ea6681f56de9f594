"""The GPU↔NIC topology picture's data, from the signed log alone: for each
host the `gpu-nic-topology` design step judged, the `nvidia-smi topo -m` cell
between each rail NIC (`compute_devices`, in rail order) and each GPU, parsed
again from the recorded output with the step's own parser; the cells the
verdict names as not designed ("(mlx5_1) vs GPU2: expected PIX/PXB, found
SYS"); and each GPU's nearest rail NIC against the one most hosts have nearest
(the fleet's). The log does not carry the design variables themselves
(compute_nics, nic_gpu_relation): the verdict is the design's word.

Only the hosts that deviate are drawn, plus one that does not as the
example, so 48 nodes do not make a 48-grid report. Drawn by topology_svg.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..parsers import parse
from .verdicts import fold

# nvidia-smi topo -m's legend, nearest first (NV# = NVLink: nearer than any PCIe path).
RANK = {"X": 0, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6, "SOC": 6}
_NAMED = re.compile(r"\((?P<dev>[^)\s]+)\) vs (?P<gpu>GPU\d+): expected (?P<want>\S+), found (?P<found>\S+)")
SHOW_AT_MOST = 16  # deviating hosts drawn; the rest are listed by NodeSet


def rank(cell: str) -> int:
    return 1 if cell.startswith("NV") else RANK.get(cell, 9)


@dataclass
class TopoNode:
    host: str
    status: str
    nics: list[str]  # rows: rail NIC devices, rail order
    gpus: list[str]  # columns: GPU0..
    cells: dict[tuple[str, str], str]  # (dev, gpu) -> relation as printed
    named: dict[tuple[str, str], str] = field(default_factory=dict)  # (dev, gpu) -> "expected X"
    nearest: dict[str, list[str]] = field(default_factory=dict)  # gpu -> its nearest rail NIC(s)
    off: list[str] = field(default_factory=list)  # GPUs whose nearest NIC is not the fleet's

    @property
    def deviates(self) -> bool:
        return self.status == "fail" or bool(self.named) or bool(self.off)


@dataclass
class TopoPicture:
    step_id: str
    fleet_nearest: dict[str, str]  # gpu -> the rail NIC most hosts have nearest
    shown: list[TopoNode]
    as_designed: str  # folded NodeSet of the hosts that do not deviate
    not_shown: str = ""  # deviating hosts beyond SHOW_AT_MOST
    unreadable: list[str] = field(default_factory=list)


def _topo_parser(step: dict) -> str | None:
    verify = (step.get("definition") or {}).get("verify") or {}
    if any(isinstance(c, dict) and c.get("design") == "gpu-nic-topology" for c in verify.get("expect") or []):
        return verify.get("parse")
    return None


def _rail_devices(doc: dict, host: str, record: dict) -> list[str]:
    v = ((doc.get("inventory") or {}).get("hosts") or {}).get(host) or {}
    devs = v.get("compute_devices")
    if isinstance(devs, list) and devs:
        return [str(d) for d in devs]
    return sorted(d for d in record.get("nic_by_device") or {})  # no design: every NIC shown


def _node(host: str, status: str, reason: str, record: dict, devs: list[str]) -> TopoNode:
    matrix = record.get("matrix_by_device") or {}
    gpus = [g["name"] for g in record.get("gpus") or [] if isinstance(g, dict) and g.get("name")]
    cells = {(d, g): str(matrix.get(d, {}).get(g, "")) for d in devs for g in gpus}
    named = {
        (m["dev"], m["gpu"]): f"expected {m['want']}"
        for m in _NAMED.finditer(reason or "")
        if m["dev"] in devs
    }
    nearest = {}
    for g in gpus:
        present = [(rank(cells[(d, g)]), d) for d in devs if cells[(d, g)]]
        if present:
            best = min(r for r, _d in present)
            nearest[g] = [d for r, d in present if r == best]
    return TopoNode(host, status, devs, gpus, cells, named, nearest)


def topology_pictures(doc: dict) -> list[TopoPicture]:
    pictures = []
    verdicts = (doc.get("summary") or {}).get("verdicts") or {}
    for step in doc.get("steps") or []:
        parser = _topo_parser(step)
        if not parser:
            continue
        sid = step.get("id", "")
        nodes: list[TopoNode] = []
        unreadable: list[str] = []
        for r in doc.get("results") or []:
            if r.get("step_id") != sid or r.get("action") != "verify":
                continue
            host = r.get("host", "")
            try:
                record: Any = parse(parser, r.get("stdout") or "")
            except Exception:  # any unreadable output: said, not drawn
                unreadable.append(host)
                continue
            v = verdicts.get(sid, {}).get(host) or {}
            nodes.append(
                _node(
                    host,
                    v.get("status", r.get("status", "")),
                    v.get("reason", ""),
                    record,
                    _rail_devices(doc, host, record),
                )
            )
        if not nodes and not unreadable:
            continue
        fleet = _fleet_nearest(nodes)
        for n in nodes:
            n.off = [g for g, want in fleet.items() if g in n.nearest and want not in n.nearest[g]]
        nodes.sort(key=lambda n: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n.host)])
        bad = [n for n in nodes if n.deviates]
        good = [n for n in nodes if not n.deviates]
        shown = bad[:SHOW_AT_MOST] + good[:1]
        pictures.append(
            TopoPicture(
                sid,
                fleet,
                shown,
                fold([n.host for n in good]) if good else "",
                fold([n.host for n in bad[SHOW_AT_MOST:]]) if len(bad) > SHOW_AT_MOST else "",
                unreadable,
            )
        )
    return pictures


def _fleet_nearest(nodes: list[TopoNode]) -> dict[str, str]:
    """Per GPU, the rail NIC most hosts have nearest (a tie counts for each NIC)."""
    votes: dict[str, dict[str, int]] = {}
    for n in nodes:
        for g, devs in n.nearest.items():
            for d in devs:
                votes.setdefault(g, {})[d] = votes.setdefault(g, {}).get(d, 0) + 1
    return {g: max(v, key=lambda d: (v[d], -len(d))) for g, v in votes.items()}
