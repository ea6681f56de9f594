"""Per-node state behind the GPU-health, platform, firmware, OS-setting, storage
and burn-in checks: what `nvidia-smi -q`, `dcgmi diag`, `nvbandwidth`,
`gpu_burn`, the kernel log, `lspci` ACS, `/proc/cmdline`, `mlxfwmanager`,
`dmidecode -t bios`, `ulimit -l`, `tuned-adm`, `ping` and `/proc/mounts` show.

Plain dataclasses (persisted with the node, see persist.py). A fresh node is
built from the design, so it is compliant; the faults in faults_platform.py
change these records, the commands read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .design import Design

# The platform values the design does not carry (the seed servers' own).
ACS_DESIGNED = 0x0000  # every ACS control bit off on the PCIe switch ports (BIOS setting)
ACS_BIOS_DEFAULT = (
    0x001D  # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+ (a BIOS default, as in real lspci output)
)
DEFAULT_MEMLOCK_KB = 8192  # RHEL 9 / systemd's default locked-memory limit when nothing raises it


@dataclass
class GpuHealth:
    """What the driver reports about one GPU beyond its PCI link."""

    index: int
    persistence: bool = True
    power_limit_w: float = 350.0
    default_power_limit_w: float = 350.0
    event_reasons: int = 0x1  # clocks event reasons bitmask; 0x1 = GPU idle
    ecc_enabled: bool = True
    dram_uncorrectable: int = 0  # volatile (since the driver loaded)
    dram_uncorrectable_aggregate: int = 0
    dram_correctable: int = 0
    remapped_uncorrectable: int = 0
    remap_pending: bool = False
    remap_failure: bool = False
    bar1_mib: int = 65536
    vbios: str = ""
    burn_faulty: bool = False  # computes wrong results under load
    dcgm_fail: list[str] = field(default_factory=list)  # dcgmi diag tests this GPU fails


@dataclass
class Mount:
    path: str
    source: str
    fstype: str
    options: str = "rw,relatime"


@dataclass
class Platform:
    gpus: list[GpuHealth] = field(default_factory=list)
    kernel_log: list[str] = field(default_factory=list)  # extra kernel messages since boot (Xids ...)
    kernel_args: str = ""
    kernel_args_next: str = ""  # what grubby wrote for the next boot
    acs_bios: int = ACS_DESIGNED  # ACS control every switch port gets at boot
    acs_ctl: dict[str, int] = field(default_factory=dict)  # setpci changes since boot, by BDF
    bios_vendor: str = ""
    bios_version: str = ""
    bios_date: str = ""
    tuned_profile: str = ""
    persistenced: bool = True  # nvidia-persistenced enabled: persistence mode on at every boot
    storage_unreachable: list[str] = field(default_factory=list)  # target addresses that do not answer
    mounts: list[Mount] = field(default_factory=list)
    systemd: bool = True  # systemd is PID 1 (/run/systemd/system, systemd-run); False: a container image
    burn_runs: int = 0  # how many times gpu_burn was started (a resumed burn-in must not start it again)

    def acs(self, bdf: str) -> int:
        return self.acs_ctl.get(bdf, self.acs_bios)

    def boot(self) -> None:
        """What a reboot changes: the kernel command line grubby wrote, ACS back to the BIOS setting,
        GPU counters since boot and the kernel log cleared; driver settings back to defaults."""
        self.kernel_args = self.kernel_args_next
        self.acs_ctl = {}
        self.kernel_log = []
        for gpu in self.gpus:
            gpu.dram_uncorrectable = 0
            gpu.remap_pending = False  # a pending row remap is applied at the next GPU reset
            gpu.persistence = self.persistenced
            gpu.power_limit_w = gpu.default_power_limit_w  # `nvidia-smi -pl` does not survive a reboot


def _var(design: Design, kind: str, name: str, default: Any) -> Any:
    scope = design.sm_vars if kind == "sm" else design.compute_vars
    if name in scope:
        return scope[name]
    return design.all_vars.get(name, default)


def _options(mount: dict) -> str:
    """What the kernel lists for an NFS-over-RDMA mount (nfs(5): proto=rdma, port 20049)."""
    if not str(mount["fstype"]).startswith("nfs"):
        return "rw,relatime"
    server = str(mount["source"]).split(":", 1)[0]
    return (
        "rw,relatime,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=rdma,port=20049,"
        f"timeo=600,retrans=2,sec=sys,local_lock=none,addr={server}"
    )


def kernel_args(kernel: str, iommu_arg: str) -> str:
    return (
        f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{kernel} root=/dev/mapper/rl-root ro crashkernel=auto "
        f"{iommu_arg}".rstrip()
    )


def build_platform(design: Design, kind: str, kernel: str, gpus: int, cards: int) -> Platform:
    power = float(_var(design, kind, "gpu_power_limit_w", 350))
    args = kernel_args(kernel, str(_var(design, kind, "iommu_kernel_arg", "iommu=pt")))
    mounts = (
        [
            Mount(str(m["path"]), str(m["source"]), str(m["fstype"]), str(m.get("options") or _options(m)))
            for m in _var(design, kind, "storage_mounts", []) or []
        ]
        if kind == "compute"
        else []
    )
    return Platform(
        gpus=[
            GpuHealth(
                i,
                power_limit_w=power,
                default_power_limit_w=power,
                bar1_mib=int(_var(design, kind, "gpu_bar1_mib", 65536)),
                vbios=str(_var(design, kind, "gpu_vbios_version", "95.02.66.00.02")),
            )
            for i in range(gpus)
        ],
        kernel_args=args,
        kernel_args_next=args,
        bios_vendor=str(_var(design, kind, "bios_vendor", "American Megatrends International, LLC.")),
        bios_version=str(_var(design, kind, "bios_version", "2.1")),
        bios_date=str(_var(design, kind, "bios_release_date", "12/13/2023")),
        tuned_profile=str(_var(design, kind, "tuned_profile", "throughput-performance")),
        mounts=mounts,
    )


def attach_platform(design: Design, node: Any) -> None:
    """Give a freshly built node its platform state, its mount points and the burn-in tool."""
    node.platform = build_platform(
        design, node.kind, node.versions["kernel"], len(node.gpus), len(node.cards)
    )
    node.dirs.extend(m.path for m in node.platform.mounts)
    if node.gpus:
        burn = str(_var(design, node.kind, "gpu_burn_dir", "/opt/gpu-burn")).rstrip("/")
        node.files[f"{burn}/compare.ptx"] = (
            "//\n// Generated by NVIDIA NVVM Compiler\n//\n.version 8.4\n.target sm_89\n"
        )


def storage_targets(design: Design) -> list[dict[str, str]]:
    return [
        {"name": str(t["name"]), "address": str(t["address"])}
        for t in design.var("storage_targets", []) or []
    ]
