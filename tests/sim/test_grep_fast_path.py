"""grep's plain case (sim/commands/text.py: no -c -l -q -o -n -A -C -m, one
pattern) prints what its general loop prints: `-m` with a limit no input
reaches sends the same grep down the general loop."""

from __future__ import annotations

import pytest

PKEYS = "/sys/class/infiniband/*/ports/1/pkeys/*"
CASES = [
    f"-H -v '^0x0000$' {PKEYS}",
    f"-v '^0x0000$' {PKEYS}",
    f"-h 0x {PKEYS}",
    "-H . /sys/class/infiniband/*/ports/1/link_layer",
    "-H . /sys/class/infiniband/*/device/numa_node /nope",
    "-i memlock /etc/security/limits.conf /etc/security/limits.d/*.conf",
    "-E 'mlx5_[0-3]' -",
    "-w up -",
    "-H -i MEMLOCK /etc/security/limits.d/*.conf",
    "-v x /etc/hostname",
    "-F 'a.b' -",
    "nothing-matches /etc/hostname",
    "-e a -e b -",
]


@pytest.mark.parametrize("args", CASES)
async def test_plain_grep_prints_what_the_general_loop_prints(machine_of, sh, args):
    gpu01 = machine_of(2)("gpu01")
    stdin = "mlx5_1 up\nib0 x\na.b\naxb\n\nmlx5_9\n"
    plain = await sh(gpu01, f"grep {args}", stdin=stdin)
    general = await sh(gpu01, f"grep -m 999999 {args}", stdin=stdin)
    assert plain == general
    if not any(missing in args for missing in ("nothing", "/nope", "limits.conf")):
        assert plain[2] == 0 and plain[0]


def split_opts_before(args, with_value=""):
    """sim/commands/base.py split_opts as it was, every test asked of every argument."""
    opts, rest, i = {}, [], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i + 1 :])
            break
        if a.startswith("--"):
            key, eq, value = a[2:].partition("=")
            opts["--" + key] = value if eq else True
        elif a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            j = 1
            while j < len(a):
                letter = a[j]
                if letter in with_value:
                    value = a[j + 1 :]
                    if not value and i + 1 < len(args):
                        i += 1
                        value = args[i]
                    opts[letter] = value
                    break
                opts[letter] = True
                j += 1
        else:
            rest.append(a)
        i += 1
    return opts, rest


def test_split_opts_answers_as_before():
    import random

    from runbook.sim.commands.base import split_opts

    words = ["-", "--", "-H", "-v", "-m", "5", "-m5", "-12", "--x=1", "--y", "", "file", "/a/b", "-Hv", "-e"]
    rng = random.Random(18)
    for _ in range(3000):
        args = [rng.choice(words) for _ in range(rng.randint(0, 7))]
        for with_value in ("", "mABC"):
            assert split_opts(args, with_value) == split_opts_before(args, with_value), args
