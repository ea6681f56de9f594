"""GPU-to-GPU bandwidth tools: `nvbandwidth`, CUDA samples' `p2pBandwidthLatencyTest`,
and `nvidia-smi topo -p2p r|w|n|a|p` (whether P2P is supported, not how fast).

`nvbandwidth` record:
  version ("v0.4" | null: early builds print no preamble), git_version, driver_version,
  cuda_runtime_version, cuda_driver_version (ints | null), devices: [{index, name}]
  testcases: [{name ("device_to_device_memcpy_read_ce"), title, unit ("GB/s"),
               columns: [labels], rows: [labels], matrix: [[float | null]] (null for "N/A"),
               off_diagonal_min, off_diagonal_max (row label != column label; 0.00 on the
               diagonal of early builds is ignored), sum (the "SUM name value" line | null),
               waived (bool)}]
  by_name: {testcase name: index into testcases}

`p2p-bandwidth` record (p2pBandwidthLatencyTest):
  devices: [{index, name, pci_bus_id, pci_device_id, pci_domain_id}]
  peer_access: [{from, to, can_access: bool}]   ("Device=0 CAN / CANNOT Access Peer Device=1")
  connectivity: [[int]] (the "P2P Connectivity Matrix")
  matrices: {uni_disabled_gbps, uni_enabled_gbps, bidi_disabled_gbps, bidi_enabled_gbps,
             latency_disabled_gpu_us, latency_disabled_cpu_us, latency_enabled_gpu_us,
             latency_enabled_cpu_us: [[float]]} (absent keys when not printed)
  uni_enabled_min_gbps, bidi_enabled_min_gbps, latency_enabled_max_us: off-diagonal
  figures for judging a node (null when the matrix is missing)

`nvidia-smi-topo-p2p` record:
  gpus: ["GPU0", ...], matrix: {"GPU0": {"GPU1": "OK", ...}},
  pairs: [{a, b, status}] (a < b), all_ok (every pair "OK"), not_ok: the other pairs,
  legend: {"OK": "Status Ok", "NS": "Not supported", ...}
"""

from __future__ import annotations

import re

from ._hosttext import fail, float_or_none, lines_of
from .base import ParseError, Parser, Record

_NUM_OR_NA = r"(?:-?\d+(?:\.\d+)?|N/A)"
_MATRIX_CELL = re.compile(_NUM_OR_NA)  # compiled once: every cell of every matrix
_DIGITS = re.compile(r"\d+")


def _matrix(lines: list[str], start: int) -> tuple[list[str], list[str], list[list[float | None]], int]:
    """Read a header of column labels at `start` then rows 'label v v v'; -> (cols, rows, matrix, next)."""
    cols = lines[start].split()
    if cols and not cols[0][0].isdigit():
        cols = cols[1:]  # "D\\D 0 1" / "GPU 0 1" corner label
    rows, matrix = [], []
    i = start + 1
    while i < len(lines):
        words = lines[i].split()
        if (
            len(words) != len(cols) + 1
            or not _DIGITS.fullmatch(words[0])
            or not all(_MATRIX_CELL.fullmatch(w) for w in words[1:])
        ):
            break
        rows.append(words[0])
        matrix.append([None if w == "N/A" else float(w) for w in words[1:]])
        i += 1
    return cols, rows, matrix, i


def _off_diagonal(cols: list[str], rows: list[str], matrix: list[list[float | None]]) -> list[float]:
    return [v for r, row in zip(rows, matrix) for c, v in zip(cols, row) if r != c and v is not None]


