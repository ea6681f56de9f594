"""The rail cabling picture as inline SVG: one row per host, one column per IB
port (device, PCI address, the leaf most hosts reach on it), each cell the leaf
and switch port it reaches. A link the verdict names as wrong is marked with
✗ and the designed leaf, a link a link-health step names slow or erroring with
▼ (the steps in its tooltip), in colour *and* in text, so it reads printed in grey."""

from __future__ import annotations

from html import escape

from .rail_view import RailPicture

CELL_W, ROW, HEAD = 96, 18, 46
CHAR_W = 7
OK, WRONG, MISSING, SLOW = "#e8f5e9", "#ffcdd2", "#ffe0b2", "#ffab91"


def cell_text(link) -> str:
    slow = "▼ " if link.slow else ""
    if not link.leaf:
        return f"✗ {slow}not on a switch" if link.wrong else f"{slow}not on a switch"
    text = f"{slow}{link.leaf}:{link.port}"
    if link.wrong:
        text = f"✗ {text}" + (f" ≠ {link.expected}" if link.expected else "")
    return text


def tooltip(host: str, link) -> str:
    tip = f"{host} {link.dev}: {cell_text(link)}"
    return tip + (f" — slow or erroring in {', '.join(link.slow)}" if link.slow else "")


def render_rail_svg(pic: RailPicture) -> str:
    if not pic.rows:
        return ""
    hosts = list(pic.rows)
    label_w = 12 + CHAR_W * max(len(h) for h in hosts)
    widths = [
        max(
            CELL_W,
            10 + CHAR_W * max([len(cell_text(r[d])) for r in pic.rows.values() if d in r] + [len(d), 12]),
        )
        for d in pic.devices
    ]
    width = label_w + sum(widths) + 8
    height = HEAD + ROW * len(hosts) + 8
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rails" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="rail cabling: hosts by ports, leaf reached" '
        f'font-family="DejaVu Sans Mono, monospace" font-size="11">'
    ]
    x = label_w
    for dev, w in zip(pic.devices, widths):
        pci = next((r[dev].pci for r in pic.rows.values() if dev in r and r[dev].pci), "")
        out.append(f'<text x="{x + 4}" y="12">{escape(dev)}</text>')
        out.append(f'<text x="{x + 4}" y="25" fill="#555">{escape(pci)}</text>')
        out.append(f'<text x="{x + 4}" y="38" fill="#555">→ {escape(pic.rail_leaf(dev) or "?")}</text>')
        x += w
    for r, host in enumerate(hosts):
        y = HEAD + r * ROW
        out.append(f'<text x="{label_w - 6}" y="{y + ROW - 5}" text-anchor="end">{escape(host)}</text>')
        x = label_w
        for dev, w in zip(pic.devices, widths):
            link = pic.rows[host].get(dev)
            if link is not None:
                fill = WRONG if link.wrong else SLOW if link.slow else (MISSING if not link.leaf else OK)
                tip = tooltip(host, link)
                weight = ' font-weight="bold"' if link.wrong or link.slow else ""
                out.append(
                    f'<g><title>{escape(tip)}</title><rect x="{x + 1}" y="{y + 1}" width="{w - 2}" '
                    f'height="{ROW - 2}" fill="{fill}" stroke="#9e9e9e"/>'
                    f'<text x="{x + 4}" y="{y + ROW - 5}"{weight}>{escape(cell_text(link))}</text></g>'
                )
            x += w
    out.append("</svg>")
    return "".join(out)
