"""NVIDIA/Mellanox adapter firmware queries: `flint -d DEV query` (also `mstflint -d BDF q`)
and `mlxfwmanager --query` (also `mlxup`, same report).

`flint` record:
  image_type ("FS4" | "FS3" | "FS2"), fw_version, fw_version_running (null unless flint
  prints "FW Version(Running)": the card still runs an older image), fw_pending (True when
  running != flashed: a reset / reboot is owed to activate the new firmware),
  fw_release_date, product_version, part_number, product_description (newer MFT only),
  rom_info: [{type ("UEFI" | "PXE"), version, cpu}], device_id (int | null),
  base_guid ("0xe09d730300126744" | null), guids_number (int | null), base_mac
  ("e09d73126744" | null), macs_number, guids {node, port1, port2, sys_image} (FS2 layout)
  | null, macs {port1, port2} (FS2) | null, psid, image_vsd, device_vsd, vsd,
  security_attributes ("secure-fw" | "N/A" | null), secure_fw (bool | null),
  fields: every "Key: value" line with snake_case keys
`mlxfwmanager` record:
  devices: [{index, device_type (null for "N/A"), part_number, description, psid,
             pci_device_name ("/dev/mst/mt4119_pciconf0" or a BDF), base_guid, base_mac,
             port_guids {"1": ...}, port_macs {"2": ...} (null values for "N/A"),
             versions {"FW": {current, available}, "PXE": ..., "UEFI Virtio blk": ...}
             (available null for "N/A"), fw_current, fw_available,
             status ("Up to date" | "Update required" | "No matching image found" | null when
             the report has no Status line), update_required (bool | null)}]
  count
"""

from __future__ import annotations

import re
import textwrap

from ._hosttext import snake
from ._ib_common import bad_line, guid, not_recognised, numbered
from .base import ParseError, Parser, Record

_FLINT_KEY = re.compile(r"^(?P<key>[A-Z][A-Za-z0-9 /_-]*?(?:\(Running\))?):\s*(?P<value>.*)$")


def _na(value: str | None) -> str | None:
    value = (value or "").strip()
    return None if value in ("", "N/A", "NA") else value


def parse_flint(text: str) -> Record:
    fields: dict = {}
    rom: list[Record] = []
    columns: list[str] = []
    record: Record = {
        "guids": None,
        "macs": None,
        "base_guid": None,
        "guids_number": None,
        "base_mac": None,
        "macs_number": None,
        "product_description": None,
    }
    last = None
    # A pasted copy may be indented as a whole (a doc's code block): undo that first.
    text = textwrap.dedent(text.replace("\r\n", "\n").replace("\t", "    "))
    for lineno, line in numbered(text):
        if not line.strip():
            continue
        if line.lstrip().startswith("-E-"):
            raise ParseError(f"flint: the tool reported an error: {line.strip()[:160]!r}")
        m = _FLINT_KEY.match(line.strip()) if not line[:1].isspace() else None
        if m is None:
            if last == "Rom Info" and line[:1].isspace():
                rom.append(_rom(line.strip()))
                continue
            if fields:
                raise bad_line("flint", lineno, "'Key:   value' lines of `flint query`", line)
            raise not_recognised(
                "flint", "`flint -d DEV query` output ('Image type: FS4', 'FW Version: ...')", text
            )
        key, value = m["key"], m["value"].strip()
        last = key
        if key == "Rom Info":
            rom.append(_rom(value))
        elif key == "Description" and (value.startswith("UID") or value.startswith("Node")):
            columns = re.split(r"\s{2,}", value)
        elif key == "Description":
            record["product_description"] = value
        elif key == "Base GUID":
            parts = value.split()
            record["base_guid"] = guid(parts[0]) if parts and _na(parts[0]) else None
            record["guids_number"] = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        elif key == "Base MAC":
            parts = value.split()
            record["base_mac"] = _na(parts[0]) if parts else None
            record["macs_number"] = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        elif key == "GUIDs":
            names = [snake(c) for c in columns] or ["node", "port1", "port2", "sys_image"]
            record["guids"] = {n: guid(v) for n, v in zip(names, value.split())}
        elif key == "MACs":
            record["macs"] = dict(zip(("port1", "port2"), value.split()))
        fields[snake(key)] = value
    if "fw_version" not in fields or "image_type" not in fields and "psid" not in fields:
        raise not_recognised(
            "flint", "`flint -d DEV query` output ('Image type: FS4', 'FW Version: ...')", text
        )
    running = fields.get("fw_version_running")
    security = _na(fields.get("security_attributes"))
    record.update(
        {
            "image_type": fields.get("image_type"),
            "fw_version": fields["fw_version"],
            "fw_version_running": running,
            "fw_pending": bool(running) and running != fields["fw_version"],
            "fw_release_date": fields.get("fw_release_date"),
            "product_version": fields.get("product_version"),
            "part_number": _na(fields.get("part_number")),
            "rom_info": rom,
            "device_id": int(fields["device_id"]) if fields.get("device_id", "").isdigit() else None,
            "psid": fields.get("psid"),
            "image_vsd": _na(fields.get("image_vsd")),
            "device_vsd": _na(fields.get("device_vsd")),
            "vsd": _na(fields.get("vsd")),
            "security_attributes": fields.get("security_attributes"),
            "secure_fw": ("secure-fw" in security)
            if security
            else (False if "security_attributes" in fields else None),
            "fields": fields,
        }
    )
    return record


