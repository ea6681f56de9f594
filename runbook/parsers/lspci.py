"""`lspci` one-line listings and `lspci -vv` / `-vvv` device blocks.

`lspci` (also `lspci | grep Mellanox`, `lspci -nn`, `lspci -D`):
  devices: [{slot, class, class_id?, description, vendor_id?, device_id?, rev?, model?}]
           model = the last [bracketed] name in the description ("ConnectX-7", "L40S")
  count, by_class {"3D controller": 8}, elided (the paste had "....." lines)
  Empty text is a valid reading (a `grep` that matched nothing): count 0.

`lspci -vv`:
  devices: [{slot, class, description, ..., subsystem, physical_slot, numa_node,
             lnkcap: {speed: "16GT/s", speed_gts: 16.0, width: "x16", lanes: 16} | null,
             lnksta: {speed, speed_gts, width, lanes, speed_downgraded, width_downgraded,
                      downgraded} | null,
             supported_speeds ("2.5-16GT/s" from LnkCap2), kernel_driver, kernel_modules,
             part_number, serial_number (VPD), capabilities_access_denied,
             regions: [{region, type: "memory"|"io", address, bits (64/32/null),
                        prefetchable (null for I/O), size ("32M"), size_bytes, disabled}]
                      the device's own BARs (not the SR-IOV VF BARs listed under a capability),
             acscap, acsctl: {SrcValid, TransBlk, ReqRedir, CmpltRedir, UpstreamFwd,
                              EgressCtrl, DirectTrans: bool} | null (no ACS capability),
             acs_enabled: [ACSCtl flags that are '+'] | null,
             acs_redirect: ReqRedir+ or CmpltRedir+ in ACSCtl (peer-to-peer traffic is sent
                           up to the root complex: what breaks GPUDirect P2P/RDMA) | null}]
  count
  `downgraded` is lspci's own "(downgraded)" marker OR LnkSta below LnkCap, because
  lspci before pciutils 3.6 printed no marker. An idle GPU trains down to 2.5GT/s
  to save power: that is a real reading of the link, judging it is the step's job.

Lenient mode (a pasted fragment): indented detail lines without their device line
(an excerpt starting at LnkCap, a `lspci -vvv | grep ACSCtl`) are read as devices with
slot null, a repeated LnkCap/LnkSta/ACSCap/ACSCtl line starting the next device.

jc has an lspci parser, but it reads only `lspci -mmv` (machine format); it
refuses all of these `-vv` outputs, so this module parses them itself.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter

from ._hosttext import fail, int_or_none, lines_of
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_SLOT = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_LINE = re.compile(
    rf"^(?P<slot>{_SLOT})\s+(?P<cls>[^:\[]+?)(?:\s\[(?P<class_id>[0-9a-fA-F]{{4}})\])?:\s+"
    r"(?P<desc>.*?)"
    r"(?:\s\[(?P<vendor_id>[0-9a-fA-F]{4}):(?P<device_id>[0-9a-fA-F]{4})\])?"
    r"(?:\s\(rev (?P<rev>[0-9a-fA-F]+)\))?"
    r"(?:\s\(prog-if [^)]*\))?\s*$"
)
_ELISION = re.compile(r"^\s*(\.{3,}|…)\s*$")


def _device_line(m: re.Match) -> Record:
    desc = m["desc"].strip()
    brackets = re.findall(r"\[([^\]]+)\]", desc)
    record = {
        "slot": m["slot"],
        "class": m["cls"].strip(),
        "description": desc,
        "model": brackets[-1] if brackets else None,
        "rev": m["rev"],
    }
    if m["class_id"]:
        record["class_id"] = m["class_id"].lower()
    if m["vendor_id"]:
        record["vendor_id"] = m["vendor_id"].lower()
        record["device_id"] = m["device_id"].lower()
    return record


def parse_lspci(text: str) -> Record:
    devices = []
    elided = False
    for line in lines_of(text):
        if not line.strip():
            continue
        if _ELISION.match(line):
            elided = True
            continue
        m = _LINE.match(line)
        if not m:
            if line[:1].isspace():
                raise ParseError(
                    f"lspci: indented line {line.strip()[:60]!r}: this is `lspci -v` "
                    "output, read it with the lspci-vv parser"
                )
            fail("`lspci` lines like '3b:00.0 Infiniband controller: Mellanox ...'", line)
        devices.append(_device_line(m))
    return {
        "devices": devices,
        "count": len(devices),
        "by_class": dict(Counter(d["class"] for d in devices)),
        "elided": elided,
    }


# pciutils 3.6+ prints "(ok)" or "(downgraded)" after LnkSta's speed and width;
# older versions print neither.
_LINK = re.compile(
    r"Speed (?P<speed>[\d.]+GT/s|unknown)(?: \((?:(?P<sd>downgraded)|ok)\))?,\s*"
    r"Width (?P<width>x\d+)(?: \((?:(?P<wd>downgraded)|ok)\))?"
)
_REGION = re.compile(
    r"^Region (?P<n>\d+): (?P<type>Memory|I/O ports) at (?P<addr>[0-9a-fA-F]+|<unassigned>|<ignored>)"
    r"(?: \((?P<bits>\d+)-bit, (?P<pf>prefetchable|non-prefetchable)\))?"
    r"(?P<disabled> \[disabled\])?(?: \[size=(?P<size>\d+[KMGT]?)\])?"
)
_ACS_FLAGS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# Keys that occur once per device: seen twice in a headerless fragment = the next device.
_ONCE = ("LnkCap", "LnkSta", "ACSCap", "ACSCtl")
# The detail lines _vv_device reads, by what comes before their first colon (and
# "Region N" lines); the others are skipped at once.
_READ = frozenset(
    {
        "Capabilities",
        "Subsystem",
        "Physical Slot",
        "NUMA node",
        "LnkCap",
        "LnkSta",
        "LnkCap2",
        "ACSCap",
        "ACSCtl",
        "Kernel driver in use",
        "Kernel modules",
        "[PN] Part number",
        "[SN] Serial number",
    }
)


def _link(value: str) -> Record | None:
    m = _LINK.search(value)
    if not m:
        return None
    speed = m["speed"]
    return {
        "speed": speed,
        "speed_gts": float(speed[:-4]) if speed.endswith("GT/s") else None,
        "width": m["width"],
        "lanes": int(m["width"][1:]),
        "speed_downgraded": bool(m["sd"]),
        "width_downgraded": bool(m["wd"]),
    }


def _acs(value: str) -> Record:
    flags = dict(re.findall(r"(\w+)([+-])", value))
    return {name: flags.get(name) == "+" for name in _ACS_FLAGS if name in flags}


def _region(m: re.Match) -> Record:
    size = m["size"]
    return {
        "region": int(m["n"]),
        "type": "memory" if m["type"] == "Memory" else "io",
        "address": m["addr"],
        "bits": int(m["bits"]) if m["bits"] else None,
        "prefetchable": (m["pf"] == "prefetchable") if m["pf"] else None,
        "size": size,
        "size_bytes": int(size.rstrip("KMGT")) * _UNITS[size[-1] if size[-1] in "KMGT" else ""]
        if size
        else None,
        "disabled": bool(m["disabled"]),
    }


def _vv_device(head: re.Match | None, body: list[str]) -> Record:
    if head is not None:
        dev = _device_line(head)
    else:
        dev = {"slot": None, "class": None, "description": None, "model": None, "rev": None}
    dev.update(
        {
            "subsystem": None,
            "physical_slot": None,
            "numa_node": None,
            "lnkcap": None,
            "lnksta": None,
            "supported_speeds": None,
            "kernel_driver": None,
            "kernel_modules": [],
            "part_number": None,
            "serial_number": None,
            "capabilities_access_denied": False,
            "regions": [],
            "acscap": None,
            "acsctl": None,
            "acs_enabled": None,
            "acs_redirect": None,
        }
    )
    in_capabilities = False
    for raw in body:
        line = raw.strip()
        key, _, value = line.partition(":")
        if key not in _READ:  # most of a -vv block: capabilities this parser does not read
            if key.startswith("Region ") and not in_capabilities and (m := _REGION.match(line)):
                dev["regions"].append(_region(m))
            continue
        value = value.strip()
        if key == "Capabilities":
            in_capabilities = True
        if key == "Subsystem":
            dev["subsystem"] = value
        elif key == "Physical Slot":
            dev["physical_slot"] = value
        elif key == "NUMA node":
            dev["numa_node"] = int_or_none(value)
        elif key == "LnkCap" and dev["lnkcap"] is None:
            dev["lnkcap"] = _link(value)
        elif key == "LnkSta" and dev["lnksta"] is None:
            dev["lnksta"] = _link(value)
        elif key == "LnkCap2":
            m = re.search(r"Supported Link Speeds: ([^,]+)", value)
            dev["supported_speeds"] = m.group(1) if m else None
        elif key == "ACSCap":
            dev["acscap"] = _acs(value)
        elif key == "ACSCtl":
            dev["acsctl"] = _acs(value)
        elif key == "Kernel driver in use":
            dev["kernel_driver"] = value
        elif key == "Kernel modules":
            dev["kernel_modules"] = [v.strip() for v in value.split(",") if v.strip()]
        elif line.startswith("[PN] Part number:"):
            dev["part_number"] = line.split(":", 1)[1].strip()
        elif line.startswith("[SN] Serial number:"):
            dev["serial_number"] = line.split(":", 1)[1].strip()
        elif line == "Capabilities: <access denied>":
            dev["capabilities_access_denied"] = True
    if dev["acsctl"] is not None:
        dev["acs_enabled"] = [name for name, on in dev["acsctl"].items() if on]
        dev["acs_redirect"] = bool(dev["acsctl"].get("ReqRedir") or dev["acsctl"].get("CmpltRedir"))
    cap, sta = dev["lnkcap"], dev["lnksta"]
    if sta is not None:
        below = bool(cap) and (
            (cap["speed_gts"] or 0) > (sta["speed_gts"] or 0) or cap["lanes"] > sta["lanes"]
        )
        sta["downgraded"] = sta["speed_downgraded"] or sta["width_downgraded"] or below
    return dev


def _has_details(dev: Record) -> bool:
    return bool(
        dev["subsystem"] is not None
        or dev["lnkcap"]
        or dev["lnksta"]
        or dev["kernel_driver"]
        or dev["capabilities_access_denied"]
        or dev["acsctl"] is not None
        or dev["acscap"] is not None
        or dev["regions"]
        or dev["numa_node"] is not None
    )


def _key(line: str) -> str:
    return line.strip().partition(":")[0]


def parse_lspci_vv(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "lspci-vv")
    # Every line indented: a whole output pasted with a margin (device lines then sit at the
    # margin) or detail lines without their device line (nothing to remove).
    lines = lines_of(text)
    # (A line at the left edge leaves no margin: dedent would only empty blank lines,
    # which are skipped anyway; the usual case, and dedent is costly on a long output.)
    if not any(ln and not ln[0].isspace() for ln in lines):
        joined = "\n".join(lines)
        dedented = textwrap.dedent(joined)
        if dedented != joined and any(_LINE.match(ln) for ln in dedented.splitlines()):
            lines = lines_of(dedented)
    blocks: list[tuple[re.Match | None, list[str]]] = []
    headless = False
    elided = False
    for line in lines:
        if not line.strip():
            continue
        if ("..." in line or "…" in line) and _ELISION.match(line):  # only such a line can be one
            elided = True
            continue
        if not line[:1].isspace():
            m = _LINE.match(line)
            if not m:
                fail("`lspci -vv` device blocks starting '21:00.0 Ethernet controller: ...'", line)
            blocks.append((m, []))
        elif not blocks or (
            blocks[-1][0] is None
            and _key(line) in _ONCE
            and any(_key(seen) == _key(line) for seen in blocks[-1][1])
        ):
            headless = True
            blocks.append((None, [line]))
        else:
            blocks[-1][1].append(line)
    devices = [_vv_device(head, body) for head, body in blocks]
    if not devices:
        fail("`lspci -vv` output", text)
    if headless:
        if not any(_has_details(d) for d in devices if d["slot"] is None):
            fail("`lspci -vv` device blocks starting '21:00.0 Ethernet controller: ...'", text)
        gaps.missing("the device line ('21:00.0 Ethernet controller: ...') before indented details")
    if not any(_has_details(d) for d in devices):
        raise ParseError(
            "lspci-vv: device lines without any -vv details (this is plain `lspci` "
            "output, read it with the lspci parser)"
        )
    if elided:
        gaps.missing("lines elided ('...') from the device blocks")
    return {"devices": devices, "count": len(devices)}


PARSERS = [
    Parser(
        name="lspci",
        reads="lspci [-nn] [| grep PATTERN]",
        func=parse_lspci,
        description="one-line PCI device listing: slot, class, vendor/device ids, model",
    ),
    Parser(
        name="lspci-vv",
        reads="lspci -vv [-s SLOT]",
        func=parse_lspci_vv,
        lenient=True,
        keeps_indent=True,
        description="PCI devices in detail: LnkCap/LnkSta speed and width, NUMA node, driver, ACS, BARs, VPD",
    ),
]
