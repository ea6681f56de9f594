"""tuned-adm active: the profile TuneD applies (RHEL's default on a server:
throughput-performance), in the one-line layout of the real tool."""
from __future__ import annotations

from .base import Ctx

PROFILE = "throughput-performance"


def tuned_adm(ctx: Ctx, args, io) -> int:
    if args[:1] == ["active"]:
        io.out.write(f"Current active profile: {PROFILE}\n")
        return 0
    if args[:1] == ["verify"]:
        io.out.write("Verification succeeded, current system settings match the preset profile.\n"
                     "See TuneD log file ('/var/log/tuned/tuned.log') for details.\n")
        return 0
    io.err.write("tuned-adm: only `active` and `verify` are simulated\n")
    return 1


COMMANDS = {"tuned-adm": tuned_adm}
