"""The rail cabling picture's data, from the signed log alone: for each host the
rail-cabling step judged, which leaf each of its IB ports reaches (parsed again
from the recorded output with the step's own parser), which links the verdict
names as wrong, and which the link-health steps name as slow or erroring (a
pair step's named link, a failing `link-ber` or fabric sweep whose reason names
the port). Drawn by rail_svg.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..criteria.designs.cabling import _guids, _switch_name
from ..parsers import parse
from ..parsers._ib_common import guid
from ..parsers.nic_by_pci import pci_address
from .pair_view import latest_finished, named_ends

_EXPECTED = re.compile(r"expected on (\S+)")


@dataclass
class RailLink:
    dev: str
    pci: str
    leaf: str  # "" when the port is seen on no switch
    port: Any
    wrong: bool = False
    expected: str = ""  # the designed leaf, when the verdict names it
    slow: list[str] = field(default_factory=list)  # the steps that name this link slow or erroring


@dataclass
class RailPicture:
    step_id: str
    devices: list[str]  # columns, in device order
    rows: dict[str, dict[str, RailLink]] = field(default_factory=dict)  # host -> dev -> link
    unreadable: list[str] = field(default_factory=list)

    def rail_leaf(self, dev: str) -> str:
        """The leaf most hosts reach on this device (the rail's leaf, by the fleet)."""
        leaves = [r[dev].leaf for r in self.rows.values() if dev in r and r[dev].leaf]
        return max(set(leaves), key=leaves.count) if leaves else ""


def _uses_rail_cabling(step: dict) -> str | None:
    verify = (step.get("definition") or {}).get("verify") or {}
    if any(isinstance(c, dict) and c.get("design") == "rail-cabling" for c in verify.get("expect") or []):
        return verify.get("parse")
    return None


def _link(dev: str, pci: str, leaf: str, port: Any, reason: str) -> RailLink:
    said = [part for part in re.split(r";\s*", reason or "") if f"({dev})" in part or f" {dev} " in part]
    wrong = any("found on" in p or "not seen" in p for p in said)
    expected = next((m.group(1) for p in said for m in [_EXPECTED.search(p)] if m), "")
    return RailLink(dev, pci, leaf, port, wrong, expected.rstrip(";,)"))


def _host_links(record: dict, reason: str) -> dict[str, RailLink]:
    """The node's own ports (rail-links-by-pci: its ibstat and its lines of iblinkinfo)."""
    pci_of = {dev: pci for pci, dev in (record.get("pci_map") or {}).items() if dev}
    out = {}
    for dev, ca in sorted((record.get("by_name") or {}).items()):
        guids = _guids(ca)
        where = [link for link in record.get("ca_links") or [] if link["guid"] in guids]
        leaf, port = (_switch_name(where[0]["remote"]), where[0]["remote_port"]) if where else ("", "")
        out[dev] = _link(dev, pci_of.get(dev, ""), leaf, port, reason)
    return out


def _sweep_links(record: dict, v: dict, reason: str) -> dict[str, RailLink]:
    """One fabric-wide iblinkinfo (the step's `run_on: one`): the host's ports are
    found by the port GUIDs its design records (ib_port_guids), as the verdict did."""
    designed = {pci_address(k): guid(str(g)) for k, g in (v.get("ib_port_guids") or {}).items()}
    ca_links = [
        link
        for link in record.get("links") or []
        if link.get("node_type") != "Switch" and not link.get("switch") and link.get("peer_name") is not None
    ]
    out = {}
    for nic in v.get("compute_nics") or []:
        if not isinstance(nic, dict) or not nic.get("dev"):
            continue
        pci = pci_address(nic["pci"]) if nic.get("pci") else ""
        g = designed.get(pci)
        where = [link for link in ca_links if g and g in (link.get("port_guid"), link.get("node_guid"))]
        leaf, port = (_switch_name(where[0]["peer_name"]), where[0]["peer_port"]) if where else ("", "")
        out[str(nic["dev"])] = _link(str(nic["dev"]), pci, leaf, port, reason)
    return out


def rail_pictures(doc: dict) -> list[RailPicture]:
    pictures = []
    verdicts = (doc.get("summary") or {}).get("verdicts") or {}
    for step in doc.get("steps") or []:
        parser = _uses_rail_cabling(step)
        if not parser:
            continue
        sid = step.get("id", "")
        pic = RailPicture(sid, [])
        host_vars = (doc.get("inventory") or {}).get("hosts") or {}
        records: dict[str, Any] = {}  # a fabric sweep is the same output for every host: parsed once
        for r in doc.get("results") or []:
            if r.get("step_id") != sid or r.get("action") != "verify" or not r.get("command"):
                continue  # not run on this host (blocked, skipped): nothing to draw
            host, stdout = r.get("host", ""), r.get("stdout") or ""
            try:
                if stdout not in records:
                    records[stdout] = parse(parser, stdout)
                record = records[stdout]
            except Exception:  # any unreadable output: said, not drawn
                pic.unreadable.append(host)
                continue
            reason = (verdicts.get(sid, {}).get(host) or {}).get("reason", "")
            if "by_name" in record:
                pic.rows[host] = _host_links(record, reason)
            else:
                pic.rows[host] = _sweep_links(record, host_vars.get(host) or {}, reason)
        devices = sorted(
            {d for row in pic.rows.values() for d in row},
            key=lambda d: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", d)],
        )
        pic.devices = devices
        for (host, dev), steps in slow_marks(doc, devices).items():
            link = pic.rows.get(host, {}).get(dev)
            if link is not None:
                link.slow = steps
        if pic.rows or pic.unreadable:
            pictures.append(pic)
    return pictures


LINK_DESIGNS = ("link-ber",)  # per-port health comparators whose reasons name the port


def _names_link(step: dict) -> bool:
    d = step.get("definition") or {}
    expect = (d.get("verify") or {}).get("expect") or []
    return bool(d.get("judge_each")) or any(
        isinstance(c, dict) and c.get("design") in LINK_DESIGNS for c in expect
    )


def slow_marks(doc: dict, devices: list[str]) -> dict[tuple[str, str], list[str]]:
    """(host, device) -> the steps naming that link slow or erroring: a pair step's
    named ends (its `link`), and failing hosts of a link-health step whose reason
    names the device as a word (mlx5_1 is not mlx5_10)."""
    marks: dict[tuple[str, str], list[str]] = {}
    verdicts = (doc.get("summary") or {}).get("verdicts") or {}
    finished = latest_finished((doc.get("journal") or {}).get("entries") or [])
    for step in doc.get("steps") or []:
        sid = step.get("id", "")
        if (step.get("definition") or {}).get("pairs"):
            for host, dev, _rail in named_ends(finished.get(sid, {})):
                marks.setdefault((host, dev), []).append(sid)
        elif _names_link(step):
            for host, v in (verdicts.get(sid) or {}).items():
                if v.get("status") != "fail":
                    continue
                for dev in sorted(devices):
                    if re.search(rf"(?<![\w.]){re.escape(dev)}(?!\w)", v.get("reason") or ""):
                        marks.setdefault((host, dev), []).append(sid)
    return marks
