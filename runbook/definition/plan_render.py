"""`runbook plan` as text (for the terminal) and Markdown (the acceptance plan
that goes to the customer before the delivery starts)."""

from __future__ import annotations

from typing import Any


def _md_action(name: str, a: dict[str, Any] | None) -> list[str]:
    if not a:
        return []
    out = [f"**{name}**" + (f" (then: {a['then']})" if a.get("then") else "") + ":", ""]
    for c in a["commands"]:
        where = f"- on `{c['hosts']}`" + (
            f" (rendered per host; shown for `{c['example_for']}`)" if c.get("variants") else ""
        )
        body = [f"  {line}" for line in c["command"].splitlines()]
        out += [where + ":", "", "  ```sh", *body, "  ```"]
    if name == "Verify":
        out += ["", "Pass criteria" + (f" (output read as `{a['parse']}`)" if a.get("parse") else "") + ":"]
        if a.get("criteria_by_hosts"):
            for group in a["criteria_by_hosts"]:
                ex = f" (per host; shown for `{group['example_for']}`)" if group.get("example_for") else ""
                out += [f"- on `{group['hosts']}`{ex}:"] + [f"  - {c}" for c in group["criteria"]]
        else:
            out += [f"- {c}" for c in a["criteria"]]
        if a.get("design_values"):
            out += ["", "Design values:"]
            out += [
                f"- `{d['name']}` = `{d['value']}` on `{d['hosts']}`"
                if not d.get("variants")
                else f"- `{d['name']}`: per host (`{d['value']}` on `{d['example_for']}`)"
                for d in a["design_values"]
            ]
    out.append("")
    return out


def to_markdown(plan: dict[str, Any]) -> str:
    lines = [
        f"# Acceptance plan — {plan['site'] or 'site'}",
        "",
        f"Hosts: `{plan['hosts']}`  ",
        f"Runbook SHA-256: `{plan['runbook_sha256']}`  ",
        f"Inventory SHA-256: `{plan['inventory_sha256']}`",
        "",
        "Every step below is verified on every listed host by the command shown, and passes only when "
        "the criteria hold on the evidence it prints. A host that cannot be assessed is reported as "
        "*unknown*, never as passed. Changes (apply) are made only on hosts that fail verification, "
        "after confirmation, and each has a rollback to the values measured before the change.",
        "",
    ]
    n = 0
    for phase in plan["phases"]:
        lines += [f"## {phase['title']} (`{phase['phase']}`)", ""]
        for s in phase["steps"]:
            n += 1
            lines += [
                f"### {n}. {s['title']} — `{s['id']}`",
                "",
                f"*Why:* {s['why']}",
                "",
                f"*Hosts:* `{s['hosts']}` ({s['host_count']})"
                + (f" · *after:* {', '.join(f'`{x}`' for x in s['needs'])}" if s["needs"] else ""),
                "",
            ]
            if s["manual"]:
                lines += ["Manual check, confirmed by the engineer with a note:", ""]
                lines += [f"- [ ] {item}" for item in s["checklist"]] + [""]
            lines += _md_action("Verify", s["verify"])
            lines += _md_action("Apply", s["apply"])
            lines += _md_action("Rollback", s["rollback"])
            if s["hints"]:
                lines += ["If it fails:", ""] + [f"{i}. {h}" for i, h in enumerate(s["hints"], 1)] + [""]
    return "\n".join(lines).rstrip() + "\n"


def to_text(plan: dict[str, Any]) -> str:
    lines = [f"site {plan['site']}  hosts {plan['hosts']}"]
    for phase in plan["phases"]:
        lines.append("")
        lines.append(f"== {phase['title']} ({phase['phase']})")
        for s in phase["steps"]:
            lines.append(f"  {s['id']}: {s['title']}  [{s['hosts']}]" + (" (manual)" if s["manual"] else ""))
            lines.append(f"    why: {s['why']}")
            if s["needs"]:
                lines.append(f"    needs: {', '.join(s['needs'])}")
            if s.get("kind"):
                lines.append(f"    kind: {s['kind']}")
            for name in ("verify", "apply", "rollback"):
                a = s[name]
                if not a:
                    continue
                for c in a["commands"]:
                    where = c["hosts"] + (
                        f" (per host; e.g. {c['example_for']})" if c.get("variants") else ""
                    )
                    first, *rest = c["command"].splitlines() or [""]
                    lines.append(f"    {name:8} {where}: {first}")
                    lines.extend(f"    {'':8} {'':{len(where)}}  {r}" for r in rest)
                if name == "verify":
                    for group in a.get("criteria_by_hosts") or [{"hosts": "", "criteria": a["criteria"]}]:
                        where = f"{group['hosts']}: " if group["hosts"] else ""
                        if group.get("example_for"):
                            where = f"{group['hosts']} (per host; e.g. {group['example_for']}): "
                        for crit in group["criteria"]:
                            lines.append(f"    expect   {where}{crit}")
                    for d in a.get("design_values", []):
                        lines.append(
                            f"    design   {d['name']} = {d['value']}  [{d['hosts']}]"
                            if not d.get("variants")
                            else f"    design   {d['name']}: per host (e.g. {d['value']} on {d['example_for']})"
                        )
                if a.get("then"):
                    lines.append(f"    then     {a['then']}")
            for item in s["checklist"]:
                lines.append(f"    [ ] {item}")
    return "\n".join(lines) + "\n"
