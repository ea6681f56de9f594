"""Criteria as a person reads them, with the host's values filled in:
"version eq 23.10-1.1.9.0", "busbw ≥ 18.5 GB/s − 10 %", and each design
comparison with the design's values ("8 GPUs with PCI id 0x2330"). Shown by
the plan, the TUI's step pane and the report; without variables the
criterion is described as written (placeholders kept)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..definition.model import Check
from ..definition.template import PLACEHOLDER, TemplateError, render_value

# A variable's unit, read from its name's suffix (docs/inventory.md lists them).
UNIT_SUFFIXES = (("_gbps", "Gb/s"), ("_gbs", "GB/s"), ("_gb", "GB"), ("_mbs", "MB/s"), ("_us", "µs"))
SYMBOL = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥", "eq": "eq", "ne": "ne"}
_VARIABLE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")  # design variable names have an underscore
SHORT = 60


def unit_of(template: Any) -> str:
    m = PLACEHOLDER.fullmatch(str(template).strip())
    if not m:
        return ""
    name = m.group(1).rsplit(".", 1)[-1]
    if "busbw" in name:  # nccl-tests prints bus bandwidth in GB/s (bytes), whatever the name's suffix says
        return "GB/s"
    return next((unit for suffix, unit in UNIT_SUFFIXES if name.endswith(suffix)), "")


def shown(value: Any) -> str:
    """A value on one line: text as is, numbers without a useless .0, lists comma-joined."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)) and all(not isinstance(v, (list, dict)) for v in value):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)


def _value(value: Any, variables: dict | None) -> tuple[str, str]:
    """(value as shown, unit) — rendered with the host's values when given."""
    unit = unit_of(value)
    if variables is None:
        return shown(value), unit
    try:
        return shown(render_value(value, variables)), unit
    except TemplateError as exc:
        return f"{shown(value)} (cannot fill in: {exc})", unit


def _percent(tol: Any, variables: dict | None) -> str:
    text, _ = _value(tol, variables)
    try:
        number = float(text)
    except ValueError:
        return text
    sign = "−" if number < 0 else "+"
    return f"{sign} {abs(number) * 100:g} %"


def _reference(check: Check, variables: dict | None) -> str:
    ref, unit = _value(check.value, variables)
    ref = f"{ref} {unit}".strip()
    lower = _percent(check.lower, variables) if check.lower is not None else None
    upper = _percent(check.upper, variables) if check.upper is not None else None
    if lower and upper:
        return f"{ref} {lower} ≤ {check.path} ≤ {ref} {upper}"
    if lower:
        return f"{check.path} ≥ {ref} {lower}"
    if upper:
        return f"{check.path} ≤ {ref} {upper}"
    return f"{check.path} = {ref}"


def _design_value(value: Any) -> str:
    """A design variable inside a sentence: short values in full, long ones summarized."""
    if isinstance(value, dict) and all(not isinstance(v, (list, dict)) for v in value.values()):
        text = ", ".join(f"{k}→{v}" for k, v in value.items())
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        names = [str(v.get("dev") or v.get("name") or v.get("pci") or "?") for v in value]
        text = f"{len(value)}: " + ", ".join(names)
    elif isinstance(value, str) and "\n" in value:
        text = f"{len(value.splitlines())} lines"
    else:
        text = shown(value)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def describe_design(name: str, variables: dict | None) -> str:
    """The comparator's description with each design variable it names filled in,
    e.g. "8 GPUs with PCI id 0x2330" from "gpus_per_node GPUs with PCI id gpu_pci_id"."""
    from .design import get

    comparator = get(name)
    text = (comparator.describe if comparator else "") or name
    if variables is not None:

        def fill(m: re.Match) -> str:
            var = m.group()
            if var not in variables:
                return var
            value = variables[var]
            if isinstance(value, (dict, list)) or (isinstance(value, str) and "\n" in value):
                return f"{var} ({_design_value(value)})"
            unit = unit_of("{{ " + var + " }}")
            return _design_value(value) + (f" {unit}" if unit else "")

        text = _VARIABLE.sub(fill, text)
    return f"as designed ({name}): {text}"


def describe(check: Check, variables: dict | None = None) -> str:
    """One criterion in words; `variables` are the host's (inventory) values."""
    if check.kind == "design":
        return describe_design(str(check.value), variables)
    if check.kind == "path":
        if check.op == "reference":
            return _reference(check, variables)
        value, unit = _value(check.value, variables)
        op = SYMBOL.get(check.op or "", check.op)
        if check.op == "count" and isinstance(check.value, dict):
            ((cop, cval),) = check.value.items()
            value, unit = _value(cval, variables)
            return f"number of {check.path} {SYMBOL.get(cop, cop)} {value}"
        return f"{check.path} {op} {value}" + (f" {unit}" if unit else "")
    if check.kind == "exit":
        return f"exit status == {shown(check.value)}"
    if check.kind == "consistent":
        return f"{check.path or 'value'} identical on every host"
    value, _ = _value(check.value, variables)
    return f"stdout {check.kind.replace('_', ' ')} {value!r}"
