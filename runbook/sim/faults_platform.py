"""The faults of the GPU-health, platform, firmware, OS-setting, storage and
burn-in checks (part of the fault menu, see faults.py). A GPU fault takes the
GPU as `gpuN`; storage faults a target address
or a mount point."""

from __future__ import annotations

from .faults import Fault, FaultError

DRIFT_BIOS = ("1.8", "03/09/2023")
DRIFT_VBIOS = "95.02.3C.00.01"
VENDOR_MEMLOCK = "/etc/security/limits.d/99-vendor-hpc.conf"


def _gpu(node, target: str):
    idx = target[3:] if target.startswith("gpu") else target
    if not idx.isdigit() or int(idx) >= len(node.platform.gpus):
        raise FaultError(f"{node.name} has no GPU {target!r} (gpu0..gpu{len(node.platform.gpus) - 1})")
    return node.platform.gpus[int(idx)]


def _xid_line(node, gpu_index: int, text: str) -> str:
    bus = node.gpus[gpu_index].bus.rsplit(".", 1)[0]
    return f"NVRM: Xid (PCI:0000:{bus}): {text}"


def gpu_ecc_uncorrectable(cluster, node, target):
    """A double-bit DRAM error: counted, a row remap pending until the next reset, Xid 48 logged."""
    gpu = _gpu(node, target)
    gpu.dram_uncorrectable += 2
    gpu.dram_uncorrectable_aggregate += 2
    gpu.remapped_uncorrectable += 1
    gpu.remap_pending = True
    node.platform.kernel_log.append(
        _xid_line(
            node,
            gpu.index,
            "48, pid='<unknown>', name=<unknown>, "
            "An uncorrectable double bit error (DBE) has been "
            "detected on GPU in the framebuffer at physAddr "
            "0x2f5e3c000.",
        )
    )


def gpu_xid_79(cluster, node, target):
    gpu = _gpu(node, target)
    node.platform.kernel_log.append(
        _xid_line(node, gpu.index, "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    )


def gpu_throttled_power(cluster, node, target):
    """The board's external power brake asserted (a PSU lost, BMC power capping): HW slowdown at idle."""
    gpu = _gpu(node, target)
    gpu.event_reasons |= 0x8 | 0x80  # HW Slowdown + HW Power Brake Slowdown


def gpu_power_capped(cluster, node, target):
    """Someone ran `nvidia-smi -pl 250`: lower than the design until reset or reboot."""
    for gpu in node.platform.gpus if not target else [_gpu(node, target)]:
        gpu.power_limit_w = 250.0


def gpu_persistence_off(cluster, node, _):
    node.platform.persistenced = False
    for gpu in node.platform.gpus:
        gpu.persistence = False


def dcgm_fail_pcie(cluster, node, target):
    _gpu(node, target).dcgm_fail.append("pcie")


def gpu_bar1_small(cluster, node, _):
    """Above-4G decoding / Resizable BAR off in the BIOS: every GPU's BAR1 falls back to 256 MiB."""
    for gpu in node.platform.gpus:
        gpu.bar1_mib = 256


def gpu_vbios_drift(cluster, node, target):
    _gpu(node, target).vbios = DRIFT_VBIOS


def gpu_burn_faulty(cluster, node, target):
    _gpu(node, target).burn_faulty = True


def acs_enabled(cluster, node, _):
    """The BIOS left ACS on at the PCIe switch ports: P2P and GPUDirect detour through the root complex."""
    node.platform.acs_bios = 0x001D


def iommu_on(cluster, node, _):
    """Full DMA translation: intel_iommu=on without passthrough (the kernel line of another image)."""
    args = node.platform.kernel_args.replace(" iommu=pt", "") + " intel_iommu=on"
    node.platform.kernel_args = node.platform.kernel_args_next = args


def bios_drift(cluster, node, _):
    node.platform.bios_version, node.platform.bios_date = DRIFT_BIOS


def memlock_limited(cluster, node, _):
    """A vendor package drops a later limits.d file that overrides the site's unlimited memlock."""
    node.files[VENDOR_MEMLOCK] = (
        "# installed by hpc-vendor-tools\n"
        "*    soft    memlock    65536\n"
        "*    hard    memlock    65536\n"
        "root soft    memlock    65536\n"
        "root hard    memlock    65536\n"
    )


def tuned_wrong_profile(cluster, node, profile):
    node.platform.tuned_profile = profile or "balanced"


def storage_target_down(cluster, node, address):
    """A storage target that does not answer from this node."""
    from .platform import storage_targets

    known = [t["address"] for t in storage_targets(cluster.design)]
    address = address or (known[0] if known else "")
    if address not in known:
        raise FaultError(f"{address!r} is not a designed storage target ({', '.join(known)})")
    node.platform.storage_unreachable.append(address)


def storage_mount_missing(cluster, node, path):
    mounts = node.platform.mounts
    path = path or (mounts[-1].path if mounts else "")
    kept = [m for m in mounts if m.path != path]
    if len(kept) == len(mounts):
        raise FaultError(f"{node.name} has no designed mount {path!r}")
    node.platform.mounts = kept


def no_systemd(cluster, node, _):
    """An image without systemd as PID 1 (a container): long-running jobs start with setsid."""
    node.platform.systemd = False


C = ("compute",)
ALL = ("compute", "sm")
FAULTS = [
    Fault(
        "gpu_persistence_off",
        C,
        "",
        gpu_persistence_off,
        "persistence mode off, nvidia-persistenced disabled",
    ),
    Fault("gpu_power_capped", C, "", gpu_power_capped, "GPU power limit set to 250 W (design 350 W)"),
    Fault("gpu_throttled_power", C, "gpu6", gpu_throttled_power, "HW power brake slowdown asserted at idle"),
    Fault(
        "gpu_ecc_uncorrectable",
        C,
        "gpu3",
        gpu_ecc_uncorrectable,
        "a DRAM uncorrectable ECC error, row remap pending (Xid 48)",
    ),
    Fault("gpu_xid_79", C, "gpu5", gpu_xid_79, "Xid 79 in the kernel log: a GPU fell off the bus"),
    Fault("dcgm_fail_pcie", C, "gpu2", dcgm_fail_pcie, "DCGM's pcie test fails on one GPU"),
    Fault("gpu_bar1_small", C, "", gpu_bar1_small, "above-4G decoding off: BAR1 256 MiB"),
    Fault("gpu_vbios_drift", C, "gpu1", gpu_vbios_drift, "one GPU with another VBIOS"),
    Fault("gpu_burn_faulty", C, "gpu4", gpu_burn_faulty, "a GPU that computes wrong results under load"),
    Fault("acs_enabled", C, "", acs_enabled, "ACS redirection on at the PCIe switch ports"),
    Fault("iommu_on", ALL, "", iommu_on, "IOMMU in full translation mode (intel_iommu=on, no iommu=pt)"),
    Fault("bios_drift", ALL, "", bios_drift, "an older BIOS release"),
    Fault("memlock_limited", C, "", memlock_limited, "a limits.d file capping locked memory at 64 MiB"),
    Fault("tuned_wrong_profile", C, "", tuned_wrong_profile, "tuned profile balanced (powersave governor)"),
    Fault("storage_target_down", C, "", storage_target_down, "a storage target that does not answer"),
    Fault(
        "no_systemd", ALL, "", no_systemd, "no systemd on the node: no /run/systemd/system, no systemd-run"
    ),
    Fault("storage_mount_missing", C, "", storage_mount_missing, "a designed storage mount not mounted"),
]