# --- nvbandwidth -----------------------------------------------------------------
def parse_nvbandwidth(text: str) -> Record:
    lines = [ln.rstrip() for ln in lines_of(text)]
    record: Record = {
        "version": None,
        "git_version": None,
        "driver_version": None,
        "cuda_runtime_version": None,
        "cuda_driver_version": None,
        "devices": [],
        "testcases": [],
        "by_name": {},
    }
    current: Record | None = None
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if m := re.match(r"^nvbandwidth Version:\s*(\S+)", s):
            record["version"] = m.group(1)
        elif m := re.match(r"^Built from Git version:\s*(\S+)", s):
            record["git_version"] = m.group(1)
        elif m := re.match(r"^CUDA Runtime Version:\s*(\d+)", s):
            record["cuda_runtime_version"] = int(m.group(1))
        elif m := re.match(r"^CUDA Driver Version:\s*(\d+)", s):
            record["cuda_driver_version"] = int(m.group(1))
        elif m := re.match(r"^Driver Version:\s*(\S+)", s):
            record["driver_version"] = m.group(1)
        elif m := re.match(r"^Device (\d+):\s*(.+)$", s):
            record["devices"].append({"index": int(m.group(1)), "name": m.group(2).strip()})
        elif m := re.match(r"^Running (\w+)\.?$", s):
            current = {
                "name": m.group(1),
                "title": None,
                "unit": None,
                "columns": [],
                "rows": [],
                "matrix": [],
                "off_diagonal_min": None,
                "off_diagonal_max": None,
                "sum": None,
                "waived": False,
            }
            record["by_name"][current["name"]] = len(record["testcases"])
            record["testcases"].append(current)
        elif current is not None and re.search(r"\bwaived\b", s, re.I):
            current["waived"] = True
        elif current is not None and current["title"] is None and (m := re.search(r"\(([^()]+/s)\)\s*$", s)):
            current["title"], current["unit"] = s, m.group(1)
            if i < len(lines) and re.fullmatch(r"\s*(\d+\s*)+", lines[i]):
                cols, rows, matrix, i = _matrix(lines, i)
                off = _off_diagonal(cols, rows, matrix)
                current.update(
                    columns=cols,
                    rows=rows,
                    matrix=matrix,
                    off_diagonal_min=min(off) if off else None,
                    off_diagonal_max=max(off) if off else None,
                )
        elif m := re.match(r"^SUM (\w+)\s+(" + _NUM_OR_NA + r")$", s):
            index = record["by_name"].get(m.group(1))
            if index is not None:
                record["testcases"][index]["sum"] = float_or_none(m.group(2))
    if not record["testcases"]:
        fail("`nvbandwidth` output ('Running device_to_device_memcpy_read_ce.' and a matrix)", text)
    for t in record["testcases"]:
        if not t["matrix"] and not t["waived"]:
            raise ParseError(f"nvbandwidth: testcase {t['name']} has no result matrix (cut output?)")
    return record


# --- p2pBandwidthLatencyTest ------------------------------------------------------
_P2P_TITLES = (
    (re.compile(r"^Unidirectional P2P=Disabled Bandwidth.*Matrix"), "uni_disabled_gbps"),
    (re.compile(r"^Unidirectional P2P=Enabled Bandwidth.*Matrix"), "uni_enabled_gbps"),
    (re.compile(r"^Bidirectional P2P=Disabled Bandwidth.*Matrix"), "bidi_disabled_gbps"),
    (re.compile(r"^Bidirectional P2P=Enabled Bandwidth.*Matrix"), "bidi_enabled_gbps"),
    (re.compile(r"^P2P=Disabled Latency.*Matrix"), "latency_disabled"),
    (re.compile(r"^P2P=Enabled Latency.*Matrix"), "latency_enabled"),
)


