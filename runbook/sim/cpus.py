"""CPU lists as the kernel prints them ("0-31,64-95") and as masks ("ffffffff,00000000")."""

from __future__ import annotations

import functools


def format_cpulist(cpus: list[int] | set[int]) -> str:
    """[0,1,2,3,8] -> "0-3,8" (the format of smp_affinity_list and numactl ranges)."""
    return _format_cpulist(tuple(cpus))


@functools.lru_cache(maxsize=1024)
def _format_cpulist(cpus: tuple[int, ...]) -> str:
    """format_cpulist, once per list: a node's few NUMA nodes' lists are printed
    for every GPU row of `nvidia-smi topo -m` and read in every NIC's local_cpulist."""
    items = sorted(set(cpus))
    ranges: list[str] = []
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        ranges.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ",".join(ranges)


def parse_cpulist(text: str, ncpus: int) -> list[int]:
    """ "0-3,8" -> [0,1,2,3,8]; ValueError on anything the kernel would reject."""
    text = text.strip()
    if not text:
        raise ValueError("empty cpu list")
    out: set[int] = set()
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad cpu list element {part!r}")
        a, b = int(lo), int(hi) if sep else int(lo)
        if a > b or b >= ncpus:
            raise ValueError(f"cpu {b} out of range")
        out.update(range(a, b + 1))
    return sorted(out)


def format_mask(cpus: list[int], ncpus: int) -> str:
    """/proc/irq/N/smp_affinity: hex mask in 32-bit groups separated by commas."""
    value = 0
    for c in cpus:
        value |= 1 << c
    groups = max(1, (ncpus + 31) // 32)
    words = [(value >> (32 * g)) & 0xFFFFFFFF for g in reversed(range(groups))]
    return ",".join(f"{w:08x}" for w in words)


def parse_mask(text: str, ncpus: int) -> list[int]:
    digits = text.strip().replace(",", "")
    if not digits:
        raise ValueError("empty mask")
    value = int(digits, 16)  # ValueError on junk, like the kernel's EINVAL
    cpus = [c for c in range(ncpus) if value >> c & 1]
    if not cpus:
        raise ValueError("empty mask")
    return cpus
