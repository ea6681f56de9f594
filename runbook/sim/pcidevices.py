"""The PCI devices of a node, as lspci lists them (platform devices, the PCIe
switches, GPUs, ConnectX functions). A VPI function's class follows the port's
current protocol: Infiniband controller in IB mode, Ethernet controller in ETH mode."""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import IB, NodeState, PciLink


@dataclass
class PciDevice:
    bus: str  # "19:00.0"
    cls: str  # "3D controller"
    cls_code: str  # "0302"
    vendor_id: str
    device_id: str
    vendor: str
    name: str
    rev: str = ""
    kind: str = "other"  # gpu | nic | bridge | other
    numa: int = 0
    link: PciLink | None = None
    driver: str = ""
    modules: str = ""
    ref: object = None  # the Gpu / Nic record

    def header(self, numeric: bool) -> str:
        rev = f" (rev {self.rev})" if self.rev else ""
        if numeric:
            return (
                f"{self.bus} {self.cls} [{self.cls_code}]: {self.vendor} {self.name} "
                f"[{self.vendor_id}:{self.device_id}]{rev}"
            )
        return f"{self.bus} {self.cls}: {self.vendor} {self.name}{rev}"


PLATFORM = [
    ("00:00.0", "Host bridge", "0600", "8086", "09a2", "Intel Corporation", "Ice Lake Memory Map/VT-d", "04"),
    (
        "00:17.0",
        "SATA controller",
        "0106",
        "8086",
        "a182",
        "Intel Corporation",
        "C620 Series Chipset Family SATA Controller [AHCI mode]",
        "09",
    ),
    (
        "02:00.0",
        "Ethernet controller",
        "0200",
        "8086",
        "15ff",
        "Intel Corporation",
        "Ethernet Controller X710 for 10GBASE-T",
        "02",
    ),
    (
        "03:00.0",
        "Non-Volatile memory controller",
        "0108",
        "144d",
        "a80a",
        "Samsung Electronics Co Ltd",
        "NVMe SSD Controller PM9A1/PM9A3/980PRO",
        "",
    ),
    (
        "04:00.0",
        "VGA compatible controller",
        "0300",
        "1a03",
        "2000",
        "ASPEED Technology, Inc.",
        "ASPEED Graphics Family",
        "52",
    ),
]


def devices(node: NodeState) -> list[PciDevice]:
    out = [PciDevice(*p) for p in PLATFORM]
    switches: dict[str, int] = {}
    for gpu in node.gpus:
        out.append(
            PciDevice(
                gpu.bus,
                "3D controller",
                "0302",
                "10de",
                "26b9",
                "NVIDIA Corporation",
                "AD102GL [L40S]",
                "a1",
                "gpu",
                gpu.numa,
                gpu.link,
                "nvidia",
                "nvidiafb, nouveau, nvidia_drm, nvidia",
                gpu,
            )
        )
        if gpu.switch:
            switches.setdefault(gpu.switch, min(switches.get(gpu.switch, 0xFF), int(gpu.bus[:2], 16)))
    for nic in node.nics:
        ib = node.link_type(nic) == IB
        out.append(
            PciDevice(
                nic.bus,
                "Infiniband controller" if ib else "Ethernet controller",
                "0207" if ib else "0200",
                "15b3",
                node.hca(nic).pci_device,
                "Mellanox Technologies",
                node.hca(nic).pci_name,
                "",
                "nic",
                nic.numa,
                nic.link,
                "mlx5_core",
                "mlx5_core",
                nic,
            )
        )
        if nic.switch and nic.role == "compute":
            switches[nic.switch] = min(switches.get(nic.switch, 0xFF), int(nic.bus[:2], 16))
    for first in switches.values():
        numa = 0 if first < 0x80 else 1
        for bus, port in ((first - 2, "00.0"), (first - 1, "00.0"), (first - 1, "01.0")):
            out.append(
                PciDevice(
                    f"{bus:02x}:{port}",
                    "PCI bridge",
                    "0604",
                    "1000",
                    "c030",
                    "Broadcom / LSI",
                    "PEX88096 PCIe Gen 4 Switch",
                    "b0",
                    "bridge",
                    numa,
                    None,
                    "pcieport",
                    "",
                )
            )
    out.sort(key=lambda d: (int(d.bus[:2], 16), d.bus))
    return out
