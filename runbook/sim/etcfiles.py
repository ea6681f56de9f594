"""Contents of the regular files of a simulated node (/etc, repo files, OpenSM config).

Managed files have the same content on every node (so `sha256sum` agrees) until
the etc_drift fault hand-edits one. Repo files point at the site's mirror only.
"""
from __future__ import annotations

import re

from .design import Design

MANAGED_CONTENT = {
    "/etc/chrony.conf": (
        "# managed by {site}: do not edit by hand\n"
        "server ntp1.{site}.internal iburst\n"
        "server ntp2.{site}.internal iburst\n"
        "driftfile /var/lib/chrony/drift\n"
        "makestep 1.0 3\n"
        "rtcsync\n"
        "logdir /var/log/chrony\n"
    ),
    "/etc/security/limits.d/90-rdma.conf": (
        "# managed by {site}: RDMA needs unlimited locked memory\n"
        "* soft memlock unlimited\n"
        "* hard memlock unlimited\n"
    ),
    "/etc/sysctl.d/90-gpu.conf": (
        "# managed by {site}\n"
        "kernel.numa_balancing = 0\n"
        "vm.zone_reclaim_mode = 0\n"
        "net.core.rmem_max = 268435456\n"
        "net.core.wmem_max = 268435456\n"
    ),
    "/etc/modprobe.d/mlx5.conf": (
        "# managed by {site}\n"
        "options mlx5_core log_num_mgm_entry_size=-1\n"
    ),
}


def os_release(pretty: str) -> str:
    m = re.match(r"(?P<name>.*?)\s+(?P<version>\d[\w.]*)(?:\s+\((?P<code>[^)]*)\))?$", pretty)
    name = m["name"] if m else pretty
    version_id = m["version"] if m else ""
    version = f"{version_id} ({m['code']})" if m and m["code"] else version_id
    ident = name.split()[0].lower()
    major = version_id.split(".")[0]
    return (
        f'NAME="{name}"\nVERSION="{version}"\nID="{ident}"\nID_LIKE="rhel centos fedora"\n'
        f'VERSION_ID="{version_id}"\nPLATFORM_ID="platform:el{major}"\nPRETTY_NAME="{pretty}"\n'
        f'ANSI_COLOR="0;32"\nLOGO="fedora-logo-icon"\nCPE_NAME="cpe:/o:{ident}:{ident}:{major}::baseos"\n'
        f'HOME_URL="https://rockylinux.org/"\nBUG_REPORT_URL="https://bugs.rockylinux.org/"\n'
        f'SUPPORT_END="2032-05-31"\nREDHAT_SUPPORT_PRODUCT="{name}"\n'
        f'REDHAT_SUPPORT_PRODUCT_VERSION="{version_id}"\n'
    )


def repo_file(mirror: str, major: str) -> str:
    mirror = mirror.rstrip("/") + "/"
    sections = [
        ("baseos", "BaseOS", f"rocky/{major}/BaseOS/x86_64/os/"),
        ("appstream", "AppStream", f"rocky/{major}/AppStream/x86_64/os/"),
        ("mlnx_ofed", "MLNX_OFED", f"mlnx_ofed/rhel{major}/x86_64/"),
        ("cuda", "CUDA", f"cuda/rhel{major}/x86_64/"),
    ]
    out = []
    for ident, title, path in sections:
        out.append(f"[{ident}]\nname=Site mirror - {title}\nbaseurl={mirror}{path}\n"
                   f"gpgcheck=1\nenabled=1\n")
    return "\n".join(out)


EXTERNAL_REPO = (
    "[cuda-rhel9-x86_64]\n"
    "name=cuda-rhel9-x86_64\n"
    "baseurl=https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64\n"
    "enabled=1\n"
    "gpgcheck=1\n"
    "gpgkey=https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub\n"
)


def managed_paths(design: Design) -> list[str]:
    return [str(p) for p in design.var("managed_etc_files", list(MANAGED_CONTENT))]


def managed_content(design: Design, path: str) -> str:
    site = str(design.var("site", "site"))
    template = MANAGED_CONTENT.get(path, "# managed by {site}\n")
    return template.format(site=site)


def etc_files(design: Design, name: str, gpus: bool = True) -> dict[str, str]:
    pretty = str(design.var("os_release", "Rocky Linux 9.3 (Blue Onyx)"))
    mirror = str(design.var("repo_mirror", "http://mirror.internal/")).rstrip("/") + "/"
    found = re.search(r"\d+", pretty)
    major = found.group(0) if found else "9"
    files = {
        "/etc/hostname": f"{name}\n",
        "/etc/os-release": os_release(pretty),
        "/etc/redhat-release": f"{pretty}\n",
        f"/etc/yum.repos.d/{design.var('site', 'site')}.repo": repo_file(
            str(design.var("repo_mirror", "http://mirror.internal/")), major),
        "/etc/default/grub": 'GRUB_CMDLINE_LINUX="crashkernel=auto iommu=pt"\n',
        "/etc/pip.conf": (f"[global]\nindex-url = {mirror}pypi/simple\n"
                          f"trusted-host = {mirror.split('//')[-1].strip('/')}\n"),
    }
    for path in managed_paths(design):
        files[path] = managed_content(design, path)
    if gpus:
        files["/etc/modules-load.d/nvidia-peermem.conf"] = "nvidia-peermem\n"
    return files


def sm_files(design: Design, name: str, priority: int) -> dict[str, str]:
    return {
        "/etc/opensm/opensm.conf": (
            "# OpenSM configuration (managed)\n"
            f"sm_priority {priority}\n"
            "partition_config_file /etc/opensm/partitions.conf\n"
            "routing_engine ftree\n"
            "log_file /var/log/opensm.log\n"
        ),
    }


def partitions_conf(compute_guids: list[int], storage_guids: list[int],
                    pkey_compute: str, pkey_storage: str, targets: list[int] = ()) -> str:
    """The design partitions.conf: compute ports full members of the compute
    PKey, storage ports (and the storage targets) of the storage PKey, never
    the other way round; every port a *limited* member of the default
    partition, only the SM's own port full (OpenSM's doc/partition-config.txt:
    `ALL=full` there would let every port reach every other one). mtu=5 (4096)
    for the IPoIB broadcast groups, so the storage IPoIB runs at 4092."""

    def members(guids: list[int]) -> str:
        if not guids:
            return " ;"
        return "\n" + ",\n".join(f"    0x{g:016x}=full" for g in guids) + ";"

    return (
        "# /etc/opensm/partitions.conf (managed) - compute and storage PKeys\n"
        "Default=0x7fff, ipoib : ALL=limited, SELF=full;\n"
        f"compute={pkey_compute}, ipoib, mtu=5, defmember=full :{members(compute_guids)}\n"
        f"storage={pkey_storage}, ipoib, mtu=5, defmember=full :{members(list(targets) + storage_guids)}\n"
    )
