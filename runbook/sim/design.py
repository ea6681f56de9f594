"""The design the simulated cluster is built from: the vars of a seed-shaped
Ansible inventory (all.vars, compute.vars, sm.vars and the sm hosts' vars).

The simulator ships a copy of the seed site's inventory (data/seed-cluster.yaml,
kept equal to inventory/seed-cluster.yaml by a test) so it works from an
installed package; `--design FILE` points it at another inventory of the same
shape. Every version, device name and count the fake hardware shows comes from
here, so a fresh simulated cluster is compliant with the inventory it writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..yamlsafe import load_file

BUNDLED = Path(__file__).with_name("data") / "seed-cluster.yaml"


def plain(value: Any) -> Any:
    """LineDict/LineList -> dict/list (JSON- and YAML-dumpable)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@dataclass
class Design:
    all_vars: dict[str, Any]
    compute_vars: dict[str, Any]
    sm_vars: dict[str, Any]
    sm_hosts: dict[str, dict[str, Any]]  # sm01 -> {sm_priority: 15}
    source: str = ""
    doc: dict | None = None  # the whole inventory, for writing one of the same shape

    def var(self, name: str, default: Any = None) -> Any:
        for scope in (self.compute_vars, self.all_vars):
            if name in scope:
                return scope[name]
        return default

    # Convenience accessors used all over the hardware model.
    @property
    def compute_nics(self) -> list[dict[str, Any]]:
        return list(self.compute_vars.get("compute_nics", []))

    @property
    def storage_nics(self) -> list[dict[str, Any]]:
        return list(self.compute_vars.get("storage_nics", []))

    @property
    def ib_devices(self) -> list[str]:
        return list(self.compute_vars.get("ib_mode_devices", []))

    @property
    def sm_names(self) -> list[str]:
        return list(self.sm_hosts)

    @property
    def sm_runs_on(self) -> str:
        """Where the subnet managers run (docs/inventory.md): hosts | switch | ufm."""
        return str(self.all_vars.get("sm_runs_on") or "hosts")

    @property
    def switch_sms(self) -> dict[str, int]:
        """switch -> SM priority when the SMs run on managed switches: the designed
        master (sm_master) at 15, the standby (sm_standby) at 14, as the seed's two
        SM nodes are; {} when the SMs run on hosts."""
        if self.sm_runs_on != "switch":
            return {}
        out = {}
        for name, priority in (("sm_master", 15), ("sm_standby", 14)):
            switch = self.all_vars.get(name)
            if switch:
                out[str(switch)] = priority
        return out


# The switches whose embedded SM runs in a switch-SM lab (sm_on_switches): the
# first two rail leaves, as a site with no spare server puts them.
SWITCH_SM_MASTER, SWITCH_SM_STANDBY = "leaf01", "leaf02"


def sm_on_switches(design: Design) -> Design:
    """The same design with the subnet managers on managed switches instead of the
    SM nodes: the sm group declared with no hosts (no host runs OpenSM, the steps
    for SM nodes have no target), sm_runs_on: switch, and sm_master/sm_standby
    naming the two switches (leaf01 MASTER, leaf02 STANDBY)."""
    import copy

    all_vars = {
        **design.all_vars,
        "sm_runs_on": "switch",
        "sm_master": SWITCH_SM_MASTER,
        "sm_standby": SWITCH_SM_STANDBY,
    }
    doc = copy.deepcopy(design.doc) if design.doc else None
    if doc is not None:
        top = doc.setdefault("all", {})
        top["vars"] = {
            **(top.get("vars") or {}),
            **{k: all_vars[k] for k in ("sm_runs_on", "sm_master", "sm_standby")},
        }
        sm = (top.get("children") or {}).get("sm")
        if isinstance(sm, dict):
            sm["hosts"] = {}
    return Design(
        all_vars=all_vars,
        compute_vars=design.compute_vars,
        sm_vars=design.sm_vars,
        sm_hosts={},
        source=design.source,
        doc=doc,
    )


def load_design(path: str | Path | None = None) -> Design:
    """Read the design vars of a seed-shaped inventory; FILE:LINE errors."""
    path = Path(path) if path else BUNDLED
    data = load_file(path)
    src = str(path)

    def need(mapping: Any, key: str, where: str) -> Any:
        if not isinstance(mapping, dict) or key not in mapping:
            line = getattr(mapping, "line", None)
            raise InputError(
                Problem(src, line, f"{where}: missing '{key}' (a seed-shaped inventory is expected)")
            )
        return mapping[key]

    top = need(data, "all", "top level")
    all_vars = plain(top.get("vars") or {})
    children = need(top, "children", "all")
    compute = need(children, "compute", "all.children")
    sm = need(children, "sm", "all.children")
    # an sm group with no hosts: the subnet managers run elsewhere (sm_runs_on)
    sm_hosts = plain((sm.get("hosts") if isinstance(sm, dict) else None) or {})
    sm_hosts = {name: (v or {}) for name, v in sm_hosts.items()}
    design = Design(
        all_vars=all_vars,
        compute_vars=plain(compute.get("vars") or {}),
        sm_vars=plain(sm.get("vars") or {}),
        sm_hosts=sm_hosts,
        source=src,
        doc=plain(data),
    )
    for key in ("compute_nics", "storage_nics", "gpu_numa"):
        if key not in design.compute_vars:
            raise InputError(Problem(src, compute.line, f"compute.vars: missing '{key}'"))
    return design
