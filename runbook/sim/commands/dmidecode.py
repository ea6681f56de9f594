"""dmidecode -t memory / -t 17 / -t system / -t bios (layout of dmidecode 3.5, TAB-indented)."""

from __future__ import annotations

from .base import Ctx
from .firmware import bios_string, bios_text

PREAMBLE = "# dmidecode 3.5\nGetting SMBIOS data from sysfs.\nSMBIOS 3.3.0 present.\n\n"


def _array(node) -> str:
    return (
        "Handle 0x1000, DMI type 16, 23 bytes\nPhysical Memory Array\n"
        "\tLocation: System Board Or Motherboard\n\tUse: System Memory\n"
        "\tError Correction Type: Multi-bit ECC\n\tMaximum Capacity: 4 TB\n"
        "\tError Information Handle: Not Provided\n"
        f"\tNumber Of Devices: {len(node.dimms)}\n\n"
    )


def _device(i: int, d) -> str:
    head = f"Handle 0x{0x1100 + i:04X}, DMI type 17, 92 bytes\nMemory Device\n"
    common = "\tArray Handle: 0x1000\n\tError Information Handle: Not Provided\n"
    if not d.present:
        return (
            head + common + "\tTotal Width: Unknown\n\tData Width: Unknown\n\tSize: No Module Installed\n"
            "\tForm Factor: Unknown\n\tSet: None\n"
            f"\tLocator: {d.locator}\n\tBank Locator: {d.bank}\n\tType: Unknown\n\tType Detail: Unknown\n"
            "\tSpeed: Unknown\n\tManufacturer: Not Specified\n\tSerial Number: Not Specified\n"
            "\tAsset Tag: Not Specified\n\tPart Number: Not Specified\n\tRank: Unknown\n"
            "\tConfigured Memory Speed: Unknown\n\tMinimum Voltage: Unknown\n\tMaximum Voltage: Unknown\n"
            "\tConfigured Voltage: Unknown\n\n"
        )
    return (
        head + common + "\tTotal Width: 72 bits\n\tData Width: 64 bits\n"
        f"\tSize: {d.size_gb} GB\n\tForm Factor: DIMM\n\tSet: None\n"
        f"\tLocator: {d.locator}\n\tBank Locator: {d.bank}\n\tType: DDR4\n"
        "\tType Detail: Synchronous Registered (Buffered)\n\tSpeed: 3200 MT/s\n"
        f"\tManufacturer: Samsung\n\tSerial Number: {d.serial}\n\tAsset Tag: {d.locator}_AssetTag\n"
        f"\tPart Number: M393A{8 if d.size_gb == 64 else 4}G40BB4-CWE    \n\tRank: 2\n"
        "\tConfigured Memory Speed: 3200 MT/s\n\tMinimum Voltage: 1.2 V\n\tMaximum Voltage: 1.2 V\n"
        "\tConfigured Voltage: 1.2 V\n\tMemory Technology: DRAM\n"
        "\tMemory Operating Mode Capability: Volatile memory\n\tFirmware Version: Not Specified\n"
        "\tModule Manufacturer ID: Bank 1, Hex 0xCE\n\tModule Product ID: Unknown\n"
        "\tMemory Subsystem Controller Manufacturer ID: Unknown\n"
        "\tMemory Subsystem Controller Product ID: Unknown\n"
        f"\tNon-Volatile Size: None\n\tVolatile Size: {d.size_gb} GB\n\tCache Size: None\n"
        "\tLogical Size: None\n\n"
    )


def _system(node) -> str:
    return (
        "Handle 0x0001, DMI type 1, 27 bytes\nSystem Information\n\tManufacturer: Supermicro\n"
        f"\tProduct Name: {'SYS-421GE-TNRT' if node.gpus else 'SYS-110P-WTR'}\n\tVersion: 0123456789\n"
        f"\tSerial Number: S{node.kind[:1].upper()}{node.index:06d}\n"
        "\tWake-up Type: Power Switch\n\tSKU Number: To be filled by O.E.M.\n\tFamily: Family\n\n"
    )


def dmidecode(ctx: Ctx, args, io) -> int:
    types = []
    i = 0
    while i < len(args):
        if args[i] in ("-t", "--type") and i + 1 < len(args):
            types.append(args[i + 1])
            i += 2
            continue
        if args[i] == "-s" and i + 1 < len(args):
            key = args[i + 1]
            value = bios_string(ctx.node, key) or {
                "system-product-name": "SYS-421GE-TNRT" if ctx.node.gpus else "SYS-110P-WTR",
                "system-manufacturer": "Supermicro",
                "system-serial-number": f"S{ctx.node.kind[:1].upper()}{ctx.node.index:06d}",
            }.get(key)
            if value is None:
                io.err.write(f"Invalid string keyword: {key}\n")
                return 2
            io.out.write(value + "\n")
            return 0
        i += 1
    node = ctx.node
    body = ""
    for t in types or ["memory", "system"]:
        if t in ("memory", "16", "17"):
            if t != "17":
                body += _array(node)
            body += "".join(_device(k, d) for k, d in enumerate(node.dimms))
        elif t in ("system", "1"):
            body += _system(node)
        elif t in ("bios", "0"):
            body += bios_text(node)
        else:
            io.err.write(f"Invalid type keyword: {t}\n")
            return 2
    io.out.write(PREAMBLE + body)
    return 0
