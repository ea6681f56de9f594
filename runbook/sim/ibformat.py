"""Small shared pieces of InfiniBand tool output: rates, GUIDs, GIDs, device identity."""

from __future__ import annotations

FW = "20.39.1002"  # ConnectX-6 firmware of the seed site
CA_TYPE = "MT4123"  # ConnectX-6
VENDOR_PART = "4123"
PCI_DEVICE = "101b"

# ibstat "Rate" -> (ibstatus text, iblinkinfo width, per-lane speed, ibnetdiscover speed)
RATES = {
    200: ("200 Gb/sec (4X HDR)", "4X", "53.125 Gbps", "4xHDR"),
    100: ("100 Gb/sec (4X EDR)", "4X", "25.78125 Gbps", "4xEDR"),
}


def rate_text(rate: int) -> str:
    return RATES.get(rate, RATES[200])[0]


def link_width(rate: int) -> str:
    return RATES.get(rate, RATES[200])[1]


def lane_speed(rate: int) -> str:
    return RATES.get(rate, RATES[200])[2]


def disc_speed(rate: int) -> str:
    return RATES.get(rate, RATES[200])[3]


def colon_guid(guid: int) -> str:
    """b859:9f03:0010:0107 (ibv_devinfo / sysfs style)."""
    h = f"{guid:016x}"
    return ":".join(h[i : i + 4] for i in range(0, 16, 4))


def gid(guid: int) -> str:
    return "fe80:0000:0000:0000:" + colon_guid(guid)
