"""`nvidia-smi` (the default table): versions, one entry per GPU, the process list.

Record:
  driver_version, cuda_version ("12.4"; null when the header has none), smi_version
  version_labels: "driver" for "Driver Version: ... CUDA Version: ..." (drivers up to 600),
                  "kmd" for "KMD Version: ... CUDA UMD Version: ..." (drivers 610+): the same
                  two numbers under new names (kernel-mode driver, user-mode CUDA driver)
  gpu_count
  gpus: [{index, name, name_truncated, persistence_mode (On/Off, or the Windows driver
          model WDDM/TCC/MCDM printed in that column), bus_id, display_active,
          ecc_uncorrected ("0" / "Off" / "N/A" as printed), fan_pct, temp_c, perf,
          power_w, power_cap_w, memory_used_mib, memory_total_mib, gpu_util_pct,
          compute_mode, mig_mode}]          numbers are null where nvidia-smi says N/A
  processes: [{gpu, gi, ci, pid, type, name, memory_mib}]   ([] for "No running processes found")
  processes_listed: whether the Processes table was in the output at all

Reads the 87/89/91-column layouts of drivers 470 .. 610 ("|---" or "+---" header
separators, with or without the MIG M. line, the timestamp line present or not).
Lenient mode (a pasted fragment): GPU rows without the version header, "..." lines,
a GPU whose second row was cut are read, and what is absent is listed.
"""

from __future__ import annotations

import re

from ._hosttext import fail, int_or_none, lines_of
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_VERSIONS = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+(?P<label>Driver|KMD) Version:\s+(?P<driver>\S+)"
    r"(?:\s+CUDA(?: UMD)? Version:\s+(?P<cuda>\S+))?"
)
_ELISION = re.compile(r"^\s*(?:\.{3,}|…|\[\.\.\.\])\s*$")
_GPU_FIRST = re.compile(r"^\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persistence>On|Off|N/A|WDDM|TCC|MCDM)\s*$")
_GPU_SECOND = re.compile(
    r"^\s*(?P<fan>\d+%|N/A|ERR!)\s+(?P<temp>-?\d+C|N/A|ERR!)\s+(?P<perf>P\d+|N/A|ERR!)\s+"
    r"(?P<power>\d+(?:\.\d+)?W|N/A|ERR!)\s*/\s*(?P<cap>\d+(?:\.\d+)?W|N/A|ERR!)\s*$"
)
_MEMORY = re.compile(r"^\s*(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB\s*$")
_UTIL = re.compile(r"^\s*(?P<util>\d+%|N/A|ERR!)\s+(?P<mode>\S+)\s*$")
_BUS = re.compile(r"^\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(?P<disp>\S+)\s*$")
_PROCESS = re.compile(
    r"^\|\s+(?P<gpu>\d+|N/A)\s+(?:(?P<gi>\S+)\s+(?P<ci>\S+)\s+)?(?P<pid>\d+)\s+"
    r"(?P<type>C\+G|[CGM])\s+(?P<name>.+?)\s+(?P<mem>\d+MiB|N/A)\s*\|$"
)


def _cells(line: str) -> list[str]:
    return line.strip().strip("|").split("|")


def _num(text: str, suffix: str) -> int | float | None:
    """'70W' -> 70, '33.5W' -> 33.5; 'N/A' / 'ERR!' (a GPU nvidia-smi cannot read) -> None."""
    if not text.endswith(suffix):
        return None
    value = text[: -len(suffix)]
    if int_or_none(value) is not None:
        return int_or_none(value)
    try:
        return float(value)
    except ValueError:
        return None


