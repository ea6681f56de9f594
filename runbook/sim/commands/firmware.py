"""Firmware identity of a simulated node: `mlxfwmanager --query` (MFT 4.x layout,
one block per adapter), `flint -d DEV q` (FS4 layout) and the BIOS part of
`dmidecode -t bios` (type 0, dmidecode 3.5, TAB-indented)."""

from __future__ import annotations

from .base import Ctx

PXE, UEFI = "3.7.0201", "14.32.0012"


def _first_nic(node, card):
    return next((n for n in node.nics if n.card == card.index), None)


def _present_cards(node) -> list:
    """The cards on the PCI bus: a card gone from the bus (the nic_dead fault) has
    no function left, and the real tools list only what they find, numbered
    #1..#k in the order found: no gap, no trace of the missing slot."""
    return [c for c in node.cards if _first_nic(node, c) is not None]


def _device_name(node, card) -> str:
    nic = _first_nic(node, card)
    return f"/dev/mst/{node.hca(nic).mst_chip}_pciconf{card.index}" if node.mst_started else f"0000:{nic.bus}"


def mlxfwmanager(ctx: Ctx, args, io) -> int:
    node = ctx.node
    if not any(a in ("--query", "-q") for a in args):
        io.err.write("-E- No command given. Use --query to list the devices and their firmware.\n")
        return 1
    out = ["Querying Mellanox devices firmware ...", ""]
    for k, card in enumerate(_present_cards(node), start=1):
        nic = _first_nic(node, card)
        model = node.hca(nic)  # identity and firmware: the one model of hca.py and node.firmware
        out += [
            f"Device #{k}:",
            "----------",
            "",
            f"  Device Type:      {model.mst_type}",
            f"  Part Number:      {card.part[:-1]}_Ax",
            f"  Description:      {model.parts[card.ports][2].replace(', ', '; ')}",
            f"  PSID:             {card.psid}",
            f"  PCI Device Name:  {_device_name(node, card)}",
            f"  Base GUID:        {nic.guid:016x}",
            "  Versions:         Current        Available",
            f"     FW             {node.firmware(nic):<15}N/A",
            f"     PXE            {PXE:<15}N/A",
            f"     UEFI           {UEFI:<15}N/A",
            "",
            "  Status:           No matching image found",
            "",
        ]
    io.out.write("\n".join(out) + "\n")
    return 0


def flint(ctx: Ctx, args, io) -> int:
    node = ctx.node
    dev = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) else None
    if dev is None or not any(a in ("q", "query") for a in args):
        io.err.write("-E- Missing device or command. Usage: flint -d <device> q\n")
        return 1
    card = None
    for c in _present_cards(node):
        nics = [n for n in node.nics if n.card == c.index]
        names = {_device_name(node, c), f"{node.hca(nics[0]).mst_chip}_pciconf{c.index}"}
        for n in nics:
            names |= {n.dev, n.bus, f"0000:{n.bus}"}
        if dev in names:
            card = c
            break
    if card is None:
        io.err.write(f"-E- Cannot open Device: {dev}. No such file or directory. MFE_CR_ERROR\n")
        return 1
    nic = _first_nic(node, card)
    fw = node.firmware(nic)
    lines = [
        "Image type:            FS4",
        f"FW Version:            {fw}",
        "FW Release Date:       12.10.2023",
        f"Product Version:       {fw}",
        f"Rom Info:              type=UEFI version={UEFI} cpu=AMD64,AARCH64",
        f"                       type=PXE version={PXE} cpu=AMD64",
        "Description:           UID                GuidsNumber",
        f"Base GUID:             {nic.guid:016x}        {4 * card.ports}",
        f"Base MAC:              {nic.guid & 0xFFFFFFFFFFFF:012x}            {4 * card.ports}",
        "Image VSD:             N/A",
        "Device VSD:            N/A",
        f"PSID:                  {card.psid}",
        "Security Attributes:   N/A",
    ]
    io.out.write("\n".join(lines) + "\n")
    return 0


def bios_text(node) -> str:
    p = node.platform
    return (
        "Handle 0x0000, DMI type 0, 26 bytes\nBIOS Information\n"
        f"\tVendor: {p.bios_vendor}\n\tVersion: {p.bios_version}\n\tRelease Date: {p.bios_date}\n"
        "\tAddress: 0xF0000\n\tRuntime Size: 64 kB\n\tROM Size: 32 MB\n\tCharacteristics:\n"
        "\t\tPCI is supported\n\t\tBIOS is upgradeable\n\t\tBIOS shadowing is allowed\n"
        "\t\tBoot from CD is supported\n\t\tSelectable boot is supported\n\t\tBIOS ROM is socketed\n"
        "\t\tEDD is supported\n\t\tACPI is supported\n\t\tUSB legacy is supported\n"
        "\t\tBIOS boot specification is supported\n\t\tTargeted content distribution is supported\n"
        "\t\tUEFI is supported\n\tBIOS Revision: 5.27\n\n"
    )


def bios_string(node, key: str) -> str | None:
    p = node.platform
    return {
        "bios-vendor": p.bios_vendor,
        "bios-version": p.bios_version,
        "bios-release-date": p.bios_date,
    }.get(key)


COMMANDS = {"mlxfwmanager": mlxfwmanager, "flint": flint, "mstflint": flint}
