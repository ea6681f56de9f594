"""The fields `modinfo` prints for the modules a runbook asks about (layout of
the MLNX_OFED modinfo in fixtures/real-outputs/modinfo-mlx5_core)."""

from __future__ import annotations

import hashlib


def _src(name: str, version: str) -> str:
    return hashlib.md5(f"{name}{version}".encode()).hexdigest()[:23].upper()


def describe(node, name: str) -> list[tuple[str, str]] | None:
    kernel = node.versions["kernel"]
    vermagic = f"{kernel} SMP preempt mod_unload modversions "
    if name == "mlx5_core":
        v = node.versions["ofed_kernel"]
        return [
            (
                "filename",
                f"/lib/modules/{kernel}/extra/mlnx-ofa_kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko",
            ),
            ("alias", "auxiliary:mlx5_core.eth-rep"),
            ("alias", "auxiliary:mlx5_core.eth"),
            ("basedon", "Korg 6.3-rc3"),
            ("version", v),
            ("license", "Dual BSD/GPL"),
            ("description", "Mellanox 5th generation network adapters (ConnectX series) core driver"),
            ("author", "Eli Cohen <eli@mellanox.com>"),
            ("srcversion", _src(name, v)),
            ("alias", "pci:v000015B3d0000101Bsv*sd*bc*sc*i*"),
            ("alias", "pci:v000015B3d00001021sv*sd*bc*sc*i*"),
            ("depends", "mlx_compat,mlxdevm,psample,tls,pci-hyperv-intf,mlxfw"),
            ("retpoline", "Y"),
            ("name", "mlx5_core"),
            ("vermagic", vermagic),
            ("parm", "prof_sel:profile selector. Valid range 0 - 3 (uint)"),
            ("parm", "probe_vf:probe VFs or not, 0 = not probe, 1 = probe. Default = 1 (bool)"),
        ]
    if name in ("nvidia", "nvidia_peermem", "nvidia_uvm") and node.gpus:
        v = node.versions["driver"]
        files = {
            "nvidia": "nvidia.ko.xz",
            "nvidia_peermem": "nvidia-peermem.ko.xz",
            "nvidia_uvm": "nvidia-uvm.ko.xz",
        }
        desc = {
            "nvidia": "NVIDIA kernel module",
            "nvidia_peermem": "NVIDIA GPU memory plug-in",
            "nvidia_uvm": "NVIDIA Unified Memory",
        }
        deps = {"nvidia": "drm", "nvidia_peermem": "nvidia,ib_core", "nvidia_uvm": "nvidia"}
        return [
            ("filename", f"/lib/modules/{kernel}/extra/{files[name]}"),
            ("version", v),
            ("license", "Linux and Dual MIT/GPL" if name == "nvidia_peermem" else "Dual MIT/GPL"),
            ("description", desc[name]),
            ("srcversion", _src(name, v)),
            ("depends", deps[name]),
            ("retpoline", "Y"),
            ("name", name),
            ("vermagic", vermagic),
        ]
    if name in ("mlx5_ib", "ib_ipoib", "ib_core", "ib_umad"):
        v = node.versions["ofed_kernel"]
        return [
            ("filename", f"/lib/modules/{kernel}/extra/mlnx-ofa_kernel/drivers/infiniband/{name}.ko"),
            ("version", v),
            ("license", "Dual BSD/GPL"),
            ("srcversion", _src(name, v)),
            ("depends", "mlx_compat,ib_core"),
            ("name", name),
            ("vermagic", vermagic),
        ]
    return None
