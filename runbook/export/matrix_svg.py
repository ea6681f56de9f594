"""The host x step matrix as inline SVG: one row per host, one column per
step, each cell a colour *and* a glyph, so it still reads printed in black and
white. Every name goes through html.escape."""

from __future__ import annotations

from html import escape

from .report_data import GLYPH, ReportView

# Fill colours are light so the dark glyph stays legible in colour and in grey.
FILL = {
    "pass": "#c8e6c9",
    "fail": "#ffcdd2",
    "unknown": "#ffe0b2",
    "skipped": "#e0e0e0",
    "waived": "#d1c4e9",
    "rolled_back": "#b3e5fc",
    "interrupted": "#fff9c4",
    "blocked": "#cfd8dc",
    "pending": "#f5f5f5",
    "running": "#bbdefb",
    "not_applicable": "#fafafa",
}
CELL, ROW = 22, 16
CHAR_W = 7
SIN_55 = 0.82  # step ids are written at -55 degrees above their column


def render_matrix_svg(view: ReportView) -> str:
    if not view.hosts or not view.step_ids:
        return ""
    label_w = 12 + CHAR_W * max(len(h) for h in view.hosts)
    longest_step = CHAR_W * max(len(s) for s in view.step_ids)
    header = int(16 + longest_step * SIN_55)
    width = int(label_w + CELL * len(view.step_ids) + longest_step * 0.6 + 10)
    height = header + ROW * len(view.hosts) + 8
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="matrix" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="hosts by steps status matrix" font-family="DejaVu Sans Mono, monospace" '
        f'font-size="11">'
    ]
    for c, sid in enumerate(view.step_ids):
        x = label_w + c * CELL + CELL / 2
        y = header - 6
        out.append(f'<text x="{x:.0f}" y="{y}" transform="rotate(-55 {x:.0f} {y})">{escape(sid)}</text>')
    for r, host in enumerate(view.hosts):
        y = header + r * ROW
        out.append(f'<text x="{label_w - 6}" y="{y + ROW - 4}" text-anchor="end">{escape(host)}</text>')
        for c, sid in enumerate(view.step_ids):
            verdict = view.verdicts.get(sid, {}).get(host)
            x = label_w + c * CELL
            if verdict is None:  # this host has no result for this step
                out.append(
                    f'<rect x="{x + 1}" y="{y + 1}" width="{CELL - 2}" height="{ROW - 2}" '
                    f'fill="none" stroke="#eeeeee"/>'
                )
                continue
            status = verdict.get("status", "")
            tip = f"{host} · {sid}: {status}" + (f" — {verdict['reason']}" if verdict.get("reason") else "")
            out.append(
                f"<g><title>{escape(tip)}</title>"
                f'<rect x="{x + 1}" y="{y + 1}" width="{CELL - 2}" height="{ROW - 2}" '
                f'fill="{FILL.get(status, "#ffffff")}" stroke="#9e9e9e"/>'
                f'<text x="{x + CELL / 2:.0f}" y="{y + ROW - 4}" text-anchor="middle">'
                f"{escape(GLYPH.get(status, '?'))}</text></g>"
            )
    out.append("</svg>")
    return "".join(out)


def render_legend() -> str:
    items = "".join(
        f'<span class="key"><span class="swatch" style="background:{FILL[s]}">'
        f"{escape(g)}</span> {escape(s.replace('_', ' '))}</span>"
        for s, g in GLYPH.items()
    )
    return f'<p class="legend">{items} <span class="key">blank: no result for this host</span></p>'
