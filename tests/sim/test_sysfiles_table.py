"""A node's computed files (sim/sysfiles.py) are served by a few dozen getters
that read the path they serve, not one closure per file: a port's PKey slots,
every CPU's cpufreq files and every IRQ's files share theirs, and each still
answers for its own path."""

from __future__ import annotations

import gc


def test_the_table_holds_few_functions_for_many_files(machine_of):
    fs = machine_of(2)("gpu01").fs
    table = fs._dynamic()
    distinct = {id(getter) for getter in table.values()} | {id(w) for w in fs._writers.values()}
    assert len(table) > 1500
    assert len(distinct) < len(table) / 5


def test_a_node_s_table_adds_few_objects_for_the_collector(machine_of):
    machines = machine_of(2)
    gc.collect()
    before = len(gc.get_objects())
    machines("gpu01").fs.listdir("/sys/class/infiniband")  # builds the table and the index
    gc.collect()  # tuples of names are no longer tracked after a collection
    assert len(gc.get_objects()) - before < 1200  # it was ~5,200 with a closure per file


async def test_shared_getters_answer_for_their_own_path(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    dev = gpu01.state.nics[0].dev
    pkeys = f"/sys/class/infiniband/{dev}/ports/1/pkeys"
    slots = gpu01.cluster.fabric.pkeys(gpu01.state, gpu01.state.nics[0])  # the port's PKey table
    assert slots
    out, _, _ = await sh(gpu01, f"cat {pkeys}/0 {pkeys}/{len(slots) - 1} {pkeys}/127")
    assert out.split() == [f"0x{slots[0]:04x}", f"0x{slots[-1]:04x}", "0x0000"]
    irqs = [irq.number for irq in gpu01.state.irqs[:2]]
    first, second = (f"/proc/irq/{n}/smp_affinity_list" for n in irqs)
    before, _, _ = await sh(gpu01, f"cat {second}")
    _, err, status = await sh(gpu01, f"echo 3 > {first}")
    assert (err, status) == ("", 0)
    out, _, _ = await sh(gpu01, f"cat {first} {second}")
    assert out == "3\n" + before  # the write changed its own IRQ only
    _, err, status = await sh(gpu01, f"echo zz > /proc/irq/{irqs[0]}/smp_affinity")
    assert status != 0 and "Invalid argument" in err


async def test_mst_start_keeps_the_table(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    table = gpu01.fs._dynamic()
    await sh(gpu01, "mst start")
    assert gpu01.state.mst_started
    assert gpu01.fs._dynamic() is table  # the paths do not depend on mst; no rebuild
    await sh(gpu01, "modprobe -r nvidia_peermem")
    assert gpu01.fs._dynamic() is not table  # a module's files go with it
