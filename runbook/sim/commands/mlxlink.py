"""`mlxlink -d DEV [-p PORT] [-c]`: a port's operational state, FEC and (with
-c) its physical counters and BER, in the layout of MFT 4.2x on a ConnectX
HCA (fixtures/real-outputs/mlxlink/: the CX6 IB-HDR sections, the
"Physical Counters and BER Info" section of the -c output). A marginal cable
(linkfaults.cable_ber) shows as a high raw BER, post-FEC errors and symbol
errors; a healthy HDR link has a low raw BER and no effective error."""

from __future__ import annotations

from .. import linkfaults
from .base import Ctx

KEY = 32  # width of the key column of this MFT generation
HDR_FEC = "RS-FEC - (544,514) + PLR"
NO_ERRORS_BER = "15E-255"  # what mlxlink prints for a BER of zero errors


def _line(key: str, value) -> str:
    return f"{key:<{KEY}}: {value}"


def _section(title: str, rows: list[tuple[str, object]]) -> list[str]:
    return [title, "-" * len(title), *(_line(k, v) for k, v in rows), ""]


def mlxlink(ctx: Ctx, args, io) -> int:
    dev, counters = None, False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--device") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if a in ("-p", "--port") and i + 1 < len(args):
            i += 2
            continue
        if a in ("-c", "--show_counters"):
            counters = True
        i += 1
    nic = ctx.node.nic(dev) if dev else None
    if nic is None:
        io.err.write(f'-E- Failed to open device: "{dev}", No such file or directory\n')
        return 1
    st = ctx.fabric.status(ctx.node, nic)
    up = st.phys == "LinkUp"
    ib = st.layer == "InfiniBand"
    speed = (
        ("IB-HDR" if nic.rate >= 200 else "IB-HDR100" if nic.rate >= 100 else "IB-EDR")
        if ib
        else f"{nic.rate}G"
    )
    out = [""]
    out += _section(
        "Operational Info",
        [
            ("State", "Active" if up else "Disable"),
            ("Physical state", "LinkUp" if up else "Polling"),
            ("Speed", speed if up else "N/A"),
            ("Width", "4x" if up else "N/A"),
            ("FEC", HDR_FEC if up else "N/A"),
            ("Loopback Mode", "No Loopback"),
            ("Auto Negotiation", "ON"),
        ],
    )
    out += _section(
        "Supported Info",
        [
            ("Enabled Link Speed", "0x00000075 (HDR,EDR,FDR,QDR,SDR)"),
            ("Supported Cable Speed", "0x0000007f (HDR,EDR,FDR,FDR10,QDR,DDR,SDR)"),
        ],
    )
    bad = nic.marginal
    out += _section(
        "Troubleshooting Info",
        [
            ("Status Opcode", 0),
            ("Group Opcode", "N/A"),
            (
                "Recommendation",
                "Bad signal integrity - Check cables and connectors" if bad else "No issue was observed",
            ),
        ],
    )
    out += _section(
        "Tool Information",
        [("Firmware Version", "28.39.1002"), ("amBER Version", "3.2"), ("MFT Version", "mft 4.26.1-3")],
    )
    if counters:
        if bad:
            rows = [
                ("Effective Physical Errors", 212),
                ("Effective Physical BER", "2E-12"),
                ("Raw Physical Errors Per Lane", "9081235,8123406,7734022,9320118"),
                ("Raw Physical BER", "3E-5"),
                ("Link Down Counter", 0),
                ("Link Error Recovery Counter", linkfaults.BER_RECOVERIES),
                ("Symbol Errors", linkfaults.BER_SYMBOL_ERRORS),
                ("Symbol BER", "8E-13"),
            ]
        else:
            rows = [
                ("Effective Physical Errors", 0),
                ("Effective Physical BER", NO_ERRORS_BER),
                ("Raw Physical Errors Per Lane", "112,97,143,88"),
                ("Raw Physical BER", "1E-12"),
                ("Link Down Counter", 0),
                ("Link Error Recovery Counter", 0),
                ("Symbol Errors", 0),
                ("Symbol BER", NO_ERRORS_BER),
            ]
        out += _section("Physical Counters and BER Info", [("Time Since Last Clear [Min]", "4213.7"), *rows])
    io.out.write("\n".join(out))
    return 0


COMMANDS = {"mlxlink": mlxlink}
