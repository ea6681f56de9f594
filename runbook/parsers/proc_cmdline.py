"""`cat /proc/cmdline`: the kernel command line the running kernel booted with.

Record:
  raw:         the line as read
  image:       BOOT_IMAGE value | null
  params:      {name: value} - the LAST value when a name repeats (what the kernel uses for
               most options), a flag without "=" has value true
  values:      {name: [every value in order]} - for repeated names (pci=nommconf pci=realloc=off,
               console=tty0 console=ttyS0,115200n8), only the text after the first "="
  flags:       the names given without "=" ("quiet", "ro", "nosoftlockup")
  iommu:       {intel_iommu, amd_iommu, iommu} values (null each when absent): what
               GPUDirect P2P/RDMA cares about ("iommu=pt" or IOMMU off)
  isolcpus, nohz_full, rcu_nocbs: CPU id lists (ints) | null; hugepages: {default_size, size,
               count} (null fields when absent)
Quoted values (root="LABEL=x y") are kept whole.
"""

from __future__ import annotations

import re
import shlex

from ._hosttext import cpulist, fail, lines_of
from .base import ParseError, Parser, Record

_NAME = re.compile(r"^[A-Za-z_][\w.\-]*$")


def parse_proc_cmdline(text: str) -> Record:
    # a pasted copy may keep the prompt line of the command
    lines = [
        ln.strip() for ln in lines_of(text) if ln.strip() and not re.search(r"\bcat\s+/proc/cmdline\s*$", ln)
    ]
    if len(lines) != 1:
        fail("one kernel command line (the content of /proc/cmdline)", text)
    raw = lines[0]
    try:
        words = shlex.split(raw, posix=True)
    except ValueError:
        words = raw.split()
    params: dict = {}
    values: dict = {}
    flags: list[str] = []
    for word in words:
        name, eq, value = word.partition("=")
        if not _NAME.match(name):
            fail("kernel parameters like 'root=UUID=... ro quiet iommu=pt'", text)
        if eq:
            params[name] = value
            values.setdefault(name, []).append(value)
        else:
            params[name] = True
            flags.append(name)
    if not (
        params.get("BOOT_IMAGE") or "root" in params or "ro" in flags or "rw" in flags or "initrd" in params
    ):
        raise ParseError(
            f"proc-cmdline: no BOOT_IMAGE, root= or ro/rw in {raw[:80]!r}: not a kernel command line"
        )

    def cpus(name: str) -> list[int] | None:
        value = params.get(name)
        if not isinstance(value, str):
            return None
        # isolcpus may carry flags first: "isolcpus=nohz,domain,1-11"
        parts = [p for p in value.split(",") if not re.fullmatch(r"[a-z_]+", p)]
        try:
            return cpulist(",".join(parts))
        except ParseError:
            return None

    count = params.get("hugepages")
    return {
        "raw": raw,
        "image": params.get("BOOT_IMAGE") if isinstance(params.get("BOOT_IMAGE"), str) else None,
        "params": params,
        "values": values,
        "flags": flags,
        "iommu": {k: params.get(k) for k in ("intel_iommu", "amd_iommu", "iommu")},
        "isolcpus": cpus("isolcpus"),
        "nohz_full": cpus("nohz_full"),
        "rcu_nocbs": cpus("rcu_nocbs"),
        "hugepages": {
            "default_size": params.get("default_hugepagesz"),
            "size": params.get("hugepagesz"),
            "count": int(count) if isinstance(count, str) and count.isdigit() else None,
        },
    }


PARSERS = [
    Parser(
        name="proc-cmdline",
        reads="cat /proc/cmdline",
        func=parse_proc_cmdline,
        description="kernel command line: parameters, IOMMU settings, isolated CPUs, hugepages",
    )
]
