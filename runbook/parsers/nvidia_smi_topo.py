"""`nvidia-smi topo -m`: the GPU/NIC connection matrix and each GPU's CPU/NUMA affinity.

Record:
  gpus:  [{name: "GPU0", index: 0, cpu_affinity: "0-31", cpus: [0..31],
           numa_affinity: "0", numa: 0 | null, gpu_numa_id: int | null}]
  nics:  [{name: "NIC0", device: "mlx5_0" | null}]
  gpu_count, nic_count
  matrix:            {label: {label: cell}} exactly as printed ("X" on the diagonal)
  matrix_by_device:  the same matrix with every NIC label replaced by its device
                     name (GPU labels unchanged), so a design written in terms of
                     `mlx5_0` reads `matrix_by_device.mlx5_0.GPU0` whatever the
                     driver called the column.
  nic_by_device:     {"mlx5_0": "NIC0"}
  legend, nic_legend, has_gpu_numa_id: what the output carried.

Layouts read: new drivers (spaces, NICn columns + "NIC Legend:" block, "GPU NUMA
ID" column) and old ones (TAB-separated, " X " cells, NIC columns named mlx5_N
directly and no NIC legend, no GPU NUMA ID column); comma CPU lists; NIC rows
with empty trailing fields.
"""

from __future__ import annotations

import re

from ._hosttext import cpulist, fail, int_or_none, lines_of
from .base import ParseError, Parser, Record

_CELL = re.compile(r"^[A-Z][A-Z0-9]*$")  # X, SYS, NODE, PHB, PXB, PIX, NV12, SOC, ...
_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
# The extra columns after the matrix, as they appear in the header.
_EXTRA = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def _header(line: str) -> tuple[list[str], list[str]]:
    """Split the header into matrix labels and the extra (multi-word) column names."""
    extras: list[str] = []
    first_extra = len(line)
    for name in _EXTRA:
        pos = line.find(name)
        if pos >= 0:
            extras.append(name)
            first_extra = min(first_extra, pos)
    return line[:first_extra].split(), extras


def parse_topo(text: str) -> Record:
    lines = lines_of(text)
    start = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if start is None:
        fail("the `nvidia-smi topo -m` matrix", text)
    labels, extras = _header(lines[start])
    if not labels or "GPU0" not in labels or not extras:
        fail("a `nvidia-smi topo -m` header like '\\tGPU0\\tGPU1 ... CPU Affinity'", text)

    matrix: dict[str, dict[str, str]] = {}
    gpus: list[Record] = []
    nics: list[Record] = []
    end = start + 1
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if not line.strip() or line.strip().startswith("Legend"):
            break
        fields = line.split()
        label = fields[0]
        expected = labels[len(matrix)] if len(matrix) < len(labels) else None
        if label != expected:
            raise ParseError(f"nvidia-smi topo -m: expected row {expected!r}, found {line.strip()!r}")
        cells = fields[1 : 1 + len(labels)]
        if len(cells) != len(labels) or not all(_CELL.match(c) for c in cells):
            raise ParseError(
                f"nvidia-smi topo -m: row {label} should have {len(labels)} cells "
                f"(X, SYS, NODE, PHB, PXB, PIX, NV#), found {line.strip()!r}"
            )
        matrix[label] = dict(zip(labels, cells))
        extra = fields[1 + len(labels) :]
        if label.startswith("GPU"):
            gpus.append(_gpu(label, extras, extra, line))
        else:
            nics.append({"name": label, "device": None if label.startswith("NIC") else label})
    else:
        end = len(lines)
    if len(matrix) != len(labels):
        raise ParseError(
            f"nvidia-smi topo -m: the header names {len(labels)} devices but "
            f"{len(matrix)} rows were found (truncated output?)"
        )

    tail = lines[end:]
    legend = any(ln.strip() == "Legend:" for ln in tail)
    nic_legend = any(ln.strip() == "NIC Legend:" for ln in tail)
    aliases = {}
    for line in tail:
        m = _NIC_LEGEND.match(line)
        if m:
            aliases[m.group(1)] = m.group(2)
    for nic in nics:
        if nic["name"] in aliases:
            nic["device"] = aliases[nic["name"]]
    rename = {n["name"]: n["device"] for n in nics if n["device"]}
    by_device = {
        rename.get(row, row): {rename.get(col, col): cell for col, cell in cols.items()}
        for row, cols in matrix.items()
    }
    return {
        "gpus": gpus,
        "nics": nics,
        "gpu_count": len(gpus),
        "nic_count": len(nics),
        "matrix": matrix,
        "matrix_by_device": by_device,
        "nic_by_device": {dev: name for name, dev in rename.items()},
        "legend": legend,
        "nic_legend": nic_legend,
        "has_gpu_numa_id": "GPU NUMA ID" in extras,
    }


def _gpu(label: str, extras: list[str], values: list[str], line: str) -> Record:
    # Each extra column is a single token (CPU lists have no spaces), in header order.
    if len(values) != len(extras):
        raise ParseError(
            f"nvidia-smi topo -m: {label} should end with {', '.join(extras)}; found {line.strip()!r}"
        )
    got = dict(zip(extras, values))
    affinity = got.get("CPU Affinity")
    numa_affinity = got.get("NUMA Affinity")
    return {
        "name": label,
        "index": int(label[3:]) if label[3:].isdigit() else None,
        "cpu_affinity": affinity,
        "cpus": cpulist(affinity) if affinity and affinity != "N/A" else [],
        "numa_affinity": numa_affinity,
        "numa": int_or_none(numa_affinity),
        "gpu_numa_id": int_or_none(got.get("GPU NUMA ID")),
    }


PARSERS = [
    Parser(
        name="nvidia-smi-topo",
        reads="nvidia-smi topo -m",
        func=parse_topo,
        description="nvidia-smi topo -m matrix: GPU/NIC link types, CPU and NUMA affinity",
    )
]