def _rom(value: str) -> Record:
    found = dict(re.findall(r"(\w+)=(\S+)", value))
    return {"type": found.get("type"), "version": found.get("version"), "cpu": found.get("cpu")}


# --- mlxfwmanager ---------------------------------------------------------------
_DEVICE = re.compile(r"^Device #(\d+):$")
_KV = re.compile(r"^(?P<key>[A-Z][\w ]*?):\s*(?P<value>.*)$")
_DASHES = re.compile(r"-+")
_VERSION_ROW = re.compile(r"^(?P<name>\S.*?)\s{2,}(?P<current>\S+)\s+(?P<available>\S+)$")


def parse_mlxfwmanager(text: str) -> Record:
    devices: list[Record] = []
    dev: Record | None = None
    in_versions = False
    for lineno, line in numbered(text):
        s = line.strip()
        if not s or s.startswith("Querying Mellanox devices") or _DASHES.fullmatch(s):
            continue
        if s.startswith("-E-"):
            raise ParseError(f"mlxfwmanager: the tool reported an error: {s[:160]!r}")
        if m := _DEVICE.match(s):
            dev = {
                "index": int(m.group(1)),
                "device_type": None,
                "part_number": None,
                "description": None,
                "psid": None,
                "pci_device_name": None,
                "base_guid": None,
                "base_mac": None,
                "port_guids": {},
                "port_macs": {},
                "versions": {},
                "status": None,
            }
            devices.append(dev)
            in_versions = False
            continue
        if dev is None:
            raise not_recognised("mlxfwmanager", "`mlxfwmanager --query` blocks ('Device #1:')", text)
        m = _KV.match(s)
        if m and not (in_versions and not m["key"].startswith("Status")):
            key, value = m["key"], m["value"].strip()
            in_versions = key == "Versions"
            if p := re.fullmatch(r"Port(\d+) (GUID|MAC)", key):
                target = dev["port_guids"] if p.group(2) == "GUID" else dev["port_macs"]
                value_ = _na(value)
                target[p.group(1)] = guid(value_) if value_ and p.group(2) == "GUID" else value_
            elif key == "Base GUID":
                dev["base_guid"] = guid(value) if _na(value) else None
            elif key != "Versions":
                dev[snake(key)] = _na(value)
            continue
        if in_versions and (v := _VERSION_ROW.match(s)):
            dev["versions"][v["name"]] = {"current": _na(v["current"]), "available": _na(v["available"])}
            continue
        raise bad_line("mlxfwmanager", lineno, "'Key: value' or a version row 'FW  16.26.4012  N/A'", line)
    if not devices:
        raise not_recognised("mlxfwmanager", "`mlxfwmanager --query` blocks ('Device #1:')", text)
    for dev in devices:
        if "FW" not in dev["versions"]:
            raise ParseError(f"mlxfwmanager: device #{dev['index']} has no FW version row (truncated?)")
        fw = dev["versions"]["FW"]
        dev["fw_current"], dev["fw_available"] = fw["current"], fw["available"]
        status = (dev["status"] or "").lower()
        dev["update_required"] = None if not status else ("update required" in status)
    return {"devices": devices, "count": len(devices)}


PARSERS = [
    Parser(
        name="flint",
        reads="flint -d DEV query (mstflint -d BDF q)",
        func=parse_flint,
        description="adapter firmware image: FW version (and running version), PSID, ROM info, "
        "base GUID/MAC, secure-fw",
    ),
    Parser(
        name="mlxfwmanager",
        reads="mlxfwmanager --query (mlxup)",
        func=parse_mlxfwmanager,
        description="per adapter: type, part number, PSID, PCI device, current/available FW, PXE, "
        "UEFI versions, update status",
    ),
]
