"""What irqbalance does to the NIC interrupts of a simulated node.

RHEL installs and enables irqbalance; while it runs it re-places every
interrupt it is not told to leave alone, every 10 seconds, spreading them
over all CPUs whatever a script pinned before (the sim collapses the 10 s to
"at once": a pinned list reads back as irqbalance's choice while it runs).
It leaves an interrupt alone when IRQBALANCE_ARGS (in /etc/sysconfig/irqbalance)
bans it: --banirq=N, or a --policyscript that answers ban=true for mlx5
devices (the sim reads the script's text rather than running it)."""

from __future__ import annotations

import functools
import re

from .hardware import Irq, NodeState


def _args(node: NodeState) -> str:
    return _args_in(node.files.get("/etc/sysconfig/irqbalance", ""))


# Every IRQ's smp_affinity_list asks (a `cat /proc/irq/*/smp_affinity_list` reads
# dozens): the file's text is parsed once per text.
@functools.lru_cache(maxsize=256)
def _args_in(text: str) -> str:
    value = ""
    for line in text.splitlines():
        m = re.match(r"^\s*IRQBALANCE_ARGS=(.*)$", line)
        if m:
            value = m.group(1).strip().strip("\"'")
    return value


@functools.lru_cache(maxsize=256)
def _bans(args: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """(the --banirq numbers, the --policyscript paths) of IRQBALANCE_ARGS."""
    return frozenset(re.findall(r"--banirq[= ](\d+)", args)), tuple(
        re.findall(r"--policyscript[= ](\S+)", args)
    )


def banned(node: NodeState, irq: Irq) -> bool:
    irqs, scripts = _bans(_args(node))
    if str(irq.number) in irqs:
        return True
    for script in scripts:
        text = node.files.get(script, "")
        if "ban=true" in text and "mlx5" in text and irq.dev.startswith("mlx5"):
            return True
    return False


def effective_cpus(node: NodeState, irq: Irq) -> str:
    """The smp_affinity_list the kernel reports: the pinned one, unless
    irqbalance runs and moved it (one CPU, spread over the whole machine)."""
    if node.irqbalance.running and not banned(node, irq):
        return str(irq.number * 37 % node.ncpus)
    return irq.cpus
