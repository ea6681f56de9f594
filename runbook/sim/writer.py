"""The files a lab writes for its clients: an Ansible inventory of the seed's
shape, known_hosts, ssh_config, and the ready marker."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import yaml
from ClusterShell.NodeSet import NodeSet

from .design import Design


def _atomic(path: Path, text: str, mode: int = 0o644) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def inventory(
    path: Path,
    design: Design,
    endpoints: dict[str, tuple[str, int]],
    kinds: dict[str, str],
    key_file: Path,
    known_hosts: Path,
    partitions_conf: str,
    port_guids: dict[str, dict[str, str]] | None = None,
    sm_master_guid: str | None = None,
) -> None:
    """The design inventory with its groups and vars kept, every host spelled out
    with its ansible_host/ansible_port, and the lab's key and known_hosts added.
    With the SMs on switches the sm group is written with no hosts (the steps for
    SM nodes have no target there) and sm_master_guid names the master switch."""
    doc = (
        copy.deepcopy(design.doc) if design.doc else {"all": {"vars": dict(design.all_vars), "children": {}}}
    )
    top = doc.setdefault("all", {})
    all_vars = top.get("vars") or {}
    all_vars["ansible_ssh_private_key_file"] = str(key_file)
    all_vars["runbook_known_hosts"] = str(known_hosts)
    if sm_master_guid:
        all_vars["sm_master_guid"] = sm_master_guid
    top["vars"] = all_vars
    children = top.setdefault("children", {}) or {}
    first_compute = next((n for n, k in kinds.items() if k == "compute"), None)
    for group, body in children.items():
        body = body or {}
        children[group] = body
        if group == "compute":
            _demo_sized(body)
            # ib_port_guids: each node's port GUIDs by PCI address, as recorded at
            # rack-and-stack (rail-cabling finds the node's ports on the switches by them)
            body["hosts"] = {
                n: {
                    "ansible_host": a,
                    "ansible_port": p,
                    **({"ib_port_guids": port_guids[n]} if port_guids and n in port_guids else {}),
                }
                for n, (a, p) in endpoints.items()
                if kinds[n] == "compute"
            }
            cvars = body.get("vars") or {}
            if "nccl_ranks" in cvars:  # every GPU of *this* lab in the fleet-wide NCCL run
                cvars["nccl_ranks"] = len(body["hosts"]) * int(cvars.get("gpus_per_node", 8))
        elif group == "sm":
            body["hosts"] = {
                n: {**(design.sm_hosts.get(n) or {}), "ansible_host": a, "ansible_port": p}
                for n, (a, p) in endpoints.items()
                if kinds[n] == "sm"
            }
            # The PKey plan of *this* fabric (its port GUIDs), so a runbook step can
            # write the design partitions.conf on an SM node from the inventory.
            body.setdefault("vars", {})["partitions_conf"] = partitions_conf
        elif body.get("hosts"):
            wanted = [h for pattern in body["hosts"] for h in _expand(pattern)]
            kept = {h: body["hosts"].get(h) for h in wanted if h in endpoints}
            if not kept and first_compute:  # e.g. gpu01 of the seed on a gpu0001.. cluster
                kept = {first_compute: None}
            body["hosts"] = kept
    header = (
        "# Written by `runbook sim`: the simulated seed cluster on loopback.\n"
        f"# Same groups and design vars as {Path(design.source).name}; every host has\n"
        "# ansible_host/ansible_port of its simulated SSH server.\n"
    )
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: 1,000 hosts in a blink
    _atomic(path, header + yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=None, width=100))


# The long-running checks sized for a lab on loopback: a short DCGM level (2 still runs
# the pcie test) and a
# burn-in of seconds (the site's inventory keeps the real level and duration).
DEMO_SIZED = {"dcgm_diag_level": 2, "gpu_burn_seconds": 4}


def _demo_sized(group: dict) -> None:
    group_vars = group.get("vars")
    if isinstance(group_vars, dict):
        for key, value in DEMO_SIZED.items():
            if key in group_vars:
                group_vars[key] = value


def _expand(pattern: str) -> list[str]:
    """Ansible host pattern gpu[01:48] -> gpu01..gpu48 (via ClusterShell's NodeSet)."""
    return list(NodeSet(str(pattern).replace(":", "-"))) if "[" in str(pattern) else [str(pattern)]


def known_hosts(path: Path, endpoints: dict[str, tuple[str, int]], public: dict[str, str]) -> None:
    lines = []
    for name, (addr, port) in endpoints.items():
        names = [name, f"[{name}]:{port}", f"[{addr}]:{port}"] if port != 22 else [name, addr]
        lines.append(f"{','.join(names)} {public[name]}")
    _atomic(path, "\n".join(lines) + "\n")


def ssh_config(path: Path, endpoints: dict[str, tuple[str, int]], key_file: Path, known: Path) -> None:
    out = ["# Written by `runbook sim`: ssh -F THIS_FILE gpu07 ibstat", ""]
    for name, (addr, port) in endpoints.items():
        out += [f"Host {name}", f"    HostName {addr}", f"    Port {port}", ""]
    out += [
        "Host *",
        "    User root",
        f'    IdentityFile "{key_file}"',
        "    IdentitiesOnly yes",
        f'    UserKnownHostsFile "{known}"',
        "    GlobalKnownHostsFile /dev/null",
        "    StrictHostKeyChecking yes",
        "    PasswordAuthentication no",
        "    KbdInteractiveAuthentication no",
        "    ConnectTimeout 10",
        "    LogLevel ERROR",
        "",
    ]
    _atomic(path, "\n".join(out))


def ready(directory: Path, info: dict) -> None:
    """DIR/lab.json (everything a client needs), then DIR/ready holding the pid:
    the marker is written last, so a parent that sees it finds the rest in place."""
    _atomic(directory / "lab.json", json.dumps(info, indent=2) + "\n")
    _atomic(directory / "ready", f"{os.getpid()}\n")