def parse_nvidia_smi(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "nvidia-smi")
    lines = [line.strip() for line in lines_of(text)]
    header = next((m for m in map(_VERSIONS.search, lines) if m), None)
    if header is None and ("NVIDIA-SMI has failed" in text or "couldn't communicate" in text):
        raise ParseError(f"nvidia-smi could not talk to the driver: {text.strip()[:200]!r}")
    gpus: list[Record] = []
    processes: list[Record] = []
    in_processes = False
    elided = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _ELISION.match(line):
            elided = True
        elif "Processes:" in line:
            in_processes = True
        elif in_processes:
            m = _PROCESS.match(line)
            if m:
                processes.append(_process(m))
        elif line.startswith("|") and line.count("|") == 4:
            cells = _cells(line)
            first = _GPU_FIRST.match(cells[0])
            if first:
                second = lines[i + 1] if i + 1 < len(lines) else ""
                gpus.append(_gpu(first, cells, _cells(second), second, gaps))
                mig = _cells(lines[i + 2]) if i + 2 < len(lines) else []
                if len(mig) == 3 and not mig[0].strip() and mig[2].strip():
                    gpus[-1]["mig_mode"] = mig[2].strip()
                i += 1
        i += 1
    if header is None:
        if not gpus:
            fail(
                "the `nvidia-smi` table header 'NVIDIA-SMI ... Driver Version: ...' "
                "(or 'KMD Version:') or GPU rows",
                text,
            )
        gaps.missing("the version header 'NVIDIA-SMI ... Driver Version: ... CUDA Version: ...'")
    if not gpus and "No devices were found" not in text:
        gaps.missing("the GPU rows after the version header")
    if elided:
        gaps.missing("lines elided ('...') from the table")
    cuda = header.group("cuda") if header else None
    return {
        "smi_version": header.group("smi") if header else None,
        "driver_version": header.group("driver") if header else None,
        "cuda_version": cuda if cuda not in (None, "N/A") else None,
        "version_labels": ("kmd" if header.group("label") == "KMD" else "driver") if header else None,
        "gpu_count": len(gpus),
        "gpus": gpus,
        "processes": processes,
        "processes_listed": in_processes,
    }


def _gpu(first: re.Match, cells: list[str], second_cells: list[str], second_line: str, gaps: Gaps) -> Record:
    bus = _BUS.match(cells[1])
    if not bus:
        raise ParseError(f"nvidia-smi: cannot read the Bus-Id cell of GPU {first['index']}: {cells[1]!r}")
    name = first["name"]
    gpu: Record = {
        "index": int(first["index"]),
        "name": name,
        "name_truncated": name.endswith("..."),
        "persistence_mode": first["persistence"],
        "bus_id": bus["bus"],
        "display_active": bus["disp"],
        "ecc_uncorrected": cells[2].strip(),
        "fan_pct": None,
        "temp_c": None,
        "perf": None,
        "power_w": None,
        "power_cap_w": None,
        "memory_used_mib": None,
        "memory_total_mib": None,
        "gpu_util_pct": None,
        "compute_mode": None,
        "mig_mode": None,
    }
    if len(second_cells) != 3:
        gaps.missing(f"the fan/temp/power row of GPU {first['index']}")
        return gpu
    usage = _GPU_SECOND.match(second_cells[0])
    memory = _MEMORY.match(second_cells[1])
    util = _UTIL.match(second_cells[2])
    if not (usage and memory and util):
        raise ParseError(
            f"nvidia-smi: cannot read the row of GPU {first['index']}: {cells!r} / {second_line.strip()!r}"
        )
    gpu.update(
        {
            "fan_pct": _num(usage["fan"], "%"),
            "temp_c": _num(usage["temp"], "C"),
            "perf": usage["perf"],
            "power_w": _num(usage["power"], "W"),
            "power_cap_w": _num(usage["cap"], "W"),
            "memory_used_mib": int(memory["used"]),
            "memory_total_mib": int(memory["total"]),
            "gpu_util_pct": _num(util["util"], "%"),
            "compute_mode": util["mode"],
        }
    )
    return gpu


def _process(m: re.Match) -> Record:
    return {
        "gpu": int_or_none(m["gpu"]),
        "gi": m["gi"],
        "ci": m["ci"],
        "pid": int(m["pid"]),
        "type": m["type"],
        "name": m["name"],
        "memory_mib": _num(m["mem"], "MiB"),
    }


PARSERS = [
    Parser(
        name="nvidia-smi",
        reads="nvidia-smi",
        func=parse_nvidia_smi,
        lenient=True,
        description="nvidia-smi table: driver/CUDA (or KMD/UMD) versions, per GPU state, processes",
    )
]
