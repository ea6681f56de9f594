"""`test` / `[` with one primary (sim/commands/testexpr.py evaluate's short
path) answers as the general path (-o, -a, ! splitting) does."""

from __future__ import annotations

import itertools

from runbook.sim.commands import testexpr
from runbook.sim.commands.base import Ctx
from runbook.sim.shell.interp import Shell
from runbook.sim.shell.io import Buffer

OPERANDS = [
    "/etc/hostname",
    "/etc",
    "/nope",
    "",
    "x",
    "3",
    "-o",
    "-a",
    "!",
    "=",
    "-f",
    "-n",
    "-z",
    "-d",
    "-eq",
    "-lt",
]


def general(ctx, args, io) -> int:
    try:
        return 0 if testexpr._or(ctx, list(args)) else 1
    except testexpr._Bad as exc:
        io.err.write(f"bash: test: {exc}\n")
        return 2


def test_every_short_expression_answers_as_the_general_path(machine_of):
    gpu01 = machine_of(2)("gpu01")
    ctx = Ctx(Shell(gpu01), gpu01)
    checked = 0
    for n in range(4):
        for args in itertools.product(OPERANDS, repeat=n):
            fast_err, general_err = Buffer(), Buffer()
            fast = testexpr.evaluate(ctx, list(args), type("Io", (), {"err": fast_err})())
            want = general(ctx, list(args), type("Io", (), {"err": general_err})())
            assert (fast, fast_err.text()) == (want, general_err.text()), args
            checked += 1
    assert checked > 2000