def parse_p2p_bandwidth(text: str) -> Record:
    lines = [ln.rstrip() for ln in lines_of(text)]
    if not any("P2P (Peer-to-Peer) GPU Bandwidth Latency Test" in ln for ln in lines[:3]) and not any(
        t.match(ln.strip()) for ln in lines for t, _ in _P2P_TITLES
    ):
        fail("`p2pBandwidthLatencyTest` output ('[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]')", text)
    record: Record = {"devices": [], "peer_access": [], "connectivity": [], "matrices": {}}
    section: str | None = None
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if m := re.match(
            r"^Device: (\d+), (.+?), pciBusID: (\w+), pciDeviceID: (\w+), pciDomainID:\s*(\w+)", s
        ):
            record["devices"].append(
                {
                    "index": int(m.group(1)),
                    "name": m.group(2),
                    "pci_bus_id": m.group(3),
                    "pci_device_id": m.group(4),
                    "pci_domain_id": m.group(5),
                }
            )
        elif m := re.match(r"^Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+)", s):
            record["peer_access"].append(
                {"from": int(m.group(1)), "to": int(m.group(3)), "can_access": m.group(2) == "CAN"}
            )
        elif s.startswith("P2P Connectivity Matrix") and i < len(lines):
            _, _, matrix, i = _matrix(lines, i)
            record["connectivity"] = [[int(v) for v in row] for row in matrix]
        elif any(t.match(s) for t, _ in _P2P_TITLES):
            section = next(key for t, key in _P2P_TITLES if t.match(s))
        elif section and re.match(r"^(D\\D|GPU|CPU)\s+\d", s):
            _, _, matrix, i = _matrix(lines, i - 1)
            key = section
            if section.startswith("latency"):
                key = f"{section}_{'cpu' if s.startswith('CPU') else 'gpu'}_us"
            record["matrices"][key] = matrix
    if not record["matrices"]:
        raise ParseError("p2p-bandwidth: no bandwidth or latency matrix found (cut output?)")

    def off(key: str, pick) -> float | None:
        matrix = record["matrices"].get(key)
        if not matrix:
            return None
        values = [v for r, row in enumerate(matrix) for c, v in enumerate(row) if r != c and v is not None]
        return pick(values) if values else None

    record["uni_enabled_min_gbps"] = off("uni_enabled_gbps", min)
    record["bidi_enabled_min_gbps"] = off("bidi_enabled_gbps", min)
    record["latency_enabled_max_us"] = off("latency_enabled_gpu_us", max)
    return record


# --- nvidia-smi topo -p2p ---------------------------------------------------------
def parse_topo_p2p(text: str) -> Record:
    lines = [ln.rstrip() for ln in lines_of(text) if ln.strip()]
    header = next((i for i, ln in enumerate(lines) if re.fullmatch(r"\s*(GPU\d+\s*)+", ln)), None)
    if header is None:
        fail("`nvidia-smi topo -p2p` output (a header row 'GPU0  GPU1 ...')", text)
    gpus = lines[header].split()
    matrix: dict = {}
    legend: dict = {}
    for line in lines[header + 1 :]:
        words = line.split()
        if words and words[0] in gpus and len(words) == len(gpus) + 1:
            matrix[words[0]] = dict(zip(gpus, words[1:]))
        elif m := re.match(r"^\s*(\w+)\s+=\s+(.+)$", line):
            legend[m.group(1)] = m.group(2).strip()
    if set(matrix) != set(gpus):
        raise ParseError(f"nvidia-smi-topo-p2p: rows for {sorted(set(gpus) - set(matrix))} are missing")
    pairs = [{"a": a, "b": b, "status": matrix[a][b]} for i, a in enumerate(gpus) for b in gpus[i + 1 :]]
    return {
        "gpus": gpus,
        "matrix": matrix,
        "pairs": pairs,
        "legend": legend,
        "all_ok": all(p["status"] == "OK" for p in pairs),
        "not_ok": [p for p in pairs if p["status"] != "OK"],
    }


PARSERS = [
    Parser(
        name="nvbandwidth",
        reads="nvbandwidth [-t TESTCASE]",
        func=parse_nvbandwidth,
        description="nvbandwidth: per testcase the GPU/CPU bandwidth matrix (GB/s), min/max off the "
        "diagonal, SUM; versions and devices",
    ),
    Parser(
        name="p2p-bandwidth",
        reads="p2pBandwidthLatencyTest (CUDA samples)",
        func=parse_p2p_bandwidth,
        description="p2pBandwidthLatencyTest: peer access, P2P on/off uni/bidirectional bandwidth and "
        "latency matrices",
    ),
    Parser(
        name="nvidia-smi-topo-p2p",
        reads="nvidia-smi topo -p2p r|w|n|a|p",
        func=parse_topo_p2p,
        description="nvidia-smi topo -p2p: P2P support status per GPU pair (OK, NS, CNS, ...)",
    ),
]
