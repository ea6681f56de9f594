"""The computed files behind the platform checks: /proc/mounts (the storage
mounts as the kernel lists them) and every CPU's cpufreq governor, which the
active tuned profile sets (throughput-performance and its relatives pin
`performance`; balanced and powersave leave intel_pstate's `powersave`)."""

from __future__ import annotations

from collections.abc import Callable

PERFORMANCE_PROFILES = {
    "throughput-performance",
    "latency-performance",
    "network-latency",
    "network-throughput",
    "hpc-compute",
    "accelerator-performance",
}

BASE_MOUNTS = (
    "/dev/mapper/rl-root / xfs rw,relatime,attr2,inode64,logbufs=8,logbsize=32k,noquota 0 0\n"
    "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
    "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime,seclabel 0 0\n"
    "devtmpfs /dev devtmpfs rw,nosuid,seclabel,size=4096k,nr_inodes=1048576,mode=755,inode64 0 0\n"
    "tmpfs /run tmpfs rw,nosuid,nodev,seclabel,size=104857600k,nr_inodes=819200,mode=755,inode64 0 0\n"
    "/dev/nvme0n1p2 /boot xfs rw,relatime,seclabel,attr2,inode64,logbufs=8,logbsize=32k,noquota 0 0\n"
    "/dev/nvme0n1p1 /boot/efi vfat rw,relatime,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,"
    "shortname=winnt,errors=remount-ro 0 0\n"
)


def governor(profile: str) -> str:
    return "performance" if profile in PERFORMANCE_PROFILES else "powersave"


def _mounts(node) -> str:
    return BASE_MOUNTS + "".join(
        f"{m.source} {m.path} {m.fstype} {m.options} 0 0\n" for m in node.platform.mounts
    )


def platform_files(node) -> dict[str, Callable[[str], str]]:
    """{path: getter(path)}; the cpufreq getters are shared by every CPU (sysfiles.table)."""

    def scaling_governor(_path: str) -> str:
        return governor(node.platform.tuned_profile) + "\n"

    def scaling_driver(_path: str) -> str:
        return "intel_pstate\n"

    files: dict[str, Callable[[str], str]] = {"/proc/mounts": lambda _p: _mounts(node)}
    for cpu in range(node.ncpus):
        files[f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"] = scaling_governor
        files[f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_driver"] = scaling_driver
    return files
