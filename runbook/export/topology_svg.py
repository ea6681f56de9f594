"""The GPU↔NIC topology of one node as a small inline SVG grid (data:
topology_view.py): rows the rail NICs, columns the GPUs, each cell the
`nvidia-smi topo -m` relation. Marked in colour *and* text, so it reads
printed in grey: a cell the verdict names as not designed is ✗ (the design's
relation in its tooltip); each GPU's nearest rail NIC is bold on green; a GPU
whose nearest NIC is not the one most hosts have nearest gets ≠ in its header."""

from __future__ import annotations

from html import escape

from .topology_view import TopoNode

CHAR_W, ROW, COL = 7, 16, 46
OK, NAMED, NEAREST, OFF = "#ffffff", "#ffcdd2", "#c8e6c9", "#ffe0b2"


def cell_text(node: TopoNode, dev: str, gpu: str) -> str:
    cell = node.cells.get((dev, gpu)) or "—"
    return f"✗{cell}" if (dev, gpu) in node.named else cell


def render_topology_svg(node: TopoNode, fleet: dict[str, str]) -> str:
    if not node.nics or not node.gpus:
        return ""
    label_w = 12 + CHAR_W * max(len(d) for d in node.nics)
    title = f"{node.host}: {node.status}" + (" — deviates" if node.deviates else " — as designed")
    width = max(label_w + COL * len(node.gpus) + 8, 12 + CHAR_W * len(title))
    height = 18 + ROW * (len(node.nics) + 1) + 6
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="topology" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="GPU to NIC topology of {escape(node.host)}" '
        f'font-family="DejaVu Sans Mono, monospace" font-size="11">',
        f'<text x="4" y="13" font-weight="bold">{escape(title)}</text>',
    ]
    for c, gpu in enumerate(node.gpus):
        off = gpu in node.off
        head = f"{gpu}≠" if off else gpu
        tip = (
            f"{node.host} {gpu}: nearest {', '.join(node.nearest.get(gpu, [])) or 'none'}; "
            f"most hosts: {fleet.get(gpu, '?')}"
        )
        fill = f' fill="{OFF}"' if off else ' fill="none"'
        bold = ' font-weight="bold"' if off else ""
        x = label_w + c * COL
        out.append(
            f'<g><title>{escape(tip)}</title><rect x="{x + 1}" y="19" width="{COL - 2}" height="{ROW - 2}"'
            f'{fill} stroke="none"/><text x="{x + 4}" y="{18 + ROW - 4}"'
            f"{bold}>{escape(head)}</text></g>"
        )
    for r, dev in enumerate(node.nics):
        y = 18 + ROW * (r + 1)
        out.append(f'<text x="{label_w - 6}" y="{y + ROW - 4}" text-anchor="end">{escape(dev)}</text>')
        for c, gpu in enumerate(node.gpus):
            x = label_w + c * COL
            named = (dev, gpu) in node.named
            near = dev in node.nearest.get(gpu, [])
            fill = NAMED if named else NEAREST if near else OK
            tip = f"{node.host} {dev} ↔ {gpu}: {node.cells.get((dev, gpu)) or 'not in the matrix'}"
            if named:
                tip += f" ({node.named[(dev, gpu)]} by the design)"
            if near:
                tip += f"; nearest rail NIC of {gpu}"
            weight = ' font-weight="bold"' if named or near else ""
            out.append(
                f'<g><title>{escape(tip)}</title><rect x="{x + 1}" y="{y + 1}" width="{COL - 2}" '
                f'height="{ROW - 2}" fill="{fill}" stroke="#9e9e9e"/><text x="{x + 4}" '
                f'y="{y + ROW - 4}"{weight}>{escape(cell_text(node, dev, gpu))}</text></g>'
            )
    out.append("</svg>")
    return "".join(out)
