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
        "# limits.conf(5): wildcard lines do not apply to root\n"
        "root soft memlock unlimited\n"
        "root hard memlock unlimited\n"
    ),
    "/etc/sysctl.d/90-gpu.conf": (
        "# managed by {site}\n"
        "kernel.numa_balancing = 0\n"
        "vm.zone_reclaim_mode = 0\n"
        "net.core.rmem_max = 268435456\n"
        "net.core.wmem_max = 268435456\n"
    ),
    "/etc/modprobe.d/mlx5.conf": ("# managed by {site}\noptions mlx5_core log_num_mgm_entry_size=-1\n"),
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
        out.append(f"[{ident}]\nname=Site mirror - {title}\nbaseurl={mirror}{path}\ngpgcheck=1\nenabled=1\n")
    return "\n".join(out)


def stock_rocky_repo(major: str) -> str:
    """The distribution's own rocky.repo as Rocky ships it (mirrorlist to
    mirrors.rockylinux.org, commented baseurl), with every section switched to
    enabled=0 by the site's install: present on every node, and no source."""
    sections = [
        ("baseos", "BaseOS"),
        ("baseos-debuginfo", "BaseOS - Debug"),
        ("appstream", "AppStream"),
        ("crb", "CRB"),
    ]
    out = []
    for ident, title in sections:
        repo = title.split(" ")[0] + ("-debug" if "Debug" in title else "")
        out.append(
            f"[{ident}]\nname=Rocky Linux $releasever - {title}\n"
            f"mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo={repo}-$releasever$rltype\n"
            f"#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/{title.split(' ')[0]}/$basearch/os/\n"
            f"gpgcheck=1\nenabled=0\ncountme=1\nmetadata_expire=6h\n"
            f"gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-{major}\n"
        )
    return "\n".join(out)


EXTERNAL_REPO = (
    "[cuda-rhel9-x86_64]\n"
    "name=cuda-rhel9-x86_64\n"
    "baseurl=https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64\n"
    "enabled=1\n"
    "gpgcheck=1\n"
    "gpgkey=https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub\n"
)


IRQBALANCE_STOCK = (
    "# irqbalance is a daemon process that distributes interrupts across\n"
    "# CPUS on SMP systems. The default is to rebalance once every 10\n"
    "# seconds. This is the environment file that is specified to systemd via the\n"
    "# EnvironmentFile key in the service unit file (or via whatever method the init\n"
    "# system you're using has).\n"
    "#\n"
    "# IRQBALANCE_ONESHOT\n"
    "#    After starting, wait for ten seconds, then look at the interrupt\n"
    "#    load and balance it once; after balancing exit and do not change\n"
    "#    it again.\n"
    "#\n"
    "#IRQBALANCE_ONESHOT=\n"
    "\n"
    "#\n"
    "# IRQBALANCE_ARGS\n"
    "#    Append any args here to the irqbalance daemon as documented in the man\n"
    "#    page.\n"
    "#\n"
    "#IRQBALANCE_ARGS=\n"
)

# irqbalance --policyscript: called with the device's sysfs path and the IRQ
# number, answers key=value lines; ban=true leaves the interrupt alone.
IRQBALANCE_POLICYSCRIPT = (
    "#!/bin/sh\n"
    "# irqbalance --policyscript (site standard): leave the Mellanox NICs' interrupts\n"
    "# where they were pinned (NUMA-local, see the runbook's irq-affinity step).\n"
    "# $1 = the device's sysfs path, $2 = the IRQ number\n"
    'case "$(basename "$(readlink -f "$1/driver")")" in\n'
    "  mlx5_core) echo ban=true ;;\n"
    "esac\n"
)


IRQ_AFFINITY_SCRIPT = (
    "#!/bin/sh\n"
    "# Pin every RDMA device's interrupts to the CPUs of the NUMA node the device\n"
    "# is attached to (the kernel's local_cpulist), looked up when it runs: IRQ\n"
    "# numbers change between boots. As set_irq_affinity_bynode.sh does, by node.\n"
    "for p in /sys/class/infiniband/*/device; do\n"
    "  cpus=$(cat $p/local_cpulist)\n"
    "  for i in $(ls $p/msi_irqs); do echo $cpus > /proc/irq/$i/smp_affinity_list; done\n"
    "done\n"
)


def irq_affinity_unit(name: str) -> str:
    return (
        "[Unit]\nDescription=Pin the NIC interrupts to their NUMA node (runbook irq-affinity)\n"
        "After=openibd.service irqbalance.service\n\n"
        f"[Service]\nType=oneshot\nExecStart=/bin/sh /usr/local/sbin/{name}.sh\nRemainAfterExit=yes\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )


def irq_affinity_files(design: Design) -> dict[str, str]:
    """The boot-time pinning the design asks for (irq_affinity_unit): script and unit."""
    name = str(design.var("irq_affinity_unit", "") or "")
    if not name:
        return {}
    return {
        f"/usr/local/sbin/{name}.sh": IRQ_AFFINITY_SCRIPT,
        f"/etc/systemd/system/{name}.service": irq_affinity_unit(name),
    }


def irqbalance_files(design: Design) -> dict[str, str]:
    """/etc/sysconfig/irqbalance as the design wants it (policy ban: the NICs
    banned by the policy script; policy stop: the stock file)."""
    script = str(design.var("irqbalance_policyscript", "") or "")
    if str(design.var("irqbalance_policy", "ban")) == "ban" and script:
        return {
            "/etc/sysconfig/irqbalance": IRQBALANCE_STOCK + f'IRQBALANCE_ARGS="--policyscript={script}"\n',
            script: IRQBALANCE_POLICYSCRIPT,
        }
    return {"/etc/sysconfig/irqbalance": IRQBALANCE_STOCK}


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
            str(design.var("repo_mirror", "http://mirror.internal/")), major
        ),
        "/etc/yum.repos.d/rocky.repo": stock_rocky_repo(major),
        "/etc/default/grub": 'GRUB_CMDLINE_LINUX="crashkernel=auto iommu=pt"\n',
        "/etc/pip.conf": (
            f"[global]\nindex-url = {mirror}pypi/simple\ntrusted-host = {mirror.split('//')[-1].strip('/')}\n"
        ),
    }
    for path in managed_paths(design):
        files[path] = managed_content(design, path)
    files.update(irqbalance_files(design))
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


def partitions_conf(
    compute_guids: list[int],
    storage_guids: list[int],
    pkey_compute: str,
    pkey_storage: str,
    targets: list[int] = (),
) -> str:
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
