"""Leaf-spine uplinks from one `iblinkinfo` sweep: every rail leaf (rail_leaves)
has `leaf_spine_links` (or `leaf_uplinks.per_spine`) Active links to every
spine (spines), all of one width and speed. Each inter-switch link is printed from both ends; it is counted
from the leaf's side."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from .cabling import _switch_name


def leaf_spine_links(record: Any, v: dict) -> list[str]:
    leaves = [str(x) for x in dict(v["rail_leaves"]).values()]
    spines = [str(x) for x in v["spines"]]
    design = v.get("leaf_uplinks") if isinstance(v.get("leaf_uplinks"), dict) else {}
    per = int(design.get("per_spine") or v["leaf_spine_links"])  # either spelling of the design
    switch_links = [link for link in record["links"] if link["node_type"] == "Switch" or link["switch"]]
    if not switch_links:
        raise ValueError("iblinkinfo shows no switch ports (partial output?)")
    up: dict[tuple[str, str], list[dict]] = {}
    for link in switch_links:
        a, b = _switch_name(link["node"]), _switch_name(link.get("peer_name") or "")
        if a in leaves and b in spines:
            up.setdefault((a, b), []).append(link)
    out = []
    shapes = {(link.get("width"), link.get("speed")) for links in up.values() for link in links}
    common = (
        max(
            shapes,
            key=lambda s: sum(
                1 for links in up.values() for link in links if (link.get("width"), link.get("speed")) == s
            ),
        )
        if shapes
        else None
    )
    for leaf in leaves:
        for spine in spines:
            links = up.get((leaf, spine), [])
            active = [link for link in links if link.get("state") == "Active"]
            if len(active) != per:
                ports = ", ".join(str(link["port"]) for link in links) or "none"
                out.append(
                    f"{leaf} → {spine}: expected {per} Active link(s), found {len(active)} (ports: {ports})"
                )
            for link in active:
                if (link.get("width"), link.get("speed")) != common:
                    out.append(
                        f"{leaf} port {link['port']} → {spine}: {link.get('width')} {link.get('speed')}, "
                        f"the other uplinks {common[0]} {common[1]}"
                    )
    return out


COMPARATORS = [
    Comparator(
        "leaf-spine-links",
        "host",
        leaf_spine_links,
        "every rail leaf has leaf_spine_links Active uplinks to every spine",
    )
]
