"""nvbandwidth -t host_to_device_memcpy_ce | device_to_host_memcpy_ce: copy-engine
bandwidth between host memory and each GPU, in the v0.4+ layout (preamble,
`Running NAME.`, a one-row matrix, `SUM NAME value`).

While it runs every GPU's link is busy, so it leaves the idle 2.5GT/s state
and trains to what the slot gives it (see PciLink.current_speed): a probe of
nvidia-smi or lspci during the run sees the loaded speed. The bandwidth follows
the trained link: ~26 GB/s on a healthy Gen4 x16 link (the value NVIDIA's
nvbandwidth documentation shows for host_to_device_memcpy_ce), half at Gen3 or x8.
"""
from __future__ import annotations

import asyncio

from .. import perfmodel
from .base import Ctx

GEN4_X16_GBS = 26.0
TESTS = {
    "host_to_device_memcpy_ce": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
    "device_to_host_memcpy_ce": "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
}
RUN_SECONDS = 0.3


async def nvbandwidth(ctx: Ctx, args, io) -> int:
    tests: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-t", "--testcase") and i + 1 < len(args):
            tests.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--testcase="):
            tests.append(a.split("=", 1)[1])
        elif a in ("-i", "--iterations", "-b", "--bufferSize", "-s", "--testSamples"):
            i += 1
        i += 1
    tests = tests or list(TESTS)
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        io.err.write(f"ERROR: Testcase {unknown[0]} not found!\n")
        return 1
    node = ctx.node
    gpus = node.gpus
    out = ["nvbandwidth Version: v0.4", "Built from Git version: v0.4-3-g2ac5a6e", "",
           "NOTE: This tool reports current measured bandwidth on your system.",
           "Additional system-specific tuning may be required to achieve maximal peak bandwidth.", "",
           "CUDA Runtime Version: 12040", "CUDA Driver Version: 12040",
           f"Driver Version: {node.versions['driver']}", ""]
    out += [f"Device {g.index}: NVIDIA L40S" for g in gpus] + [""]
    for g in gpus:
        g.link.busy += 1
    try:
        await asyncio.sleep(RUN_SECONDS)
        for k, test in enumerate(tests):
            values = [GEN4_X16_GBS * perfmodel.link_ratio(g.link) * (1 - 0.002 * ((g.index + k) % 3))
                      for g in gpus]
            out += [f"Running {test}.", TESTS[test],
                    " " + "".join(f"{g.index:>10d}" for g in gpus),
                    "0" + "".join(f"{v:>10.2f}" for v in values), "",
                    f"SUM {test} {sum(values):.2f}", ""]
    finally:
        for g in gpus:
            g.link.busy -= 1
    io.out.write("\n".join(out) + "\n")
    return 0


COMMANDS = {"nvbandwidth": nvbandwidth}
ONLY_ON = {"nvbandwidth": lambda m: bool(m.state.gpus)}
