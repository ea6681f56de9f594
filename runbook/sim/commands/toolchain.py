"""nvcc --version and pip3 config list: the CUDA toolkit and the pip mirror setting."""

from __future__ import annotations

from ..vfs import FsError
from .base import Ctx


def nvcc(ctx: Ctx, args, io) -> int:
    cuda = ctx.node.versions["cuda"]
    if "--version" not in args and "-V" not in args:
        io.err.write("nvcc fatal   : No input files specified; use option --help for more information\n")
        return 1
    io.out.write(
        "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
        "Built on Thu_Mar_28_02:18:24_PDT_2024\n"
        f"Cuda compilation tools, release {cuda}, V{cuda}.131\n"
        f"Build cuda_{cuda}.r{cuda}/compiler.34097967_0\n"
    )
    return 0


def pip3(ctx: Ctx, args, io) -> int:
    if args[:2] != ["config", "list"]:
        io.err.write("ERROR: only 'pip3 config list' is simulated (no installs on a simulated node)\n")
        return 1
    try:
        text = ctx.fs.read("/etc/pip.conf")
    except FsError:
        return 0
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            io.out.write(f"{section}.{key.strip()}='{value.strip()}'\n")
    return 0


COMMANDS = {"nvcc": nvcc, "pip3": pip3, "pip": pip3}
ONLY_ON = {"nvcc": lambda m: bool(m.state.gpus)}
