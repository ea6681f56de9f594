"""lspci [-v|-vv|-vvv] [-nn|-n] [-D] [-k] [-d VENDOR:DEVICE] [-s [[DOMAIN:]BUS:]DEV.FN]"""

from __future__ import annotations

import re

from .. import hca
from ..pcidevices import PciDevice, devices
from . import pci_text
from .base import Ctx


def _matches_d(dev: PciDevice, spec: str) -> bool:
    parts = spec.split(":")
    vendor = parts[0] if parts else ""
    device = parts[1] if len(parts) > 1 else ""
    cls = parts[2] if len(parts) > 2 else ""
    return (
        (not vendor or vendor.lower() == dev.vendor_id)
        and (not device or device.lower() == dev.device_id)
        and (not cls or dev.cls_code.startswith(cls.lower()))
    )


def _matches_s(dev: PciDevice, spec: str) -> bool:
    spec = spec.lower()
    if spec.count(":") == 2:
        domain, spec = spec.split(":", 1)
        if domain.strip("0") and domain != "0000":
            return False
    bus, _, devfn = spec.rpartition(":")
    dbus, _, ddevfn = dev.bus.partition(":")
    if bus and int(bus, 16) != int(dbus, 16):
        return False
    if devfn:
        d, _, fn = devfn.partition(".")
        dd, _, dfn = ddevfn.partition(".")
        if d and int(d, 16) != int(dd, 16) or fn and int(fn) != int(dfn):
            return False
    return True


def lspci(ctx: Ctx, args, io) -> int:
    verbose, numeric, domain, kernel = 0, 0, False, False
    dspec = sspec = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "-s") and i + 1 < len(args):
            if a == "-d":
                dspec = args[i + 1]
            else:
                sspec = args[i + 1]
            i += 2
            continue
        if a.startswith("-d") and len(a) > 2:
            dspec = a[2:]
        elif a.startswith("-s") and len(a) > 2:
            sspec = a[2:]
        elif re.fullmatch(r"-[vnDkqt]+", a):
            verbose += a.count("v")
            numeric += a.count("n")
            domain = domain or "D" in a
            kernel = kernel or "k" in a
        else:
            io.err.write(f"lspci: invalid option -- '{a.lstrip('-')[:1]}'\n")
            return 2
        i += 1
    if dspec is not None and not re.fullmatch(
        r"[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,6})?)?", dspec
    ):
        io.err.write("lspci: -d: Invalid vendor ID\n")
        return 2
    node = ctx.node
    blocks = []
    for dev in devices(node):
        if dspec is not None and not _matches_d(dev, dspec):
            continue
        if sspec is not None and not _matches_s(dev, sspec):
            continue
        head = (
            dev.header(numeric >= 2)
            if numeric != 1
            else (
                f"{dev.bus} {dev.cls_code}: {dev.vendor_id}:{dev.device_id}"
                + (f" (rev {dev.rev})" if dev.rev else "")
            )
        )
        if domain:
            head = "0000:" + head
        if verbose:
            blocks.append(head + "\n" + _body(node, dev, verbose) + "\n")
        elif kernel and dev.driver:
            blocks.append(
                head
                + f"\n\tKernel driver in use: {dev.driver}\n"
                + (f"\tKernel modules: {dev.modules}\n" if dev.modules else "")
            )
        else:
            blocks.append(head + "\n")
    io.out.write("".join(blocks))
    return 0


def _body(node, dev: PciDevice, verbose: int) -> str:
    irq = 16 + int(dev.bus[:2], 16) % 200
    if dev.kind == "gpu":
        return pci_text.gpu_body(dev, irq)
    if dev.kind == "nic":
        card = node.card_of(dev.ref)
        serial = f"MT2{node.index:04d}X{card.index:05d}"
        return pci_text.nic_body(
            dev, irq, card.part, serial, card.ports > 1, hca.of_part(card.part).parts[card.ports][2]
        )
    if dev.kind == "bridge":
        return pci_text.other_body(dev, acs_lines(node.platform.acs(dev.bus)) if verbose >= 2 else "")
    return pci_text.other_body(dev)


# ACS control bits in register order (PCIe spec, ACS Control Register)
ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")


def acs_lines(ctl: int) -> str:
    """The ACS capability of a PCIe switch port as `lspci -vv` prints it."""
    cap = "SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+"
    flags = " ".join(f"{name}{'+' if ctl >> bit & 1 else '-'}" for bit, name in enumerate(ACS_BITS))
    return f"\tCapabilities: [170 v1] Access Control Services\n\t\tACSCap:\t{cap}\n\t\tACSCtl:\t{flags}\n"


COMMANDS = {"lspci": lspci}
